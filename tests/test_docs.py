"""The Markdown reference (codegen.md §8.1): structure over the corpus, facts, escaping, Mermaid
well-formedness, determinism, and golden files.

Expected facts come from the corpus text and the spec, never from what the renderer printed.
``SENGEN_UPDATE_GOLDEN=1`` rewrites ``tests/docs_golden/<case>/expected.md`` from the current
output; review the diff before committing it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import load_corpus
from corpus_layout import DEFAULT_INCLUDES, FOM_FILES, REPO_ROOT, corpus_root, main_run

import sengen
from sengen.codegen.docs import md_code, md_text, mermaid_identifier, render_docs
from sengen.stl import model as m

GOLDEN = Path(__file__).resolve().parent / "docs_golden"
ANCHOR = re.compile(r'^<a id="([^"]+)"></a>$', re.MULTILINE)
LINK = re.compile(r"\]\(#([^)]*)\)")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NODE = re.compile(r'^    class ([^\s\[]+)\["([^"]*)"\]( \{)?$')
EDGE = re.compile(r"^    (\S+) (<\|--|\.\.>) (\S+) : (extends|uses)$")
MEMBER = re.compile(r'^        [^{}"\n]+$')
KIND_HEADINGS = {
    m.ClassType: "Class",
    m.StructType: "Struct",
    m.VariantType: "Variant",
    m.EnumType: "Enum",
    m.SequenceType: "Sequence",
    m.ArrayType: "Array",
    m.OptionalType: "Optional",
    m.QuantityType: "Quantity",
    m.AliasType: "Alias",
}
BOXED = (m.ClassType, m.StructType, m.VariantType, m.EnumType)


# --------------------------------------------------------------------------------------------
# helpers


@functools.cache
def corpus_program() -> m.Program:
    """stl.md §11.3's main run without the four FOM files, which cannot resolve (§11.4)."""
    root = corpus_root()
    every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.stl"))
    files = tuple(f for f in main_run(every) if f not in FOM_FILES)
    result = load_corpus(files, DEFAULT_INCLUDES)
    assert result.program is not None, [d.format_header() for d in result.diagnostics]
    return result.program


@functools.cache
def corpus_doc() -> str:
    return render_docs(corpus_program())


def section(doc: str, anchor: str) -> str:
    """The text from ``anchor``'s marker up to the next anchor marker."""
    start = doc.index(f'<a id="{anchor}"></a>\n')
    following = ANCHOR.search(doc, start + 1)
    return doc[start : following.start() if following else len(doc)]


def type_section(doc: str, qualified_name: str) -> str:
    return section(doc, qualified_name.lower().replace(".", "-"))


def split_cells(line: str) -> list[str]:
    """A GFM table row's cells: ``|`` separates them unless a backslash escapes it."""
    cells, current, i = [], "", 1  # skip the leading pipe
    while i < len(line):
        char = line[i]
        if char == "\\" and i + 1 < len(line):
            current += line[i : i + 2]
            i += 2
            continue
        if char == "|":
            cells.append(current.strip())
            current = ""
        else:
            current += char
        i += 1
    assert current.strip() == "", f"row does not end with a pipe: {line!r}"
    return cells


def tables(doc: str) -> list[list[list[str]]]:
    """Every table as rows of cells (header first, separator left out), checked for shape."""
    found: list[list[list[str]]] = []
    current: list[str] = []
    for line in [*doc.split("\n"), ""]:
        if line.startswith("|"):
            current.append(line)
            continue
        if current:
            header, separator, *rows = current
            width = len(split_cells(header))
            assert split_cells(separator) == ["---"] * width, current
            parsed = [split_cells(header)] + [split_cells(r) for r in rows]
            assert all(len(r) == width for r in parsed), current
            found.append(parsed)
            current = []
    return found


def rows_of(text: str, first_header: str) -> list[list[str]]:
    """The data rows of the first table in ``text`` whose first column is ``first_header``."""
    for table in tables(text):
        if table[0][0] == first_header:
            return table[1:]
    raise AssertionError(f"no table with the column {first_header!r}")


@dataclass(frozen=True)
class Diagram:
    nodes: dict[str, str]  # identifier → label
    members: dict[str, list[str]]
    edges: list[tuple[str, str, str, str]]


def mermaid_blocks(doc: str) -> list[Diagram]:
    blocks = re.findall(r"^```mermaid\n(.*?)^```$", doc, re.MULTILINE | re.DOTALL)
    return [parse_diagram(block) for block in blocks]


