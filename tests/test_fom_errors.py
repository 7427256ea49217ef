"""Bad FOM input (fom.md §11): every error and warning at its ``file:line:col``, never a
traceback; plus the import rules of §2 on small generated sets, and a large FOM in bounded time.

Each case writes a set ``T/fom/*.xml`` (and mapping files in ``T``) and imports it from
``T/case.stl``; positions are found in the written text, not hard-coded.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import sengen
from sengen.stl import model as m

ROOTS = "<objects><objectClass><name>HLAobjectRoot</name>{objects}</objectClass></objects>"
INTERACTIONS = (
    "<interactions><interactionClass><name>HLAinteractionRoot</name>{interactions}"
    "</interactionClass></interactions>"
)


def module(
    name: str = "A",
    *,
    deps: tuple[str, ...] = (),
    data: str = "",
    objects: str = "",
    interactions: str = "",
    tag: str = "objectModel",
) -> str:
    references = "".join(
        f"<reference><type>Dependency</type><identification>{d}</identification></reference>"
        for d in deps
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<{tag} xmlns="http://standards.ieee.org/IEEE1516-2010">\n'
        f"<modelIdentification><name>{name}</name>{references}</modelIdentification>\n"
        + ROOTS.format(objects=objects)
        + "\n"
        + INTERACTIONS.format(interactions=interactions)
        + f"\n<dataTypes>\n{data}\n</dataTypes>\n</{tag}>\n"
    )


def simple(name: str, representation: str = "HLAinteger32BE", units: str = "") -> str:
    return (
        "<simpleDataTypes><simpleData>"
        f"<name>{name}</name><representation>{representation}</representation>"
        f"<units>{units}</units><semantics/></simpleData></simpleDataTypes>"
    )


def record(name: str, *fields: tuple[str, str]) -> str:
    body = "".join(f"<field><name>{f}</name><dataType>{t}</dataType></field>" for f, t in fields)
    inner = f"<fixedRecordData><name>{name}</name>{body}</fixedRecordData>"
    return f"<fixedRecordDataTypes>{inner}</fixedRecordDataTypes>"


def enum(name: str, representation: str, *items: tuple[str, str]) -> str:
    body = "".join(f"<enumerator><name>{n}</name><value>{v}</value></enumerator>" for n, v in items)
    return (
        "<enumeratedDataTypes><enumeratedData>"
        f"<name>{name}</name><representation>{representation}</representation>{body}"
        "</enumeratedData></enumeratedDataTypes>"
    )


def attribute(
    name: str,
    data_type: str,
    *,
    update: str = "Conditional",
    sharing: str = "PublishSubscribe",
    transport: str = "HLAreliable",
    semantics: str = "",
) -> str:
    return (
        f"<attribute><name>{name}</name><dataType>{data_type}</dataType>"
        f"<updateType>{update}</updateType><sharing>{sharing}</sharing>"
        f"<transportation>{transport}</transportation><semantics>{semantics}</semantics>"
        "</attribute>"
    )


def object_class(name: str, *attributes: str, children: str = "") -> str:
    members = "".join(attributes) + children
    return f"<objectClass><name>{name}</name><semantics>s</semantics>{members}</objectClass>"


def interaction(
    name: str, *params: tuple[str, str], children: str = "", transport: str = "HLAreliable"
) -> str:
    body = "".join(
        f"<parameter><name>{p}</name><dataType>{t}</dataType><semantics/></parameter>"
        for p, t in params
    )
    return (
        f"<interactionClass><name>{name}</name><transportation>{transport}</transportation>"
        f"<semantics>i</semantics>{body}{children}</interactionClass>"
    )


def where(tmp: Path, file: str, needle: str, occurrence: int = 1, shift: int = 0) -> str:
    """``file:line:col`` of the ``occurrence``-th ``needle`` in the written file."""
    text = (tmp / file).read_text(encoding="utf-8")
    index = -1
    for _ in range(occurrence):
        index = text.index(needle, index + 1)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1 + shift
    return f"{file}:{line}:{column}"


def run(
    tmp: Path, files: dict[str, str], spelled: str = "fom/a.xml", settings: Path | None = None
) -> sengen.LoadResult:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "case.stl").write_text(f'import "{spelled}"\npackage probe;\n', encoding="utf-8")
    with contextlib.chdir(tmp):
        return sengen.load([tmp / "case.stl"], settings=settings)


def found(result: sengen.LoadResult) -> list[tuple[str, str, str]]:
    return [
        (d.severity.value, f"{d.file}:{d.line}:{d.column}", d.message) for d in result.diagnostics
    ]


def test_malformed_xml_is_e1_and_the_set_fails(tmp_path: Path) -> None:
    result = run(tmp_path, {"fom/a.xml": module(), "fom/b.xml": "<objectModel>\n  <name>x</nam>\n"})
    assert result.program is None
    (error,) = found(result)
    assert error[:2] == ("error", "fom/b.xml:2:12")  # expat's position
    assert error[2] == "invalid XML: mismatched tag"
    assert result.diagnostics[0].notes[-1].message == "imported from here"


def test_e2_importing_a_file_that_is_not_a_module(tmp_path: Path) -> None:
    result = run(tmp_path, {"fom/a.xml": "<senMapping/>\n", "fom/b.xml": module("B")}, "fom/a.xml")
    assert found(result) == [
        (
            "error",
            "case.stl:1:8",
            "'fom/a.xml' is not an HLA FOM module: its root element is 'senMapping'",
        )
    ]


def test_w8_w9_files_that_are_not_modules_or_mappings(tmp_path: Path) -> None:
    files = {"fom/a.xml": module(), "fom/b.xml": "<other/>\n", "m.xml": "<objectModel/>\n"}
    assert found(run(tmp_path, files)) == [
        (
            "warning",
            "fom/b.xml:0:0",
            "'fom/b.xml' is not an HLA FOM module (root element 'other'); it is ignored",
        ),
        (
            "warning",
            "m.xml:0:0",
            "'m.xml' is not a mapping file (root element 'objectModel'); it is ignored",
        ),
    ]


def test_e4_folder_name_that_is_no_package(tmp_path: Path) -> None:
    result = run(tmp_path, {"My-FOMs/a.xml": module()}, "My-FOMs/a.xml")
    assert found(result) == [
        (
            "error",
            "case.stl:1:8",
            "FOM folder 'My-FOMs' gives the package name 'my-foms', which is not an identifier",
        )
    ]


def test_package_names_follow_the_folder(tmp_path: Path) -> None:
    result = run(tmp_path, {"netn.v2/a.xml": module(data=simple("X"))}, "netn.v2/a.xml")
    assert result.program is not None and result.program.find("netn.X") is not None


def test_e5_e6_dependencies(tmp_path: Path) -> None:
    files = {
        "fom/a.xml": module("A", deps=("Missing", "B")),
        "fom/b.xml": module("B", deps=("A",)),
    }
    result = run(tmp_path, files)
    assert found(result) == [
        (
            "error",
            where(tmp_path, "fom/a.xml", "Missing"),
            "could not find dependent document 'Missing' for 'fom/a.xml'",
        ),
        (
            "error",
            where(tmp_path, "fom/b.xml", "A</identification>"),
            "cyclic FOM module dependency: a.xml -> b.xml -> a.xml",
        ),
    ]


def test_w10_identification_matching_several_modules(tmp_path: Path) -> None:
    files = {
        "fom/a.xml": module("A", deps=("Base",)),
        "fom/b1.xml": module("Base"),
        "fom/b2.xml": module("Base"),
    }
    (warning,) = found(run(tmp_path, files))
    assert warning == (
        "warning",
        where(tmp_path, "fom/a.xml", "Base"),
        "dependency 'Base' matches several modules: b1.xml, b2.xml; 'b1.xml' is used",
    )


def test_data_type_errors(tmp_path: Path) -> None:
    data = (
        "<basicDataRepresentations><basicData><name>Rep8</name>"
        "<encoding>8-bit signed integer</encoding></basicData></basicDataRepresentations>"
        + simple("Unknown", "NoSuchRep")
        + record("Loop1", ("next", "Loop2"))
        + record("Loop2", ("back", "Loop1"))
        + record("UsesClass", ("c", "Thing"))
        + record("Twice", ("a_b", "HLAcount"), ("aB", "HLAcount"))
        + enum("FloatEnum", "HLAfloat32BE", ("A", "0"))
        + enum("Keys", "HLAoctet", ("One", "1"), ("Uno", "1"))
        + enum("Values", "HLAoctet", ("Big", "256"), ("Word", "x1"))
        + enum("Empty", "HLAoctet")
        + simple("Bad.Name")
        + simple("Dup_Name")
        + simple("DupName")
    )
    files = {"fom/a.xml": module(data=data, objects=object_class("Thing"))}
    result = run(tmp_path, files)
    a = "fom/a.xml"
    assert sorted(found(result), key=lambda d: d[1]) == sorted([
        (
            "error",
            where(tmp_path, a, "8-bit signed"),
            "unknown encoding '8-bit signed integer' for basic data representation 'Rep8'",
        ),
        (
            "error",
            where(tmp_path, a, "NoSuchRep"),
            "data representation 'NoSuchRep' is not yet supported",
        ),
        ("error", where(tmp_path, a, "Loop1<"), "recursive data type: Loop1 -> Loop2 -> Loop1"),
        ("error", where(tmp_path, a, ">Thing</dataType", shift=1), "fom.Thing is not a value type"),
        ("error", where(tmp_path, a, "aB<"), "Type 'fom.Twice': repeated struct field name 'aB'"),
        (
            "error",
            where(tmp_path, a, "HLAfloat32BE"),
            "storage type 'HLAfloat32BE' for enumeration 'FloatEnum' is not an integral type",
        ),
        (
            "error",
            where(tmp_path, a, "Keys<"),
            "Type 'fom.Keys': enumerator one and uno have the same key 1",
        ),
        (
            "error",
            where(tmp_path, a, "256"),
            "enumerator value 256 of 'big' cannot be represented using u8",
        ),
        ("error", where(tmp_path, a, "x1"), "invalid enumerator value 'x1'"),
        ("error", where(tmp_path, a, "Empty<"), "Type 'fom.Empty': no enumerators"),
        (
            "error",
            where(tmp_path, a, "Bad.Name"),
            "invalid type name 'Bad.Name': name must only contain alpha-numeric characters but "
            "'.' was found in 'Bad.Name'",
        ),
        ("error", where(tmp_path, a, "DupName<"), "There is already a type named 'fom.DupName'"),
    ], key=lambda d: d[1])  # fmt: skip
    duplicate = next(d for d in result.diagnostics if d.message.startswith("There is"))
    first = duplicate.notes[0]
    assert f"{first.file}:{first.line}:{first.column}" == where(tmp_path, a, "Dup_Name")


def test_class_errors(tmp_path: Path) -> None:
    objects = object_class(
        "Thing",
        attribute("Size", "HLAcount", update="Static", sharing="Sometimes"),
        attribute("Speed", "HLAcount", transport="HLAfast"),
        attribute("Rti_Id", "HLAcount"),
        children=object_class("Child", attribute("Size", "HLAcount")),
    )
    files = {"fom/a.xml": module(objects=objects, data=simple("NotAClass"))}
    files["fom/b.xml"] = module(
        "B",
        deps=("A",),
        objects="<objectClass><name>NotAClass</name>"
        "<objectClass><name>X</name><semantics/></objectClass></objectClass>",
    )
    result = run(tmp_path, files)
    a = "fom/a.xml"
    assert found(result) == [
        ("error", where(tmp_path, a, "Sometimes"), "unknown sharing mode 'Sometimes'"),
        ("error", where(tmp_path, a, "HLAfast"), "unknown transport mode 'HLAfast'"),
        (
            "error",
            where(tmp_path, a, "Rti_Id"),
            "Type 'fom.Thing': error in class 'Thing' spec: parent class hla.ObjectRoot already "
            "has a property named rtiId",
        ),
        ("error", where(tmp_path, "fom/b.xml", "NotAClass"), "fom.NotAClass is not a class type"),
    ]


def test_e25_top_level_classes_must_be_roots(tmp_path: Path) -> None:
    text = module().replace("HLAobjectRoot", "ObjectRoot").replace("HLAinteractionRoot", "Root")
    result = run(tmp_path, {"fom/a.xml": text})
    assert found(result) == [
        (
            "error",
            where(tmp_path, "fom/a.xml", ">ObjectRoot", shift=1),
            "top-level object class must be 'HLAobjectRoot', found 'ObjectRoot'",
        ),
        (
            "error",
            where(tmp_path, "fom/a.xml", ">Root<", shift=1),
            "top-level interaction class must be 'HLAinteractionRoot', found 'Root'",
        ),
    ]


def test_mapping_errors_and_warnings(tmp_path: Path) -> None:
    objects = object_class("Thing", attribute("Size", "HLAcount"))
    interactions = interaction("Hit", ("Force", "HLAcount")) + interaction("Ping")
    a = module(objects=objects, interactions=interactions)
    b = module("B", interactions=interaction("Ping"))
    mapping = """<senMapping>
