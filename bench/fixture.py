"""The generated fixture every benchmark builds on: ``bench/stl/bench_types``, generated below a
temporary folder under a root package of the benchmark's own (one registry scope each)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURE = REPO_ROOT / "bench" / "stl"
FIXTURE_PACKAGE = "bench_types"


def generate_fixture(base: Path, root: str) -> Any:
    """Generate the fixture into ``base/root`` and import its module (typed as Any: the
    generated code does not exist when mypy checks the benchmarks)."""
    import sengen

    result = sengen.generate(
        [FIXTURE / FIXTURE_PACKAGE], output=base / root, include_paths=[FIXTURE]
    )
    errors = [d.format() for d in result.diagnostics if d.is_error]
    if errors or not result.ok:
        raise SystemExit(f"bench: the fixture does not build: {errors}")
    sys.path.insert(0, str(base))
    importlib.invalidate_caches()
    return importlib.import_module(f"{root}.{FIXTURE_PACKAGE}.bench")