def parse_diagram(block: str) -> Diagram:
    """Parses the subset of Mermaid the renderer writes, failing on anything else."""
    lines = block.rstrip("\n").split("\n")
    assert lines[0] == "classDiagram"
    diagram = Diagram({}, {}, [])
    open_node: str | None = None
    for line in lines[1:]:
        if open_node is not None:
            if line == "    }":
                open_node = None
            else:
                assert MEMBER.match(line), f"bad member line: {line!r}"
                diagram.members[open_node].append(line.strip())
            continue
        node, edge = NODE.match(line), EDGE.match(line)
        if node:
            identifier, label, brace = node.groups()
            assert IDENTIFIER.fullmatch(identifier), identifier
            assert identifier not in diagram.nodes, f"node declared twice: {identifier}"
            diagram.nodes[identifier] = label
            diagram.members[identifier] = []
            open_node = identifier if brace else None
        elif edge:
            source, arrow, target, label = edge.groups()
            diagram.edges.append((source, arrow, target, label))
        else:
            raise AssertionError(f"unexpected Mermaid line: {line!r}")
    assert open_node is None, "unterminated class body"
    return diagram


def diagram_of(doc: str, package: str) -> Diagram:
    (found,) = mermaid_blocks(section(doc, "package-" + package.lower().replace(".", "-")))
    return found


def node_of(diagram: Diagram, qualified_name: str) -> str:
    (identifier,) = [i for i, label in diagram.nodes.items() if label == qualified_name]
    return identifier


def packages_of(program: m.Program) -> list[str]:
    return sorted({f.package for f in program.files if f.package})


def load_tmp(tmp_path: Path, text: str) -> m.Program:
    (tmp_path / "main.stl").write_text(text, encoding="utf-8")
    with contextlib.chdir(tmp_path):
        return sengen.load(["main.stl"]).unwrap()


# --------------------------------------------------------------------------------------------
# structure over the corpus


def test_index_lists_every_package_sorted() -> None:
    doc = corpus_doc()
    index = doc[doc.index("## Packages\n") : doc.index("\n<a id=", doc.index("## Packages\n"))]
    listed = re.findall(r"^- \[`([^`]+)`\]\(#([^)]+)\)", index, re.MULTILINE)
    expected = packages_of(corpus_program())
    assert len(expected) > 40  # the main run has dozens of packages
    assert [name for name, _ in listed] == expected
    headings = re.findall(r"^## Package `([^`]+)`$", doc, re.MULTILINE)
    assert headings == expected
    for name, anchor in listed:
        assert section(doc, anchor).split("\n")[1] == f"## Package `{name}`"


def test_every_type_has_a_section() -> None:
    doc = corpus_doc()
    program = corpus_program()
    assert len(program.types) > 500
    for t in program.types:
        heading = type_section(doc, t.qualified_name).split("\n")[1]
        assert heading == f"### {KIND_HEADINGS[type(t)]} `{t.qualified_name}`"


def test_every_class_section_lists_its_members() -> None:
    doc = corpus_doc()
    classes = [t for t in corpus_program().types if isinstance(t, m.ClassType)]
    assert len(classes) > 60
    for cls in classes:
        text = type_section(doc, cls.qualified_name)
        if cls.properties:
            assert [r[0] for r in rows_of(text, "STL name")] == [
                f"`{p.name}`" for p in cls.properties
            ]
        methods = text[text.index("#### Methods") : text.index("#### Events")]
        events = text[text.index("#### Events") : text.index("#### Constructor")]
        assert re.findall(r"^##### `(\w+)`$", methods, re.MULTILINE) == [
            x.name for x in cls.methods
        ]
        assert re.findall(r"^##### `(\w+)`$", events, re.MULTILINE) == [e.name for e in cls.events]
        args = ", ".join(f"{a.name}: {a.type.qualified_name}" for a in cls.constructor.arguments)
        assert f"`{cls.constructor.name}({args})`" in text


def test_anchors_unique_and_links_resolve() -> None:
    doc = corpus_doc()
    anchors = ANCHOR.findall(doc)
    assert len(anchors) == len(set(anchors))
    links = LINK.findall(doc)
    assert len(links) > 1000
    missing = sorted({link for link in links if link not in set(anchors)})
    assert missing == []
    # Anchors are derived from qualified names: lowercase, dots to `-`.
    assert "my_counter-counter" in anchors
    assert "sen-kernel-structtypefieldspec" in anchors


def test_every_table_is_well_formed() -> None:
    assert len(tables(corpus_doc())) > 500  # tables() asserts the shape of each one


