"""Regenerate sengen's own ``sen.kernel`` types into ``runtime/sen/kernel`` (checked in).

Run ``python idl/regenerate.py`` after editing the STL here; ``tests/test_idl.py`` fails while
the checked-in code differs from what this would write.
"""

from __future__ import annotations

import sys
from pathlib import Path

import sengen

IDL = Path(__file__).resolve().parent
RUNTIME = IDL.parent / "runtime"


def regenerate(check: bool = False) -> sengen.GenerateResult:
    """Build the IDL into the runtime package; ``check`` writes nothing."""
    return sengen.generate(
        [IDL],
        output=RUNTIME,
        include_paths=[IDL],
        settings=IDL / "codegen_settings.json",
        check=check,
        root_files=False,
    )


if __name__ == "__main__":
    result = regenerate()
    for diagnostic in result.diagnostics:
        print(diagnostic.format(), file=sys.stderr)
    for path in result.written:
        print(f"wrote {path}")
    sys.exit(0 if result.ok else 1)