<class name="Thing">
  <property name="size" writable="maybe"/>
  <property name="weight" checked="true"/>
  <event hlaInteraction="Hit" pack="true"><ignore parameter="Force"/></event>
  <event hlaInteraction="Miss"/>
  <event hlaInteraction="Ping"/>
  <method hlaInteraction="Hit"><ignore parameter="Nope"/><return/></method>
  <method hlaInteraction="Hit" locale="x"><return deferred="yes" dataType="HLAboolean"/></method>
  <wrong/>
</class>
<class name="Nobody"/>
</senMapping>
"""
    result = run(tmp_path, {"fom/a.xml": a, "fom/b.xml": b, "mapping.xml": mapping})

    def at(needle: str) -> str:
        return where(tmp_path, "mapping.xml", needle)

    assert found(result) == [
        (
            "error",
            at('<property name="size"'),
            "invalid value 'maybe' for a boolean parameter (expecting 'true' or 'false')",
        ),
        (
            "warning",
            at('<property name="weight"'),
            "property weight is mapped as 'checked'. This is now deprecated. Please use code "
            "generation settings.",
        ),
        (
            "warning",
            at('<property name="weight"'),
            "class 'fom.Thing' has no property 'weight'; the mapping is ignored",
        ),
        (
            "warning",
            at('<ignore parameter="Force"'),
            "'ignore' has no effect here: the interaction's whole struct 'fom.Hit' is used",
        ),
        ("error", at('<event hlaInteraction="Miss"'), "could not find interaction 'Miss'"),
        ("error", at('<event hlaInteraction="Ping"'), "multiple 'Ping' interactions found"),
        ("warning", at('<ignore parameter="Nope"'), "interaction 'Hit' has no parameter 'Nope'"),
        (
            "error",
            at("<return/>"),
            "could not find type '': <return> needs an 'hlaInteraction' or a 'dataType' attribute",
        ),
        (
            "warning",
            at('<method hlaInteraction="Hit" locale'),
            "unknown attribute 'locale' on 'method'",
        ),
        (
            "warning",
            at("<return deferred"),
            "method hit is mapped as 'deferred'. This is now deprecated. Please use code "
            "generation settings.",
        ),
        ("warning", at("<wrong"), "unknown element 'wrong' in a mapping file"),
        (
            "warning",
            at('<class name="Nobody"'),
            "mapping for class 'Nobody' matches no object class of the FOM set",
        ),
    ]


def test_e23_packed_interaction_without_a_struct(tmp_path: Path) -> None:
    objects = object_class("Thing") + object_class("Hit")
    a = module(objects=objects, interactions=interaction("Hit", ("Force", "HLAcount")))
    mapping = (
        '<senMapping><class name="Thing"><event hlaInteraction="Hit" pack="true"/></class>'
        "</senMapping>\n"
    )
    result = run(tmp_path, {"fom/a.xml": a, "mapping.xml": mapping})
    hit = where(tmp_path, "fom/a.xml", "Hit<")
    assert found(result) == [
        (
            "error",
            where(tmp_path, "mapping.xml", "<event"),
            f"interaction 'Hit' has no struct of its own: 'fom.Hit' is the object class declared "
            f"at {hit}",
        )
    ]


def test_warnings_on_data_types(tmp_path: Path) -> None:
    data = (
        simple("HLAboolean")
        + "<arrayDataTypes>"
        + "<arrayData><name>Odd</name><dataType>HLAbyte</dataType>"
        + "<cardinality>3,4</cardinality></arrayData>"
        + "<arrayData><name>None0</name><dataType>HLAbyte</dataType>"
        + "<cardinality>0</cardinality></arrayData>"
        + "</arrayDataTypes>"
    )
    result = run(tmp_path, {"fom/a.xml": module(data=data)})
    a = "fom/a.xml"
    assert found(result) == [
        (
            "warning",
            where(tmp_path, a, "HLAboolean"),
            "'HLAboolean' is a predefined HLA data type; this declaration is ignored",
        ),
        (
            "warning",
            where(tmp_path, a, "3,4"),
            "cardinality '3,4' is not understood; 'fom.Odd' is unbounded",
        ),
        (
            "warning",
            where(tmp_path, a, "0</card"),
            "sequence or array 'fom.None0' of size 0 can hold no elements",
        ),
    ]


def test_stl_uses_fom_types(tmp_path: Path) -> None:
    """§2.6, §7.5: qualified FOM types, an STL class extending a FOM class and hla.ObjectRoot,
    prefixed elements (§3.1), an upper-case suffix (§2.1), one load for two imports (§2.5)."""
    objects = object_class(
        "Vehicle",
        attribute("Odo", "Meters", update="Static"),
        attribute("Label", "HLAunicodeString", semantics="Optional. a label"),
    )
    a = module(objects=objects, data=simple("Meters", "HLAfloat64BE", "meter (m)"))
    b = (
        module("B", data=simple("Other"))
        .replace("<", "<omt:")
        .replace("<omt:/", "</omt:")
        .replace("<omt:?xml", "<?xml")
    )
    b = b.replace('xmlns="', 'xmlns:omt="')
    for name, text in {"fom/a.XML": a, "fom/b.xml": b}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "lib.stl").write_text(
        'import "fom/b.xml"\npackage lib;\nstruct S { o : fom.Other }\n'
    )
    (tmp_path / "car.stl").write_text(
        'import "fom/a.XML"\nimport "lib.stl"\npackage cars;\n'
        "class Car : extends fom.Vehicle { var speed : fom.Meters [writable]; }\n"
        "class Root : extends hla.ObjectRoot { }\n"
    )
    with contextlib.chdir(tmp_path):
        result = sengen.load([tmp_path / "car.stl"])
    assert result.diagnostics == ()
    program = result.program
    assert program is not None
    car = program.find("cars.Car")
    assert isinstance(car, m.ClassType)
    assert [p.name for p in car.all_properties] == ["rtiId", "odo", "label", "speed"]
    assert car.all_properties[2].type.qualified_name == "hla.MaybeString"
    assert [a.name for a in car.constructor.arguments] == ["odo"]
    meters = program.find("fom.Meters")
    assert isinstance(meters, m.QuantityType) and meters.unit_name == "m"
    assert program.find("fom.Other") is not None
    assert [f.display for f in program.files].count("hla.stl") == 1


def test_stl_type_clashing_with_a_fom_type(tmp_path: Path) -> None:
    (tmp_path / "fom").mkdir()
    (tmp_path / "fom/a.xml").write_text(module(data=simple("Meters")), encoding="utf-8")
    (tmp_path / "x.stl").write_text("package fom;\nstruct Meters { a : i32 }\n")
    (tmp_path / "y.stl").write_text('import "fom/a.xml"\npackage y;\n')
    with contextlib.chdir(tmp_path):
        result = sengen.load([tmp_path / "x.stl", tmp_path / "y.stl"])
    (error,) = found(result)
    assert error == (
        "error",
        where(tmp_path, "fom/a.xml", "Meters"),
        "There is already a type named 'fom.Meters'",
    )


def test_a_folder_never_satisfies_a_fom_import(tmp_path: Path) -> None:
    (tmp_path / "fom/a.xml").mkdir(parents=True)
    (error,) = found(run(tmp_path, {}))
    # The loader's message for an import that names no file (stl.md §4.2), at the string.
    assert error[:2] == ("error", "case.stl:1:8") and "'fom/a.xml'" in error[2]


def test_a_large_fom_is_checked_in_bounded_time(tmp_path: Path) -> None:
    """The bench checks a 10 MB FOM with 100,000 enumerators (≤ 10 s); here a fifth of it."""
    items = [(f"Value_{i}", str(i)) for i in range(20_000)]
    data = "".join(enum(f"Big{k}", "HLAinteger32BE", *items[k::4]) for k in range(4))
    started = time.perf_counter()
    result = run(tmp_path, {"fom/a.xml": module(data=data)})
    elapsed = time.perf_counter() - started
    assert result.program is not None
    big = result.program.find("fom.Big3")
    assert isinstance(big, m.EnumType) and big.enumerators[-1].key == 19_999
    assert elapsed < 4.0


def test_class_and_interaction_hierarchies_that_loop(tmp_path: Path) -> None:
    """Scaffolding that names a class defined below it: errors, not endless recursion."""
    objects = (
        "<objectClass><name>X</name>" + object_class("Y") + "</objectClass>"
        "<objectClass><name>Y</name>" + object_class("X") + "</objectClass>"
    )
    interactions = (
        "<interactionClass><name>P</name>" + interaction("Q") + "</interactionClass>"
        "<interactionClass><name>Q</name>" + interaction("P") + "</interactionClass>"
    )
    result = run(tmp_path, {"fom/a.xml": module(objects=objects, interactions=interactions)})
    messages = [m for _, _, m in found(result)]
    assert "cyclic class hierarchy: Y -> X -> Y" in messages
    # §9.7: the first element named P is the scaffolding, so P is not found there.
    assert "could not find interaction 'P'" in messages


def test_incremental_build_depends_on_the_whole_set(tmp_path: Path) -> None:
    """fom.md §10.6: every file of the set, and its folders' listings, are build inputs."""
    run(tmp_path, {"fom/a.xml": module(data=simple("Meters")), "other/b.xml": module("B")})

    def build() -> sengen.GenerateResult:
        with contextlib.chdir(tmp_path):
            return sengen.generate([tmp_path / "case.stl"], output=tmp_path / "gen", format=False)

    assert build().written
    assert build().up_to_date
    (tmp_path / "other/b.xml").write_text(module("B", data=simple("Other")), encoding="utf-8")
    assert not build().up_to_date  # a module outside the import closure changed
    assert build().up_to_date
    (tmp_path / "other/c.xml").write_text(module("C"), encoding="utf-8")
    assert not build().up_to_date  # a new module


