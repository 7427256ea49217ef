"""Documentation comments become descriptions exactly by the positional rules of stl.md §3."""

from __future__ import annotations

from pathlib import Path

from sengen import load
from sengen.stl.model import ClassType, EnumType, Program, StructType, UserType, VariantType


def resolve(tmp_path: Path, text: str) -> Program:
    path = tmp_path / "doc.stl"
    path.write_text(text, encoding="utf-8")
    result = load([path])
    assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
    assert result.program is not None
    return result.program


def find(program: Program, name: str) -> UserType:
    found = program.find(f"p.{name}")
    assert found is not None
    return found


def test_statement_leading_and_trailing(tmp_path: Path) -> None:
    program = resolve(
        tmp_path,
        "// lost before package\npackage p; // trails package: leads S\n"
        "// first\n//\n// second\nstruct S {} // trails brace: leads Q\n"
        "quantity<f32, m> Q; // trails Q\nalias A u8;\n",
    )
    assert find(program, "S").description == "trails package: leads S first second"
    assert find(program, "Q").description == "trails brace: leads Q trails Q"
    assert find(program, "A").description == ""


def test_elements_trailing_on_element_or_comma_line(tmp_path: Path) -> None:
    program = resolve(
        tmp_path,
        "package p;\nstruct S { // documents a\n  a: u8, // about a\n  // leads b\n"
        "  b: u8 // between b and comma\n  , c: u8\n  // discarded before brace\n}\n"
        "enum E : u8 { x, // about x\n y, }\nvariant V { u8 // about u8\n, string }\n",
    )
    struct = find(program, "S")
    assert isinstance(struct, StructType)
    assert [f.description for f in struct.fields] == [
        "documents a about a",
        "leads b between b and comma",
        "",
    ]
    enum = find(program, "E")
    assert isinstance(enum, EnumType)
    assert [e.description for e in enum.enumerators] == ["about x", ""]
    variant = find(program, "V")
    assert isinstance(variant, VariantType)
    assert [a.description for a in variant.alternatives] == ["about u8", ""]


def test_members_params_and_arguments(tmp_path: Path) -> None:
    program = resolve(
        tmp_path,
        "package p;\nclass C {\n  // Adds.\n  //\n  // More.\n  // @param a: left\n"
        "  //   continued\n  // @param b - right\n  fn add(a: i32 // own a\n"
        "  , b: i32, // after comma\n  c: i32) -> i32; // trails add\n"
        "  var v : u8; // about v\n  // leads e\n  event e(x: u8);\n  // discarded\n}\n",
    )
    cls = find(program, "C")
    assert isinstance(cls, ClassType)
    add = cls.methods[0]
    assert add.description == "Adds. More. trails add"
    assert [a.description for a in add.arguments] == [
        "own a left continued",
        "after comma right",
        "",
    ]
    assert cls.properties[0].description == "about v"
    assert cls.events[0].description == "leads e"
    assert cls.constructor.description == "constructor"


def test_comments_in_positions_sen_rejects_are_discarded(tmp_path: Path) -> None:
    program = resolve(
        tmp_path,
        "package p;\nabstract // x\nclass // y\nC // z\n{ var v // a\n : u8 // b\n"
        " [ // c\n confirmed ] // d\n ; }\nsequence // e\n< u8 // f\n> L;\n// at end",
    )
    cls = find(program, "C")
    assert isinstance(cls, ClassType)
    assert cls.description == ""
    assert cls.properties[0].description == ""
    assert find(program, "L").description == ""
