"""The two front doors: ``sengen`` (the compiler) and ``sengen.runtime`` (a running system).

Each package root names its public API three times: ``__all__``, ``_HOMES`` (where the lazy
``__getattr__`` loads each name from) and the imports under ``TYPE_CHECKING`` (what type checkers
see). The three must agree, and each name must be the object at its home. Generated code has a
door of its own, :mod:`sengen.runtime.abi`, versioned: a module generated for another version
fails at import with one line that says to run ``sengen build``.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import sengen
import sengen.errors
import sengen.runtime
import sengen.runtime.errors

ROOT = Path(__file__).resolve().parent.parent


def type_checking_imports(init: Path) -> dict[str, str]:
    """Name -> absolute module of every ``from M import name`` under ``if TYPE_CHECKING:``."""
    found: dict[str, str] = {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
                assert statement.module is not None and statement.level == 0
                for alias in statement.names:
                    assert alias.asname is None, ast.unparse(statement)
                    assert alias.name not in found, f"{alias.name} imported twice"
                    found[alias.name] = statement.module
    return found


def check_front_door(package: ModuleType, homes: dict[str, str], extra: set[str]) -> None:
    """``__all__`` = ``_HOMES`` keys (+ ``extra``, names defined in the root itself) = the
    TYPE_CHECKING imports, each from its home, and each name is the object at its home."""
    exported = list(package.__all__)
    assert len(exported) == len(set(exported)), "a name twice in __all__"
    assert set(exported) == set(homes) | extra
    assert package.__file__ is not None
    imported = type_checking_imports(Path(package.__file__))
    assert imported == homes, "the TYPE_CHECKING imports differ from _HOMES"
    for name, home in homes.items():
        assert getattr(package, name) is getattr(importlib.import_module(home), name), name


def test_runtime_front_door() -> None:
    prefix = "sengen.runtime."
    homes = {name: prefix + home for name, home in sengen.runtime._HOMES.items()}
    check_front_door(sengen.runtime, homes, set())


def test_compiler_front_door() -> None:
    check_front_door(sengen, dict(sengen._HOMES), {"__version__"})


def test_one_error_root_through_every_door() -> None:
    root = sengen.runtime.errors.SengenError
    assert sengen.SengenError is root
    assert sengen.errors.SengenError is root
    assert sengen.runtime.SengenError is root


def _build(folder: Path) -> Path:
    """A one-file STL package built into ``folder/gen``; its generated module's path."""
    stl = folder / "stl" / "tiny"
    stl.mkdir(parents=True)
    (stl / "tiny.stl").write_text("package tiny;\nstruct Point { x : f64 }\n")
    result = sengen.generate([folder / "stl"], output=folder / "gen", format=False)
    assert result.ok, [d.format() for d in result.diagnostics]
    checked = [p for p in (folder / "gen").rglob("*.py") if "_rt.check_interface(" in p.read_text()]
    assert len(checked) == 1, checked
    return checked[0]


def _import(folder: Path, module: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_generated_module_for_another_interface_fails_with_one_line(tmp_path: Path) -> None:
    from sengen.runtime.abi import INTERFACE

    generated = _build(tmp_path)
    module = ".".join(generated.relative_to(tmp_path).with_suffix("").parts)
    assert _import(tmp_path, module).returncode == 0  # as generated, it imports

    text = generated.read_text()
    line = f"_rt.check_interface({INTERFACE}, __name__)"
    assert text.count(line) == 1, "the generated module no longer checks its interface"
    generated.write_text(text.replace(line, f"_rt.check_interface({INTERFACE + 1}, __name__)"))
    result = _import(tmp_path, module)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    # The exception's message is one line: the module, the versions, the command to run.
    assert re.fullmatch(
        rf"sengen\.runtime\.abi\.InterfaceMismatch: {re.escape(module)} was generated for "
        rf"interface {INTERFACE + 1} of sengen\.runtime, this sengen has interface {INTERFACE}: "
        r"run `sengen build` again",
        last,
    ), last


def test_interface_mismatch_is_a_sengen_error_and_an_import_error() -> None:
    from sengen.runtime.abi import INTERFACE, InterfaceMismatch, check_interface

    check_interface(INTERFACE, "gen.tiny")
    with pytest.raises(InterfaceMismatch) as caught:
        check_interface(INTERFACE - 1, "gen.tiny")
    assert isinstance(caught.value, sengen.SengenError)
    assert isinstance(caught.value, ImportError)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("gen.tiny ")
    assert str(caught.value).endswith("run `sengen build` again")