def test_a_representation_of_a_module_that_is_no_dependency(tmp_path: Path) -> None:
    """§6.1: basicData are visible through dependencies only; a note names the declaring one."""
    basic = (
        "<basicDataRepresentations><basicData><name>Word</name>"
        "<encoding>16-bit unsigned integer</encoding></basicData></basicDataRepresentations>"
    )
    files = {"fom/a.xml": module(data=simple("Size", "Word")), "fom/b.xml": module("B", data=basic)}
    result = run(tmp_path, files)
    (error,) = result.diagnostics
    assert error.message == "data representation 'Word' is not yet supported"
    note = error.notes[0]
    assert f"{note.file}:{note.line}:{note.column}" == where(tmp_path, "fom/b.xml", "Word")
    files["fom/a.xml"] = module(deps=("B",), data=simple("Size", "Word"))
    ok = run(tmp_path, files)
    assert ok.program is not None
    size = ok.program.find("fom.Size")
    assert isinstance(size, m.AliasType) and size.target.name == "u16"


def test_duplicates_across_modules_and_mapped_members(tmp_path: Path) -> None:
    """§5.6 across two modules of one package; §7.4 for mapped events; §9.5's transport."""
    interactions = interaction("Bang", transport="HLAsometimes") + interaction("Ping")
    files = {
        "fom/a.xml": module(
            data=simple("UUID"), objects=object_class("Thing"), interactions=interactions
        ),
        "fom/b.xml": module("B", data=simple("UUID")),
        "mapping.xml": '<senMapping><class name="Thing">\n<event hlaInteraction="Bang"/>\n'
        '<event hlaInteraction="Ping"/>\n<event hlaInteraction="Ping"/>\n</class></senMapping>\n',
    }
    result = run(tmp_path, files)
    assert found(result) == [
        (
            "error",
            where(tmp_path, "fom/a.xml", "HLAsometimes"),
            "unknown transport mode 'HLAsometimes'",
        ),
        ("error", where(tmp_path, "fom/b.xml", "UUID"), "There is already a type named 'fom.UUID'"),
        (
            "error",
            "mapping.xml:4:1",
            "Type 'fom.Thing': error in class 'Thing' spec: event with repeated name 'ping'",
        ),
    ]