def test_mermaid_blocks_are_well_formed() -> None:
    doc = corpus_doc()
    diagrams = mermaid_blocks(doc)
    assert len(diagrams) > 40
    for diagram in diagrams:
        assert diagram.nodes
        for identifier, label in diagram.nodes.items():
            # Dots and other non-word characters become `_`; a collision gets a `_<n>` suffix.
            assert identifier == mermaid_identifier(label) or re.fullmatch(
                re.escape(mermaid_identifier(label)) + r"_\d+", identifier
            )
        for source, _, target, _ in diagram.edges:
            assert source in diagram.nodes and target in diagram.nodes


def test_each_package_diagram_draws_its_boxes_and_edges() -> None:
    doc = corpus_doc()
    program = corpus_program()
    for package in packages_of(program):
        own = [t for t in program.types if t.package == package and isinstance(t, BOXED)]
        if not own:
            continue
        diagram = diagram_of(doc, package)
        labels = list(diagram.nodes.values())
        assert labels[: len(own)] == [t.qualified_name for t in own]
        for t in own:
            identifier = node_of(diagram, t.qualified_name)
            if not isinstance(t, m.ClassType):
                assert diagram.members[identifier][0] == f"<<{KIND_HEADINGS[type(t)].lower()}>>"
            if isinstance(t, m.ClassType | m.StructType) and t.parent is not None:
                parent = node_of(diagram, t.parent.qualified_name)
                assert (parent, "<|--", identifier, "extends") in diagram.edges


def test_uses_edges_follow_member_types() -> None:
    diagram = diagram_of(corpus_doc(), "inheritance")
    uses = [(s, t) for s, arrow, t, _ in diagram.edges if arrow == "..>"]
    # test/util/inheritance/stl/inheritance/my_class.stl: prop2, prop3, prop4.
    assert ("inheritance_MyClass", "inheritance_StructOfInts") in uses
    assert ("inheritance_MyClass", "inheritance_MyVariant") in uses
    assert ("inheritance_MyClass", "inheritance_Vec2") in uses
    assert ("inheritance_MyClass", "inheritance_MySubClass") not in uses
    assert ("inheritance_MyClass", "<|--", "inheritance_MySubClass", "extends") in diagram.edges


def test_no_absolute_paths() -> None:
    doc = corpus_doc()
    assert str(corpus_root()) not in doc
    assert str(REPO_ROOT) not in doc
    assert "- Declared in `examples/packages/my_counter/stl/my_counter/counter.stl:3`" in doc


# --------------------------------------------------------------------------------------------
# facts from corpus files


def test_counter_section() -> None:
    """examples/packages/my_counter/stl/my_counter/counter.stl, codegen.md §3.9."""
    text = type_section(corpus_doc(), "my_counter.Counter")
    assert rows_of(text, "STL name") == [
        [
            "`value`",
            "`value`",
            "`i32`",
            "read-only",
            "multicast",
            "no",
            "",
            "The current value of the counter.",
        ],
        [
            "`step`",
            "`step`",
            "`i32`",
            "static",
            "multicast",
            "no",
            "",
            "How much should the counter increase each cycle.",
        ],
    ]
    assert "`hello() -> string`" in text
    assert ["`hello`", "`string`", "confirmed", "yes", "no", "no"] in rows_of(text, "Python name")
    assert "##### `valueIsDivisibleByTen`" in text
    assert ["`value_is_divisible_by_ten`", "multicast"] in rows_of(
        text[text.index("#### Events") :], "Python name"
    )
    assert "`valueIsDivisibleByTen(newValue: i32)`" in text
    assert "`constructorCounter(step: i32)`" in text
    assert "- Instantiable without code: no (has methods)" in text
    diagram = diagram_of(corpus_doc(), "my_counter")
    assert diagram.nodes == {"my_counter_Counter": "my_counter.Counter"}
    assert diagram.members["my_counter_Counter"] == [
        "+i32 value",
        "+i32 step",
        "+hello() string",
        "+event valueIsDivisibleByTen(i32 newValue)",
    ]


def test_quantity_unit_and_bounds() -> None:
    """runtime_1/…/runtime.stl:28: `quantity<i64, deg> TestQuantity [min: 0, max: 50]`."""
    text = type_section(corpus_doc(), "sen.test.runtime.TestQuantity")
    assert "- Value type: `i64`" in text
    assert "- Unit: `deg` (degree, angle)" in text
    assert "- Min: `0.0`" in text
    assert "- Max: `50.0`" in text
    centimeters = type_section(corpus_doc(), "shapes.Centimeters")
    assert "- Unit: `cm`" in centimeters
    assert "- Min: none" in centimeters and "- Max: none" in centimeters
    unitless = type_section(corpus_doc(), "my_package.UnitlessQuantity")
    assert "- Unit: none (`u16` is not a known unit" in unitless


