"""``sengen build``: golden outputs, determinism, incremental builds, writing rules and the CLI.

Golden cases live in ``tests/golden/<case>/``: ``stl/`` holds the inputs (also the include path),
``settings.json`` the optional codegen settings, and ``expected/`` the generated root package.
``SENGEN_UPDATE_GOLDEN=1`` rewrites the expected trees after a deliberate change.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sengen
from sengen.codegen.builder import MANIFEST

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "stl").is_dir())
# Cases whose output is known to be wrong, with the reason; an entry here must fail.
KNOWN_FAILURES: dict[str, str] = {}


def _build(case: Path, output: Path, **options: Any) -> sengen.GenerateResult:
    settings = case / "settings.json"
    return sengen.generate(
        [case / "stl"],
        output=output,
        include_paths=[case / "stl"],
        settings=settings if settings.exists() else None,
        **options,
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str, tmp_path: Path) -> None:
    if case in KNOWN_FAILURES:
        pytest.xfail(KNOWN_FAILURES[case])
    folder = GOLDEN / case
    result = _build(folder, tmp_path / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    produced = _tree(tmp_path / "gen")
    expected_root = folder / "expected"
    if os.environ.get("SENGEN_UPDATE_GOLDEN") == "1":
        shutil.rmtree(expected_root, ignore_errors=True)
        shutil.copytree(tmp_path / "gen", expected_root, ignore=shutil.ignore_patterns(MANIFEST))
    expected = _tree(expected_root)
    assert sorted(produced) == sorted(expected)
    for name, data in expected.items():
        if produced[name] == data:
            continue
        if name.endswith(".py") and ast.dump(ast.parse(produced[name])) == ast.dump(
            ast.parse(data)
        ):
            pytest.fail(f"{case}/{name}: same code, other layout (did the layout rules change?)")
        pytest.fail(
            f"{case}/{name} differs from the golden file; rerun with SENGEN_UPDATE_GOLDEN=1"
        )


def test_warnings_are_reported_at_the_stl_location(tmp_path: Path) -> None:
    result = _build(GOLDEN / "cross_package", tmp_path / "gen")
    warnings = sorted(d.format_header() for d in result.diagnostics)
    assert any(
        "app.stl:11:41: warning: 'lambda' is reserved in Python (keyword)" in w for w in warnings
    ), warnings
    assert any("'property' is reserved in Python (builtin)" in w for w in warnings)


def _cli(*args: str, cwd: Path, seed: str = "0") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    return subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_two_builds_in_two_folders_are_byte_identical(tmp_path: Path) -> None:
    """Different folders, working directories and hash seeds give the same bytes."""
    sources = [str(GOLDEN / case / "stl") for case in ("value_types", "classes")]
    first = tmp_path / "a" / "gen"
    second = tmp_path / "b" / "deeper" / "gen"
    second.parent.mkdir(parents=True)
    run_a = _cli("build", *sources, "--out", str(first), cwd=tmp_path, seed="1")
    run_b = _cli("build", *sources, "--out", "gen", cwd=second.parent, seed="31337")
    assert run_a.returncode == 0, run_a.stderr
    assert run_b.returncode == 0, run_b.stderr
    tree_a, tree_b = _tree(first), _tree(second)
    assert len(tree_a) > 3
    assert tree_a == tree_b
    for name, data in tree_a.items():
        assert str(tmp_path).encode() not in data, f"{name} holds an absolute path"


def test_incremental_build_rewrites_only_what_changed(tmp_path: Path) -> None:
    case = tmp_path / "case"
    shutil.copytree(GOLDEN / "cross_package", case)
    out = tmp_path / "gen"
    first = _build(case, out)
    assert first.ok and first.written and not first.up_to_date
    times = {p: p.stat().st_mtime_ns for p in out.rglob("*.py")}

    again = _build(case, out)
    assert again.up_to_date and not again.written and not again.removed
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.py")} == times

    common = case / "stl" / "base" / "common.stl"
    common.write_text(common.read_text().replace("struct Id", "// Identity.\nstruct Id"))
    edited = _build(case, out)
    assert not edited.up_to_date
    assert [p.relative_to(out).as_posix() for p in edited.written] == ["base/common/common.py"]
    assert (out / "app" / "app.py").stat().st_mtime_ns == times[out / "app" / "app.py"]

    (case / "stl" / "app" / "app.stl").unlink()
    removed = _build(case, out)
    assert [p.relative_to(out).as_posix() for p in removed.removed] == [
        "app/__init__.py",
        "app/app.py",
    ]
    assert not (out / "app" / "app.py").exists()


def test_check_reports_out_of_date_without_writing(tmp_path: Path) -> None:
    stl = GOLDEN / "classes" / "stl"
    settings = GOLDEN / "classes" / "settings.json"
    args = ("build", str(stl), "--out", "gen", "--settings", str(settings), "--check")
    stale = _cli(*args, cwd=tmp_path)
    assert stale.returncode == 1
    assert "out of date" in stale.stderr
    assert not (tmp_path / "gen").exists()
    assert _cli(*args[:-1], cwd=tmp_path).returncode == 0
    assert _cli(*args, cwd=tmp_path).returncode == 0


def test_a_file_not_generated_by_sengen_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    (out / "zoo").mkdir(parents=True)
    mine = out / "zoo" / "animals.py"
    mine.write_text("# my own code\n")
    result = _build(GOLDEN / "classes", out)
    assert not result.ok
    assert any("refusing to overwrite" in d.message for d in result.diagnostics)
    assert mine.read_text() == "# my own code\n"
    assert not (out / "__init__.py").exists(), "nothing is written when there is an error"


def test_errors_write_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.stl"
    bad.write_text("package p;\nstruct S { a : Missing }\n")
    result = sengen.generate([bad], output=tmp_path / "gen")
    assert not result.ok
    assert not (tmp_path / "gen").exists()


def test_an_optional_of_an_optional_is_refused(tmp_path: Path) -> None:
    stl = tmp_path / "p.stl"
    stl.write_text("package p;\noptional<u8> A;\noptional<A> X;\n")
    result = sengen.generate([stl], output=tmp_path / "gen")
    messages = [d.message for d in result.diagnostics if d.is_error]
    assert messages == ["optional 'p.X' of an optional cannot be represented in Python"]


def test_python_name_collisions_name_both_origins(tmp_path: Path) -> None:
    stl = tmp_path / "a.stl"
    stl.write_text("package p;\nclass C\n{\n  var fooBar : i32;\n  var fooBAR : i32;\n}\n")
    result = sengen.generate([stl], output=tmp_path / "gen")
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors, result.diagnostics
    assert "Python name 'foo_bar' in class 'p.C' is produced by property 'fooBar'" in (
        errors[0].message
    )
    assert "property 'fooBAR'" in errors[0].message


@pytest.mark.parametrize("name", ["class", "my-gen", "9gen"])
def test_output_must_be_a_package_name(name: str, tmp_path: Path) -> None:
    stl = GOLDEN / "classes" / "stl"
    run = _cli("build", str(stl), "--out", name, cwd=tmp_path)
    assert run.returncode == 2
    assert "must be named like a Python package" in run.stderr


def test_build_without_out_is_a_usage_error(tmp_path: Path) -> None:
    run = _cli("build", str(GOLDEN / "classes" / "stl"), cwd=tmp_path)
    assert run.returncode == 2
    assert "--out" in run.stderr


def test_project_build_and_docs(tmp_path: Path) -> None:
    shutil.copytree(GOLDEN / "cross_package" / "stl", tmp_path / "stl")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sengen]\nsources = ["stl"]\ninclude-paths = ["stl"]\noutput = "gen"\n'
        'docs = "docs/stl.md"\n'
    )
    run = _cli("build", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "gen" / "app" / "app.py").read_text().startswith("# Generated by sengen")
    docs = (tmp_path / "docs" / "stl.md").read_text()
    assert "app.Sensor" in docs and "```mermaid" in docs
    imported = subprocess.run(
        [sys.executable, "-c", "import gen.app as a; print(a.Sensor.META.qualified_name)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert imported.stdout.strip() == "app.Sensor", imported.stderr


def test_warnings_as_errors(tmp_path: Path) -> None:
    run = _cli(
        "build",
        str(GOLDEN / "cross_package" / "stl"),
        "--out",
        "gen",
        "-I",
        str(GOLDEN / "cross_package" / "stl"),
        "--warnings-as-errors",
        cwd=tmp_path,
    )
    assert run.returncode == 1
    assert "is reserved in Python" in run.stderr


def test_check_reports_each_collision_once(tmp_path: Path) -> None:
    stl = tmp_path / "a.stl"
    stl.write_text("package p;\nclass C\n{\n  var fooBar : i32;\n  var fooBAR : i32;\n}\n")
    errors = [d for d in sengen.check([stl]) if d.is_error]
    assert [(d.line, d.column) for d in errors] == [(5, 7)]
    assert errors[0].notes[0].line == 4


def test_external_packages_are_imported_not_generated(tmp_path: Path) -> None:
    stl = GOLDEN / "cross_package" / "stl"
    base = sengen.generate([stl / "base"], output=tmp_path / "ext", include_paths=[stl])
    assert base.ok
    app = sengen.generate(
        [stl / "app"],
        output=tmp_path / "gen",
        include_paths=[stl],
        external_packages={"base.common": "ext.base.common"},
    )
    assert app.ok, [d.format() for d in app.diagnostics]
    assert not (tmp_path / "gen" / "base").exists()
    source = (tmp_path / "gen" / "app" / "app.py").read_text()
    assert "from ext.base.common import common as _base__common__common" in source
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gen.app as a; print(a.Sensor.META.parent.qualified_name, a.Sensor.META.scope,"
            " a.Sensor.META.parent.scope)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.stdout.split() == ["base.common.Device", "gen", "ext"], run.stderr


def test_two_files_of_one_module_path_are_one_error(tmp_path: Path) -> None:
    for folder, name in (("a", "x.stl"), ("b", "X.stl")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(f"package p;\nstruct S{folder} {{ v : i32 }}\n")
    errors = [d for d in sengen.check([tmp_path / "a", tmp_path / "b"]) if d.is_error]
    assert len(errors) == 1, [d.format() for d in errors]
    assert "compared case-insensitively" in errors[0].message


def test_docs_and_schema_come_from_the_builds_own_load(tmp_path: Path) -> None:
    """One load for code, docs and schema: a front-end warning is printed once."""
    shutil.copytree(GOLDEN / "value_types" / "stl", tmp_path / "stl")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sengen]\nsources = ["stl"]\noutput = "gen"\ndocs = "stl.md"\n'
        'schema = "config.schema.json"\n'
    )
    run = _cli("build", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("unknown unit 'u16'") == 1, run.stderr
    assert (tmp_path / "stl.md").exists() and (tmp_path / "config.schema.json").exists()
