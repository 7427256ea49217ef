"""The runtime does not load the compiler: a process that only runs objects imports neither the STL
front end, the generator nor their libraries (lark, jinja2, black), nor the shell's
prompt_toolkit. Checked in a fresh process, where nothing else has loaded them yet.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sengen

FORBIDDEN_PACKAGES = ("lark", "jinja2", "black", "prompt_toolkit", "sengen.stl", "sengen.codegen")

STL = """package tiny;

enum Colour : u8 { red, green }

struct Point { x : f64, y : f64 }

class Marker
{
  var position : Point;
  var colour : Colour [static];
  fn moveBy(dx : f64, dy : f64) -> Point;
  event moved(to : Point);
}
"""

# Prints the loaded modules that belong to a forbidden package, after each step.
CHILD = """
import json, sys
forbidden = {forbidden!r}
def loaded():
    return sorted(
        name for name in sys.modules
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )
steps = {{}}
import sengen.runtime
steps["import sengen.runtime"] = loaded()
import gen.tiny
steps["import gen.tiny"] = loaded()
for name in sengen.runtime.__all__:
    getattr(sengen.runtime, name)
steps["every name of sengen.runtime.__all__"] = loaded()
print(json.dumps(steps))
"""


def test_runtime_and_generated_code_load_no_compiler(tmp_path: Path) -> None:
    (tmp_path / "stl" / "tiny").mkdir(parents=True)
    (tmp_path / "stl" / "tiny" / "tiny.stl").write_text(STL)
    result = sengen.generate([tmp_path / "stl"], output=tmp_path / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]

    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(forbidden=FORBIDDEN_PACKAGES)],
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    steps = json.loads(child.stdout)
    assert list(steps) == [
        "import sengen.runtime",
        "import gen.tiny",
        "every name of sengen.runtime.__all__",
    ]
    for step, modules in steps.items():
        assert modules == [], f"after {step}: {modules}"