def test_variant_tags_and_keys() -> None:
    """test/util/my_package/stl/my_package/basic_types.stl:67-71 (codegen.md §1.2)."""
    text = type_section(corpus_doc(), "my_package.MyVariantWithAlias")
    assert rows_of(text, "Key") == [
        ["0", "`StringAlias`", "[`my_package.StringAlias`](#my_package-stringalias)", ""],
        ["1", "`u8`", "`u8`", ""],
    ]
    geometry = type_section(corpus_doc(), "shapes.Geometry")
    assert [r[1] for r in rows_of(geometry, "Key")] == ["`Triangle`", "`Rectangle`", "`Circle`"]


def test_enum_keys() -> None:
    text = type_section(corpus_doc(), "shapes.Color")
    assert "- Storage: `u8`" in text
    assert [r[:3] for r in rows_of(text, "Enumerator")] == [
        ["`red`", "0", "`red`"],
        ["`green`", "1", "`green`"],
        ["`blue`", "2", "`blue`"],
    ]


def test_struct_fields_flattened_with_parent() -> None:
    """libs/core/test/io/stl/test_io.stl: Hypersphere → Sphere → Point3D → Point."""
    text = type_section(corpus_doc(), "test_io.Hypersphere")
    assert "- Parent: [`test_io.Sphere`](#test_io-sphere)" in text
    rows = rows_of(text, "Field")
    assert [(r[0], r[3]) for r in rows] == [
        ("`x`", "[`test_io.Point`](#test_io-point)"),
        ("`y`", "[`test_io.Point`](#test_io-point)"),
        ("`z`", "[`test_io.Point3D`](#test_io-point3d)"),
        ("`radius`", "[`test_io.Sphere`](#test_io-sphere)"),
    ]


def test_sequences_and_arrays() -> None:
    doc = corpus_doc()
    pilots = type_section(doc, "test_io.FlightPilots")
    assert "- Element: `string`" in pilots and "- Bound: 2" in pilots
    visited = type_section(doc, "test_io.VisitedAirports")
    assert "- Element: [`test_io.AirportCode`](#test_io-airportcode)" in visited
    assert "- Bound: unbounded" in visited
    assert "- Size: 4" in type_section(doc, "inheritance.ArrayOf4F32s")


def test_parent_link_and_inherited_members() -> None:
    """test/util/cmake_packages/level{0,1,2}: three classes, one [static] property each."""
    text = type_section(corpus_doc(), "level2.Level2Class")
    assert "- Extends: [`level1.Level1Class`](#level1-level1class)" in text
    assert "`constructorLevel2Class(data0: string, data1: string, data2: string)`" in text
    inherited = re.findall(r"^- Inherited from .*$", text, re.MULTILINE)
    assert inherited == [
        "- Inherited from [`level1.Level1Class`](#level1-level1class): properties `data1`;"
        " methods `printSomething1`",
        "- Inherited from [`level0.Level0Class`](#level0-level0class): properties `data0`;"
        " methods `printSomething0`",
    ]
    # Level2Class declares no method, but its ancestors do (codegen.md §3.8).
    assert "- Instantiable without code: no (has methods)" in text


def test_method_arguments_carry_param_text() -> None:
    """examples/packages/calculators/stl/calculator.stl:12-16 (stl.md §3.4)."""
    text = type_section(corpus_doc(), "calculators.Calculator")
    add = text[text.index("##### `add`") :]
    assert 'Returns "a + b" and sets the last result to it.' in add
    assert rows_of(add, "Argument") == [
        ["`a`", "`a`", "`f32`", "left-hand operator."],
        ["`b`", "`b`", "`f32`", "right-hand operator."],
    ]


def test_instantiable_classes() -> None:
    """codegen.md §3.8's corpus examples, and classes that need user code."""
    doc = corpus_doc()
    for name in ("py_test_package.TestObject", "example_class.ExampleClass", "shapes.Shape"):
        assert "- Instantiable without code: yes" in type_section(doc, name), name
    assert "- Instantiable without code: no" in type_section(doc, "calculators.Calculator")


