"""A no-op ``sengen build`` decides from the manifest alone (codegen.md §7): it loads neither the
STL front end nor the renderers, and anything that could change the output rebuilds."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sengen
from sengen.codegen import manifest
from sengen.runtime.objects.interface import INTERFACE

GOLDEN = Path(__file__).parent / "golden"

# Run as `sengen build` runs, then list what the process imported that a no-op must not.
NOOP_SCRIPT = """
import json, sys
from sengen.cli.main import main
code = main(sys.argv[1:])
heavy = ("lark", "jinja2", "sengen.stl.loader", "sengen.stl.model", "sengen.codegen.render")
print(json.dumps([code, sorted(m for m in heavy if m in sys.modules)]))
"""


def _copy_case(tmp_path: Path) -> Path:
    case = tmp_path / "case"
    shutil.copytree(GOLDEN / "classes", case)
    return case


def _build(case: Path, out: Path, **options: Any) -> sengen.GenerateResult:
    options.setdefault("settings", case / "settings.json")
    options.setdefault("include_paths", [case / "stl"])
    return sengen.generate([case / "stl"], output=out, **options)


def test_a_noop_build_imports_neither_the_front_end_nor_the_renderers(tmp_path: Path) -> None:
    case = _copy_case(tmp_path)
    args = ["build", "stl", "-I", "stl", "--settings", "settings.json", "--out", "gen"]

    def run() -> list[Any]:
        process = subprocess.run(
            [sys.executable, "-c", NOOP_SCRIPT, *args],
            cwd=case,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        result: list[Any] = json.loads(process.stdout.splitlines()[-1])
        return result

    code, loaded = run()
    assert code == 0 and "lark" in loaded  # the first build parses
    assert run() == [0, []]


def _edit_input(case: Path, out: Path) -> dict[str, Any]:
    stl = next((case / "stl").rglob("*.stl"))
    stl.write_text(stl.read_text() + "\n// appended\n")
    return {}


def _add_input(case: Path, out: Path) -> dict[str, Any]:
    (case / "stl" / "extra.stl").write_text("package extra;\nstruct E { a : u8 }\n")
    return {}


def _edit_settings(case: Path, out: Path) -> dict[str, Any]:
    settings = case / "settings.json"
    settings.write_text(settings.read_text() + "\n")
    return {}


def _edit_output(case: Path, out: Path) -> dict[str, Any]:
    generated = next(out.rglob("*.py"))
    generated.write_bytes(generated.read_bytes() + b"# mine\n")
    return {}


def _another_include(case: Path, out: Path) -> dict[str, Any]:
    (case / "more").mkdir()
    return {"include_paths": [case / "stl", case / "more"]}


def _an_option(case: Path, out: Path) -> dict[str, Any]:
    return {"mangling": False}


def _another_version(case: Path, out: Path) -> dict[str, Any]:
    return {"version": "99.0.0"}


def _another_generator(case: Path, out: Path) -> dict[str, Any]:
    return {"generator": "0" * 64}


def _another_interface(case: Path, out: Path) -> dict[str, Any]:
    return {"interface": INTERFACE + 1}


CHANGES: dict[str, Callable[[Path, Path], dict[str, Any]]] = {
    "input edited": _edit_input,
    "input added": _add_input,
    "settings edited": _edit_settings,
    "output edited": _edit_output,
    "include path": _another_include,
    "option": _an_option,
    "sengen version": _another_version,
    "generator code": _another_generator,
    "runtime interface": _another_interface,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_that_could_change_the_output_rebuilds(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, out = _copy_case(tmp_path), tmp_path / "gen"
    assert _build(case, out).ok
    assert _build(case, out).up_to_date
    options = CHANGES[change](case, out)
    if "version" in options:
        monkeypatch.setattr(manifest, "__version__", options.pop("version"))
    if "generator" in options:
        generator: str = options.pop("generator")
        monkeypatch.setattr(manifest, "generator_digest", lambda: generator)
    if "interface" in options:
        monkeypatch.setattr(manifest, "INTERFACE", options.pop("interface"))
    rebuilt = _build(case, out, **options)
    assert rebuilt.ok, [d.format() for d in rebuilt.diagnostics]
    assert not rebuilt.up_to_date
    assert _build(case, out, **options).up_to_date
