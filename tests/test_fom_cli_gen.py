"""Sen's 20 cli_gen FOM cases through the harness of fom.md §12.2: each case copied into the
set layout of §2.3, imported from ``case.stl`` and checked with ``sengen check`` (in process),
with exactly the diagnostics of the spec's table, or its facts on success."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from corpus_layout import fom_corpus_root

import sengen
from sengen.cli.main import main
from sengen.stl import model as m
from sengen.stl.loader import Loader
from sengen.stl.settings import Settings

IMPORTS = {4: "moduleA/moduleA.xml", 18: "fom/module-A.xml", 19: "fom/moduleA-19.xml"}
IMPORTS[20] = "fom/moduleA-20.xml"
SETTINGS = {"classes": {"fom.MyModuleAClass": {"checkedProperties": ["moduleAInt"]}}}
# §12.2: failing cases, their one error and the position of its note.
FAILURES = {
    2: ("fom/moduleA.xml:78:31", "could not find type 'IntModuleB'", "fom/moduleB.xml:27:23"),
    5: ("fom/moduleA.xml:23:31", "could not find type 'IntModuleC'", "fom/moduleC.xml:27:23"),
    6: ("fom/moduleA.xml:27:31", "could not find type 'IntModuleC'", "fom/moduleC.xml:27:23"),
    8: ("fom/moduleA.xml:34:31", "could not find type 'IntModuleB'", "fom/moduleB.xml:39:23"),
    13: (
        "fom/moduleB.xml:23:23",
        "could not find interaction 'ModuleCInteraction'",
        "fom/moduleC.xml:23:23",
    ),
    14: (
        "fom/moduleB.xml:27:23",
        "could not find interaction 'ModuleCInteraction'",
        "fom/moduleC.xml:27:23",
    ),
    16: ("fom/moduleB.xml:18:23", "could not find type 'MyModuleAClass'", "fom/moduleA.xml:18:23"),
}


def prepare(case: int, folder: Path) -> list[str]:
    """Steps 1 to 5 of the harness; the ``sengen check`` arguments."""
    source = fom_corpus_root() / f"apps/cli_gen/test/test{case}"
    if case == 4:
        for module in ("moduleA", "moduleB", "moduleC"):
            shutil.copytree(source / "fom" / module, folder / module)
    else:
        shutil.copytree(source / "fom", folder / "fom")
    mapping = source / "mapping/mapping.xml"
    if mapping.is_file():
        shutil.copy(mapping, folder / "mapping.xml")
    spelled = IMPORTS.get(case, "fom/moduleA.xml")
    (folder / "case.stl").write_text(f'import "{spelled}"\npackage case{case};\n')
    args = ["check", "case.stl", "--format", "json"]
    if case == 19:
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
        args += ["--settings", "settings.json"]
    return args


Found = list[dict[str, Any]]


def check(case: int, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, Found]:
    args = prepare(case, folder)
    capsys.readouterr()
    with contextlib.chdir(folder):
        code = main(args)
    return code, json.loads(capsys.readouterr().out or "[]")


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failing_case(case: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = check(case, tmp_path, capsys)
    where, message, note = FAILURES[case]
    assert code == 1
    (error,) = found
    assert (f"{error['file']}:{error['line']}:{error['column']}", error["message"]) == (
        where,
        message,
    )
    notes = [f"{n['file']}:{n['line']}:{n['column']}" for n in error["notes"]]
    assert notes == [note, "case.stl:1:8"]
    assert error["notes"][-1]["message"] == "imported from here"


def program(case: int, folder: Path) -> m.Program:
    """A successful case, loaded: no diagnostic at all."""
    args = prepare(case, folder)
    settings = folder / "settings.json" if "--settings" in args else None
    with contextlib.chdir(folder):
        result = sengen.load([folder / "case.stl"], settings=settings)
    assert result.diagnostics == ()
    assert result.program is not None
    return result.program


def in_set(folder: Path, name: str) -> m.UserType:
    """A type of the FOM set that ``case.stl`` in ``folder`` imports, in the program or not."""
    loader = Loader([], Settings())
    with contextlib.chdir(folder):
        loader.load_input(folder / "case.stl", folder)
    (loaded,) = loader.fom.sets.values()
    return next(t for s in loaded.scopes.values() for t in s.types if t.qualified_name == name)


def find(program: m.Program, name: str) -> m.UserType:
    found = program.find(name)
    assert found is not None, name
    return found


def fields(t: m.UserType) -> list[tuple[str, str]]:
    assert isinstance(t, m.StructType)
    return [(f.name, f.type.qualified_name) for f in t.fields]


def signature(f: m.Method | m.Event) -> list[tuple[str, str]]:
    return [(a.name, a.type.qualified_name) for a in f.arguments]


def cls(program: m.Program, name: str) -> m.ClassType:
    found = find(program, name)
    assert isinstance(found, m.ClassType)
    return found


def imports_of(program: m.Program, name: str) -> list[str]:
    (module,) = [f for f in program.files if f.path.name == name]
    return [p.name for p in module.imports]


def test_successful_cases_give_no_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for case in sorted(set(range(1, 21)) - set(FAILURES)):
        folder = tmp_path / f"case{case}"
        folder.mkdir()
        code, found = check(case, folder, capsys)
        assert (case, code, found) == (case, 0, [])


def test_cases_1_to_4(tmp_path: Path) -> None:
    one = program(1, tmp_path / "1")
    assert fields(find(one, "fom.ModuleAStruct")) == [
        ("moduleAInt", "fom.IntModuleA"),
        ("moduleBInt", "fom.IntModuleB"),
    ]
    for name, native in (("fom.IntModuleA", "i32"), ("fom.IntModuleB", "i64")):
        alias = find(one, name)
        assert isinstance(alias, m.AliasType) and alias.target.name == native
    a_class = cls(one, "fom.MyModuleAClass")
    assert a_class.parent is not None and a_class.parent.qualified_name == "hla.ObjectRoot"
    (prop,) = a_class.properties
    assert (prop.name, prop.type.qualified_name, prop.category, prop.transport) == (
        "moduleAInt",
        "fom.IntModuleA",
        m.PropertyCategory.DYNAMIC_RO,
        m.TransportMode.CONFIRMED,
    )
    assert imports_of(one, "moduleA.xml") == ["moduleB.xml", "hla.stl"]
    three = program(3, tmp_path / "3")
    assert ("moduleCInt", "fom.IntModuleC") in [
        (p.name, p.type.qualified_name) for p in cls(three, "fom.MyModuleAClass").properties
    ]
    four = program(4, tmp_path / "4")
    assert {f.package for f in four.files} == {"hla", "modulea", "moduleb", "modulec", "case4"}
    assert fields(find(four, "modulea.ModuleAStruct")) == [
        ("moduleAInt", "modulea.IntModuleA"),
        ("moduleBInt", "moduleb.IntModuleB"),
    ]
    props = cls(four, "modulea.MyModuleAClass").properties
    assert ("moduleCInt", "modulec.IntModuleC") in [(p.name, p.type.qualified_name) for p in props]


def test_cases_7_to_12_mapped_interactions(tmp_path: Path) -> None:
    seven = program(7, tmp_path / "7")
    (method,) = cls(seven, "fom.MyModuleAClass").methods
    assert (method.name, signature(method), method.return_type) == (
        "moduleBInteraction",
        [("moduleBParam", "fom.IntModuleB")],
        None,
    )
    assert (method.transport, method.local, method.const) == (
        m.TransportMode.CONFIRMED,
        False,
        False,
    )
    assert fields(find(seven, "fom.ModuleBInteraction")) == [("moduleBParam", "fom.IntModuleB")]
    assert imports_of(seven, "moduleA.xml") == ["moduleB.xml", "hla.stl"]
    nine = program(9, tmp_path / "9")
    (method,) = cls(nine, "fom.MyModuleAClass").methods
    assert signature(method) == [("moduleCParam", "fom.IntModuleC")]
    ten = program(10, tmp_path / "10")
    (method,) = cls(ten, "fom.MyModuleAClass").methods
    assert signature(method) == [("moduleBParam", "fom.IntModuleB")]
    assert method.return_type is not None
    assert method.return_type.qualified_name == "fom.ModuleCInteraction"
    assert fields(find(ten, "fom.ModuleCInteraction")) == [("moduleCParam", "fom.IntModuleC")]
    assert imports_of(ten, "moduleA.xml") == ["moduleB.xml", "moduleC.xml", "hla.stl"]
    eleven = program(11, tmp_path / "11")
    events = cls(eleven, "fom.MyModuleAClass").events
    assert [(e.name, signature(e), e.transport) for e in events] == [
        ("moduleBInteraction", [("moduleBParam", "fom.IntModuleB")], m.TransportMode.CONFIRMED),
        ("moduleCInteraction", [("args", "fom.ModuleCInteraction")], m.TransportMode.CONFIRMED),
    ]
    twelve = program(12, tmp_path / "12")
    expected = [("moduleCParam", "fom.IntModuleC"), ("moduleBParam", "fom.IntModuleB")]
    assert fields(find(twelve, "fom.ModuleBInteraction")) == expected
    (method,) = cls(twelve, "fom.MyModuleAClass").methods
    assert signature(method) == expected


def test_cases_15_to_20(tmp_path: Path) -> None:
    fifteen = program(15, tmp_path / "15")
    assert fields(find(fifteen, "fom.ModuleBInteraction")) == [
        ("moduleDParam1", "fom.IntModuleD"),
        ("moduleDParam2", "fom.IntModuleD"),
    ]
    assert fields(find(fifteen, "fom.ModuleCInteraction")) == [("moduleDParam1", "fom.IntModuleD")]
    (module_b,) = [f for f in fifteen.files if f.path.name == "moduleB.xml"]
    assert not [t for t in module_b.types if not isinstance(t, m.StructType)]
    # Module C is not in moduleA.xml's import closure: it is converted, not in the program.
    program(17, tmp_path / "17")
    loader = Loader([], Settings())
    with contextlib.chdir(tmp_path / "17"):
        loader.load_input(tmp_path / "17/case.stl", tmp_path / "17")
    (loaded,) = loader.fom.sets.values()
    c_class = next(
        t
        for s in loaded.scopes.values()
        for t in s.types
        if t.qualified_name == "fom.MyModuleCClass"
    )
    assert isinstance(c_class, m.ClassType)
    assert [a.qualified_name for a in c_class.ancestors()] == [
        "fom.MyModuleBClass",
        "fom.MyModuleAClass",
        "hla.ObjectRoot",
    ]
    assert [p.name for p in c_class.all_properties] == [
        "rtiId",
        "moduleAInt",
        "moduleBParam",
        "moduleCParam",
    ]
    eighteen = program(18, tmp_path / "18")
    assert fields(find(eighteen, "fom.RepeatedInteractionA")) == [
        ("testParameter", "fom.IntModuleA")
    ]
    assert fields(in_set(tmp_path / "18", "fom.RepeatedInteractionB")) == [
        ("testParameter", "fom.IntModuleB")
    ]
    assert eighteen.find("fom.RepeatedInteraction") is None
    repeated = find(eighteen, "fom.RepeatedInteractionA")
    assert repeated.description == "Test semantics" + " " * 17
    nineteen = program(19, tmp_path / "19")
    a_class = cls(nineteen, "fom.MyModuleAClass")
    assert [p.checked for p in a_class.properties if p.name == "moduleAInt"] == [True]
    assert not a_class.instantiable
    twenty = program(20, tmp_path / "20")
    assert fields(find(twenty, "fom.MyInteraction")) == [
        ("myOptionalParam", "hla.MaybeI32"),
        ("myRequiredParam", "fom.IntModuleA"),
    ]