def test_tags_and_mangled_names() -> None:
    doc = corpus_doc()
    (prop3,) = [
        r for r in rows_of(type_section(doc, "my_package.MyClass"), "STL name") if r[0] == "`prop3`"
    ]
    assert prop3[3:7] == ["writable", "confirmed", "no", "`someTag`, `anotherTag`"]
    # codegen.md §2.3: property `property`, field `type`, enumerator `def`.
    churn = rows_of(type_section(doc, "high_churn_subs.TestObject"), "STL name")
    assert ["`property`", "`property_`"] in [r[:2] for r in churn]
    spec = rows_of(type_section(doc, "sen.kernel.StructTypeFieldSpec"), "Field")
    assert ["`type`", "`type_`"] in [r[:2] for r in spec]


# --------------------------------------------------------------------------------------------
# escaping


def test_escaping_helpers() -> None:
    assert md_text("a | b\nc") == "a \\| b<br>c"
    assert md_text("<b>*x*</b> & [y](z)") == "\\<b\\>\\*x\\*\\</b\\> &amp; \\[y\\](z)"
    assert md_text("- not a list") == "\\- not a list"
    assert md_code("a|b") == "`a\\|b`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x") == "`` `x ``"
    assert md_code("one\r\ntwo") == "`one`<br>`two`"
    assert mermaid_identifier("sen.kernel.Foo") == "sen_kernel_Foo"
    assert mermaid_identifier("a-b.C") == "a_b_C"


def test_pipes_and_line_breaks_cannot_break_tables(tmp_path: Path) -> None:
    program = load_tmp(
        tmp_path,
        "package esc;\n"
        "// first | second\n"
        "struct S { a : u8 }\n"
        "class C\n"
        "{\n"
        '  var x : u8 [tag: "one|two\n'
        'three"]; // x | y\n'
        "}\n",
    )
    doc = render_docs(program, title="A | B")
    assert doc.startswith("# A \\| B\n")
    contents = rows_of(section(doc, "package-esc"), "Type")
    assert contents[0] == ["[`esc.S`](#esc-s)", "struct", "first \\| second"]
    (row,) = rows_of(type_section(doc, "esc.C"), "STL name")
    assert row[6] == "`one\\|two`<br>`three`"
    assert row[7] == "x \\| y"
    tables(doc)  # every table keeps its shape


def test_variant_tags_qualified_when_simple_names_clash(tmp_path: Path) -> None:
    """codegen.md §1.2: two alternatives named `Pos` both get their qualified names."""
    (tmp_path / "other.stl").write_text("package other;\nstruct Pos { y : u8 }\n")
    program = load_tmp(
        tmp_path,
        'import "other.stl"\npackage p;\nstruct Pos { x : u8 }\nvariant V { other.Pos, Pos, u8 }\n',
    )
    text = type_section(render_docs(program), "p.V")
    assert [r[1] for r in rows_of(text, "Key")] == ["`other.Pos`", "`p.Pos`", "`u8`"]


# --------------------------------------------------------------------------------------------
# determinism

_RENDER_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
import test_docs
sys.stdout.buffer.write(test_docs.corpus_doc().encode("utf-8"))
"""


def _render_in_subprocess(seed: str, cwd: Path) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    tests = str(Path(__file__).resolve().parent)
    result = subprocess.run(
        [sys.executable, "-c", _RENDER_SCRIPT, tests],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


@pytest.mark.slow
def test_byte_identical_across_processes(tmp_path: Path) -> None:
    corpus_root()  # skips here, not in the child processes, when the corpus is missing
    first = _render_in_subprocess("0", REPO_ROOT)
    second = _render_in_subprocess("4242", tmp_path)
    assert first == second
    assert first == corpus_doc().encode("utf-8")


def test_byte_identical_within_a_process() -> None:
    assert render_docs(corpus_program()) == corpus_doc()


# --------------------------------------------------------------------------------------------
# golden files


def _golden_cases() -> list[str]:
    return sorted(p.name for p in GOLDEN.iterdir() if (p / "main.stl").is_file())


def test_golden_cases_exist() -> None:
    assert _golden_cases() != []


@pytest.mark.parametrize("case", _golden_cases())
def test_golden(case: str) -> None:
    folder = GOLDEN / case
    with contextlib.chdir(folder):
        program = sengen.load(["main.stl"]).unwrap()
    actual = render_docs(program)
    expected_path = folder / "expected.md"
    if os.environ.get("SENGEN_UPDATE_GOLDEN") == "1":
        expected_path.write_bytes(actual.encode("utf-8"))
    assert expected_path.is_file(), f"{expected_path} missing: run with SENGEN_UPDATE_GOLDEN=1"
    assert actual.encode("utf-8") == expected_path.read_bytes()
