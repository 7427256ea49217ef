"""Resolver behaviour that needs several inputs in one run: not-found advice, load once."""

from __future__ import annotations

from pathlib import Path

import pytest

from sengen import UsageError, load


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_not_found_advice_depends_on_what_the_file_sees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    x = write(tmp_path, "x.stl", "package other;\nstruct Foo {}\n")
    a = write(tmp_path, "a.stl", 'import "x.stl"\npackage mine;\nstruct A { f: Foo }\n')
    b = write(tmp_path, "b.stl", "package mine;\nstruct B { f: Foo }\n")
    messages = [(d.file, d.message) for d in load([a, b, x]).diagnostics]
    assert messages == [
        ("a.stl", "type not found: 'Foo': write its qualified name 'other.Foo'"),
        ("b.stl", "type not found: 'Foo': import 'x.stl', which declares 'other.Foo'"),
    ]


def test_a_file_imported_under_two_spellings_loads_once(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path, "sub/t.stl", "package t;\nstruct T {}\n")
    a = write(tmp_path, "a.stl", 'import "sub/t.stl"\npackage a;\nstruct A { t: t.T }\n')
    b = write(tmp_path / "sub", "b.stl", 'import "t.stl"\npackage b;\nstruct B { t: t.T }\n')
    result = load([a, b])
    assert result.diagnostics == ()
    assert result.program is not None
    assert [f.path.name for f in result.program.files] == ["t.stl", "a.stl", "b.stl"]


def test_files_know_the_folder_they_were_found_under(tmp_path: Path) -> None:
    (tmp_path / "stl" / "sub").mkdir(parents=True)
    (tmp_path / "inc").mkdir()
    write(tmp_path / "inc", "lib.stl", "package lib;\nstruct L {}\n")
    write(tmp_path / "stl" / "sub", "t.stl", 'import "lib.stl"\npackage t;\nstruct T {}\n')
    program = load([tmp_path / "stl"], include_paths=[tmp_path / "inc"]).unwrap()
    assert [(f.path.name, f.relative_path) for f in program.files] == [
        ("lib.stl", "lib.stl"),
        ("t.stl", "sub/t.stl"),
    ]


def test_include_paths_are_searched_in_order_after_the_importing_folder(tmp_path: Path) -> None:
    for folder, package in (("first", "one"), ("second", "two"), ("main", "local")):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder, "dep.stl", f"package {package};\nstruct D {{}}\n")
    main = write(tmp_path / "main", "m.stl", 'import "dep.stl"\npackage m;\n')
    other = write(tmp_path, "n.stl", 'import "dep.stl"\npackage n;\n')
    includes = [tmp_path / "first", tmp_path / "second"]
    result = load([main, other], include_paths=includes)
    assert result.program is not None
    packages = [f.package for f in result.program.files]
    assert packages == ["local", "m", "one", "n"]


def test_one_path_instead_of_a_list_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="collection of paths"):
        load(str(tmp_path / "a.stl"))
