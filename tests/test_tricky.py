"""stl.md §12: one test per tricky case, on the corpus location the spec gives.

Where an item is about rejection, a small inline STL file (in ``tmp_path``, loaded with that folder
as the working directory so display paths are bare file names) shows the rejected form next to the
accepted one. Items 1-20 follow the spec's numbering.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import event, find_type, load_file, method, program_of, prop
from corpus_layout import corpus_root

import sengen
from sengen import Diagnostic
from sengen.stl.model import (
    NATIVES,
    AliasType,
    ClassType,
    EnumType,
    OptionalType,
    PropertyCategory,
    QuantityType,
    SequenceType,
    StructType,
    TransportMode,
    VariantType,
)

TYPE_SPECS = "libs/kernel/stl/sen/kernel/type_specs.stl"
KERNEL_BASIC_TYPES = "libs/kernel/stl/sen/kernel/basic_types.stl"
LOG = "libs/kernel/stl/sen/kernel/log.stl"
BUS_PROTOCOL = "libs/kernel/src/bus/bus_protocol.stl"
REST_TYPES = "components/rest/stl/types.stl"
SHAPES = "examples/packages/shapes/stl/shapes.stl"
SHAPE_LISTENER = "examples/packages/shapes/stl/shape_listener.stl"
TEST_IO = "libs/core/test/io/stl/test_io.stl"
COMPLEX = "libs/core/test/lang/stl/stl_resolver_test/complex_stl_file.stl"
OBJECT_SYNC = "libs/kernel/test/integration/object_sync/stl/object_sync.stl"
UTIL_MY_PACKAGE = "test/util/my_package/stl/my_package/"
RUNTIME = "libs/kernel/test/integration/runtime_compatibility/runtime_{}/stl/runtime/runtime.stl"
REPLAY_TEST_CLASS = "components/replayer/test/stl/replay_test_class.stl"
INTEREST_FILTERING = "libs/kernel/test/integration/interest_filtering/stl/interest_filtering.stl"
UNBOUNDED = "unbounded dynamic properties with non-confirmed transport mode may cause data loss"


def load_inline(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    name: str = "inline.stl",
    include_paths: tuple[Path, ...] = (),
) -> sengen.LoadResult:
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text, encoding="utf-8")
    return sengen.load([name], include_paths=include_paths)


def mutated(path: str, old: str, new: str) -> str:
    """The text of corpus file ``path`` with the single occurrence of ``old`` replaced."""
    text = (corpus_root() / path).read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur exactly once in {path}"
    return text.replace(old, new)


def where(d: Diagnostic) -> tuple[str, str, int, int]:
    return (d.severity.value, d.file, d.line, d.column)


def only_error(result: sengen.LoadResult) -> Diagnostic:
    assert result.program is None
    (error,) = result.diagnostics
    assert error.is_error, error.format_header()
    return error


def assert_clean(result: sengen.LoadResult) -> None:
    assert result.diagnostics == (), [d.format_header() for d in result.diagnostics]
    assert result.program is not None


# 1. Keywords are reserved everywhere; look-alikes are not keywords.


def test_01_keyword_look_alikes_are_identifiers() -> None:
    program = program_of(TYPE_SPECS)
    field_spec = find_type(program, "sen.kernel.StructTypeFieldSpec", StructType)
    assert [(f.name, f.location.line) for f in field_spec.fields][-1] == ("type", 155)
    class_spec = find_type(program, "sen.kernel.ClassTypeSpec", StructType)
    assert ("constructor", 461) in [(f.name, f.location.line) for f in class_spec.fields]
    method_spec = find_type(program, "sen.kernel.MethodSpec", StructType)
    assert ("deferred", 370) in [(f.name, f.location.line) for f in method_spec.fields]
    transport = find_type(program, "sen.kernel.TransportModeSpec", EnumType)
    assert [(e.name, e.location.line) for e in transport.enumerators] == [
        ("unicast", 280),
        ("multicast", 281),
        ("confirmed", 282),
    ]
    rest = program_of(REST_TYPES)
    status = find_type(rest, "sen.components.rest.Status", EnumType)
    assert [(e.name, e.location.line) for e in status.enumerators] == [("open", 5), ("close", 6)]
    rel_type = find_type(rest, "sen.components.rest.RelType", EnumType)
    assert (rel_type.enumerators[-1].name, rel_type.enumerators[-1].location.line) == ("def", 18)
    interval = find_type(program_of(SHAPE_LISTENER), "shapes.DistanceInterval", StructType)
    assert [(f.name, f.location.line) for f in interval.fields] == [("min", 8), ("max", 9)]


@pytest.mark.parametrize("word", ["optional", "SELECT", "struct", "AND", "event", "true"])
def test_01_keyword_as_field_name_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, word: str
) -> None:
    result = load_inline(tmp_path, monkeypatch, f"package p;\nstruct A {{\n  {word}: u32\n}}\n")
    error = only_error(result)
    assert where(error) == ("error", "inline.stl", 3, 3)
    assert error.message.startswith("Expected struct field name"), error.message


def test_01_lowercase_look_alikes_accepted_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        "package p;\n"
        "struct A { type: u32, constructor: u8, deferred: u8, min: u8, max: u8, from: u8,"
        " in: u8, select: u8 }\n"
        "enum E : u8 { unicast, multicast, confirmed, open, close, def }\n"
    )
    assert_clean(load_inline(tmp_path, monkeypatch, text))


# 2. Trailing commas everywhere.


def test_02_trailing_commas() -> None:
    program = program_of(TYPE_SPECS)
    field_spec = find_type(program, "sen.kernel.StructTypeFieldSpec", StructType)
    assert [f.name for f in field_spec.fields] == ["name", "description", "type"]
    basic_type = find_type(program, "sen.kernel.BasicType", EnumType)
    assert [e.name for e in basic_type.enumerators] == [
        "booleanType",
        "stringType",
        "durationType",
        "timestampType",
    ]
    assert basic_type.enumerators[-1].location.line == 40
    ether = program_of("components/ether/stl/configuration.stl")
    discovery = find_type(ether, "sen.components.ether.DiscoveryConfig", VariantType)
    assert [(a.key, a.type.name) for a in discovery.alternatives] == [
        (0, "MulticastDiscovery"),
        (1, "TcpDiscovery"),
    ]
    traits = program_of("libs/core/test/meta/stl/test_variant_traits.stl")
    mock = find_type(traits, "test_variant_traits.MockVariant", VariantType)
    assert [a.type.name for a in mock.alternatives] == [
        "MockStruct",
        "f64",
        "u32",
        "bool",
        "MaybeString",
    ]
    assert mock.alternatives[-1].location.line == 17


# 3. A comment after a trailing comma belongs to that element.


def test_03_comment_after_trailing_comma() -> None:
    word_size = find_type(program_of(KERNEL_BASIC_TYPES), "sen.kernel.WordSize", EnumType)
    last = word_size.enumerators[-1]
    assert (last.name, last.location.line, last.description) == ("bits64", 30, "64-bit processor")


# 4. A multi-line doc block before the last field, then `,` and `}`.


def test_04_doc_block_before_last_field() -> None:
    logger = find_type(program_of(LOG), "sen.kernel.log.LoggerConfig", StructType)
    pattern = logger.fields[-1]
    assert (pattern.name, pattern.location.line) == ("pattern", 95)
    assert pattern.description == (
        "Formatting for the sinks in this logger. Does nothing if empty. Note that this replaces "
        "the format of the associated sinks, and this could affect other loggers using those "
        "sinks. The config is applied following the order of the Config.loggers field."
    )


# 5. `///` keeps a slash.


def test_05_triple_slash_keeps_a_slash() -> None:
    program = program_of(SHAPES)
    described = [
        find_type(program, "shapes.Centimeters", QuantityType),
        find_type(program, "shapes.Degrees", QuantityType),
        find_type(program, "shapes.Color", EnumType),
    ]
    assert [(t.name, t.location.line, t.description) for t in described] == [
        ("Centimeters", 4, "/ Centimeters encoded in 32-bit floats."),
        ("Degrees", 7, "/ Degrees encoded in 32-bit floats."),
        ("Color", 10, "/ A color enumeration."),
    ]


# 6. Section comments merge into the next description.


def test_06_section_comments_merge() -> None:
    visited = find_type(program_of(TEST_IO), "test_io.VisitedAirports", SequenceType)
    assert visited.description == "sequences enum sequence"
    transport = "libs/kernel/test/integration/transport/transport_1/stl/transport/transport.stl"
    test_class = find_type(program_of(transport), "sen.test.TestClass", ClassType)
    assert prop(test_class, "prop1").description == (
        "properties writable, confirmed in the writer scheme"
    )
    assert prop(test_class, "prop2").description == "writable, bestEffort in the writer scheme"
    assert method(test_class, "testMethod").description == (
        "methods const, confirmed in the writer scheme"
    )


# 7. `@param` cuts the description, and sengen keeps its text for the argument.


def test_07_param_blocks() -> None:
    calculator = find_type(
        program_of("examples/packages/calculators/stl/calculator.stl"),
        "calculators.Calculator",
        ClassType,
    )
    add = method(calculator, "add")
    assert add.description == 'Returns "a + b" and sets the last result to it.'
    assert [(a.name, a.description) for a in add.arguments] == [
        ("a", "left-hand operator."),
        ("b", "right-hand operator."),
    ]
    animal = find_type(
        program_of("examples/packages/animals/stl/animal.stl"), "animals.Animal", ClassType
    )
    advance = method(animal, "advance")
    assert advance.description == (
        "Advances a steps in the x direction and b steps in the y direction."
    )
    assert [a.description for a in advance.arguments] == [
        "meters to advance in the x direction.",
        "meters to advance in the y direction.",
    ]
    valid_class = find_type(program_of(COMPLEX), "stl_resolver_test.ValidClass", ClassType)
    with_args = event(valid_class, "eventWithArguments")
    assert with_args.description == "Description of an event with arguments"
    assert [(a.name, a.description) for a in with_args.arguments] == [
        ("when", "describes when the event has happened"),
        ("where", "describes where the event has happened"),
    ]
    listener = find_type(program_of(SHAPE_LISTENER), "shapes.ShapeListener", ClassType)
    start = method(listener, "startListeningTo")
    assert start.description == (
        "Start listening for shapes that fulfil certain conditions. "
        "Returns the name of the query that was created."
    )
    assert [a.description for a in start.arguments] == [
        "the bus where to find the shapes.",
        "if present, the color that the shape must have.",
        "if present, the interval along the x axis where the shape should be.",
        "if present, the interval along the y axis where the shape should be.",
    ]


def test_07_param_errors_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "package p;\nclass C {\n  // Does it.\n  // @param x nothing\n  fn f(a: u8);\n}\n"
    error = only_error(load_inline(tmp_path, monkeypatch, text))
    assert where(error) == ("error", "inline.stl", 5, 6)
    assert error.message == "Documented parameter 'x' was not found in the argument list."
    assert [(n.file, n.line, n.column) for n in error.notes] == [("inline.stl", 4, 3)]
    text = "package p;\nclass C {\n  // @param a one\n  // @param a two\n  event e(a: u8);\n}\n"
    error = only_error(load_inline(tmp_path, monkeypatch, text, "twice.stl"))
    assert where(error) == ("error", "twice.stl", 5, 9)
    assert error.message == "Parameter 'a' is documented more than once."
    assert [(n.file, n.line) for n in error.notes] == [("twice.stl", 4)]


# 8. Three spellings of an empty struct.


def test_08_empty_structs() -> None:
    sleep = find_type(program_of(KERNEL_BASIC_TYPES), "sen.kernel.SystemSleep", StructType)
    assert (sleep.location.line, sleep.fields, sleep.parent) == (77, (), None)
    assert sleep.description == "Use the native system sleep"
    shell = program_of("components/shell/stl/remote_shell.stl")
    semicolon_structs = [t for t in shell.types if t.location.line in range(3, 12)]
    assert len(semicolon_structs) == 9
    assert all(isinstance(t, StructType) and t.fields == () for t in semicolon_structs)
    assert semicolon_structs[0].name == "SaveCursorPosition"
    stdout = find_type(program_of(LOG), "sen.kernel.log.Stdout", StructType)
    assert (stdout.location.line, stdout.fields) == (16, ())
    incompatible = find_type(
        program_of(BUS_PROTOCOL), "sen.kernel.RuntimeIncompatibleType", StructType
    )
    assert (incompatible.location.line, incompatible.fields) == (74, ())
    hypersphere = find_type(program_of(TEST_IO), "test_io.Hypersphere", StructType)
    assert hypersphere.location.line == 78
    assert hypersphere.fields == ()
    assert hypersphere.parent is not None and hypersphere.parent.name == "Sphere"


# 9. Free spacing.


def test_09_free_spacing() -> None:
    bus = program_of(BUS_PROTOCOL)
    states = find_type(bus, "sen.kernel.ObjectStateList", SequenceType)
    assert states.location.line == 169
    assert states.element is bus.find("sen.kernel.ObjectState")
    basic = program_of(KERNEL_BASIC_TYPES)
    assert find_type(basic, "sen.kernel.Priority", EnumType).storage is NATIVES["u32"]
    assert find_type(basic, "sen.kernel.OsKind", EnumType).storage is NATIVES["u8"]
    kernel_objects = program_of("libs/kernel/stl/sen/kernel/kernel_objects.stl")
    clock = find_type(kernel_objects, "sen.kernel.VirtualKernelClock", ClassType)
    assert clock.parent is kernel_objects.find("sen.kernel.VirtualClock")
    test_object = find_type(program_of(OBJECT_SYNC), "object_sync.TestObject", ClassType)
    assert [(e.name, e.transport) for e in test_object.events] == [
        ("bestEffortEvent", TransportMode.UNICAST),
        ("confirmedEvent", TransportMode.CONFIRMED),
        ("multicastEvent", TransportMode.MULTICAST),
    ]
    const_method = method(test_object, "constMethod")
    assert (const_method.return_type, const_method.const) == (NATIVES["u32"], True)
    assert method(test_object, "localMethod").local
    assert method(test_object, "doUpdate").return_type is None
    geometry = find_type(program_of(SHAPES), "shapes.Geometry", VariantType)
    assert [a.type.name for a in geometry.alternatives] == ["Triangle", "Rectangle", "Circle"]
    timer = find_type(
        program_of("examples/packages/timer/stl/timer.stl"), "timer.RunningState", EnumType
    )
    assert [e.name for e in timer.enumerators] == ["off", "on"]
    point3d = find_type(program_of(TEST_IO), "test_io.Point3D", StructType)
    assert point3d.description == "one level of inheritance"


# 10. Statement order is free, but use is ordered.


def test_10_statement_order() -> None:
    interpreter = program_of("components/py/stl/python_interpreter.stl")
    (interpreter_file,) = [
        f for f in interpreter.files if f.display == "components/py/stl/python_interpreter.stl"
    ]
    assert interpreter_file.package == "sen.components.py"
    assert [p.name for p in interpreter_file.imports] == ["configuration.stl"]
    test_stl = program_of(UTIL_MY_PACKAGE + "test.stl")
    assert find_type(test_stl, "my_package.Test", StructType).package == "my_package"
    # No `;` after an import (basic_types.stl:1): the file loads cleanly.
    assert_clean(load_file(KERNEL_BASIC_TYPES))
    # The comment between the imports and `package` is dropped (type_specs.stl:3-4).
    integral = find_type(program_of(TYPE_SPECS), "sen.kernel.IntegralType", EnumType)
    assert integral.description == "built-in integrals"
    # …whereas a comment after `package` leads the first declaration (db basic_types.stl:3-7).
    out_settings = find_type(
        program_of("libs/db/stl/sen/db/basic_types.stl"), "sen.db.OutSettings", StructType
    )
    assert out_settings.description.startswith("IMPORTANT NOTE: Types defined in this file")
    assert out_settings.description.endswith("being # the version number. Settings for outputs")
    # type_specs.stl uses every type strictly after it appears, and resolves in one pass.
    assert_clean(load_file(TYPE_SPECS))


def test_10_use_before_declaration_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "package p;\nstruct A { b : B }\nstruct B {}\n"
    error = only_error(load_inline(tmp_path, monkeypatch, text))
    assert (where(error), error.message) == (("error", "inline.stl", 2, 16), "type not found: 'B'")
    reordered = "package p;\nstruct B {}\nstruct A { b : B }\n"
    assert_clean(load_inline(tmp_path, monkeypatch, reordered, "reordered.stl"))


def test_10_semicolon_after_import_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x.stl").write_text("package x;\n", encoding="utf-8")
    error = only_error(load_inline(tmp_path, monkeypatch, 'import "x.stl";\npackage p;\n'))
    assert where(error) == ("error", "inline.stl", 1, 15)
    assert error.message.startswith("Expected statement"), error.message


# 11. Common-package-prefix lookup.


def test_11_common_package_prefix() -> None:
    program = program_of(UTIL_MY_PACKAGE + "test.stl")
    test = find_type(program, "my_package.Test", StructType)
    base = find_type(program, "my_package.sub.BaseTest", StructType)
    assert test.parent is base
    assert base.location.file == UTIL_MY_PACKAGE + "test_sub.stl"
    assert [f.name for f in test.all_fields] == ["val", "tmp"]


# 12. Qualified references across packages in every position.


def test_12_qualified_references() -> None:
    basic = program_of(KERNEL_BASIC_TYPES)
    params = find_type(basic, "sen.kernel.KernelParams", StructType)
    (log_config,) = [f for f in params.fields if f.name == "logConfig"]
    assert log_config.location.line == 175
    assert log_config.type is find_type(basic, "sen.kernel.log.Config", StructType)
    logmaster = program_of("components/logmaster/stl/logmaster.stl")
    level = prop(find_type(logmaster, "sen.components.logmaster.Logger", ClassType), "level")
    assert level.location.line == 9
    assert level.type is find_type(logmaster, "sen.kernel.log.LogLevel", EnumType)
    recorder = program_of("components/recorder/stl/sen/components/recorder/recorder.stl")
    fetch = method(find_type(recorder, "sen.components.recorder.Recorder", ClassType), "fetchStats")
    assert fetch.location.line == 27
    assert fetch.return_type is find_type(recorder, "sen.db.OutStats", StructType)
    level1 = program_of("test/util/cmake_packages/level1/stl/level1.stl")
    level1_class = find_type(level1, "level1.Level1Class", ClassType)
    assert level1_class.parent is find_type(level1, "level0.Level0Class", ClassType)


# 13. Same-package types must be imported directly.


SUBCLASS = """import "stl/inheritance/my_class.stl"

package inheritance;

class OtherSubClass : extends MyClass
{
  var aEnum : MyEnum;
}
"""


def test_13_same_package_types_need_a_direct_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = program_of("test/util/inheritance/stl/inheritance/my_subclass.stl")
    subclass = find_type(program, "inheritance.MySubClass", ClassType)
    assert prop(subclass, "aEnum").type is find_type(program, "inheritance.MyEnum", EnumType)
    assert subclass.parent is find_type(program, "inheritance.MyClass", ClassType)
    # Without the direct import of basic_types.stl, MyEnum (reachable only through my_class.stl)
    # is not visible.
    include = (corpus_root() / "test/util/inheritance",)
    error = only_error(load_inline(tmp_path, monkeypatch, SUBCLASS, "sub.stl", include))
    assert where(error) == ("error", "sub.stl", 7, 15)
    # Sen's text; sengen may add detail after it (a hint naming the file to import).
    assert error.message.startswith("expecting property type: 'MyEnum'"), error.message
    direct = 'import "stl/inheritance/basic_types.stl"\n' + SUBCLASS
    assert_clean(load_inline(tmp_path, monkeypatch, direct, "direct.stl", include))


# 14. Unknown unit used as "unitless".


def test_14_unknown_unit_is_a_warning() -> None:
    result = load_file(UTIL_MY_PACKAGE + "basic_types.stl")
    (warning,) = result.diagnostics
    assert where(warning) == ("warning", UTIL_MY_PACKAGE + "basic_types.stl", 87, 15)
    assert warning.message == "unknown unit 'u16': the quantity is treated as unitless"
    assert result.program is not None
    unitless = find_type(result.program, "my_package.UnitlessQuantity", QuantityType)
    assert (unitless.value_type, unitless.unit_name, unitless.unit) == (NATIVES["u16"], "u16", None)
    assert (unitless.minimum, unitless.maximum) == (0.0, 511.0)
    meters = find_type(result.program, "my_package.MetersU16", QuantityType)
    assert meters.unit is not None and meters.unit.abbreviation == "m"


# 15. Quantity bounds.


def test_15_quantity_bounds() -> None:
    cases = [
        (RUNTIME.format(1), "TestQuantity", NATIVES["i64"], "deg", 0.0, 50.0),
        (RUNTIME.format(6), "Frequency", NATIVES["f32"], "hz", -100.0, 100.0),
        (RUNTIME.format(6), "Angle", NATIVES["f32"], "rad", 0.0, 3.14),
        (RUNTIME.format(3), "Speed", NATIVES["i32"], "m_per_s", 0.0, 120.0),
    ]
    for path, name, value_type, unit, minimum, maximum in cases:
        quantity = find_type(program_of(path), f"sen.test.runtime.{name}", QuantityType)
        assert (quantity.value_type, quantity.unit_name) == (value_type, unit), name
        assert (quantity.minimum, quantity.maximum) == (minimum, maximum), name
        assert type(quantity.minimum) is float and type(quantity.maximum) is float, name
        assert quantity.unit is not None


def test_15_bound_outside_value_type_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "package p;\nquantity<u8, m> Q [min: -1, max: 10];\n"
    error = only_error(load_inline(tmp_path, monkeypatch, text))
    assert where(error) == ("error", "inline.stl", 2, 17)
    assert error.message == "Type 'p.Q': minimum value (-1.0) cannot be represented using u8"


# 16. Whether a property needs `[confirmed]` depends on the shape of its type.


def test_16_bounded_property_rule_on_corpus() -> None:
    replay = find_type(program_of(REPLAY_TEST_CLASS), "replayer_test.DummyReplayObj", ClassType)
    assert prop(replay, "strProp").transport is TransportMode.CONFIRMED
    struct_prop = prop(replay, "structProp")
    assert (struct_prop.transport, struct_prop.category) == (
        TransportMode.MULTICAST,
        PropertyCategory.DYNAMIC_RO,
    )
    filtering = find_type(
        program_of(INTEREST_FILTERING), "interest_filtering.TestObject", ClassType
    )
    assert prop(filtering, "structProp").transport is TransportMode.CONFIRMED
    sync = program_of(OBJECT_SYNC)
    multicast = prop(find_type(sync, "object_sync.TestObject", ClassType), "multicastProp")
    assert multicast.transport is TransportMode.MULTICAST
    assert multicast.type is find_type(sync, "object_sync.OptF32", OptionalType)
    shell = find_type(
        program_of("components/shell/stl/shell.stl"), "sen.components.shell.Shell", ClassType
    )
    config = prop(shell, "config")
    assert (config.location.line, config.category) == (52, PropertyCategory.STATIC_RW)
    subclass_program = program_of("test/util/inheritance/stl/inheritance/my_subclass.stl")
    subclass = find_type(subclass_program, "inheritance.MySubClass", ClassType)
    sequence = prop(subclass, "aSequence")
    assert (sequence.location.line, sequence.transport) == (17, TransportMode.MULTICAST)
    assert isinstance(sequence.type, SequenceType) and sequence.type.max_size == 10


@pytest.mark.parametrize(
    ("path", "old", "new", "line"),
    [
        (REPLAY_TEST_CLASS, "strProp : string [confirmed];", "strProp : string;", 44),
        (REPLAY_TEST_CLASS, "strProp : string [confirmed];", "strProp : string [writable];", 44),
        (
            REPLAY_TEST_CLASS,
            "strProp : string [confirmed];",
            "strProp : string [bestEffort];",
            44,
        ),
        (
            INTEREST_FILTERING,
            "structProp : TestStruct [confirmed];",
            "structProp : TestStruct;",
            30,
        ),
    ],
)
def test_16_dropping_confirmed_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str, old: str, new: str, line: int
) -> None:
    name = Path(path).name
    error = only_error(load_inline(tmp_path, monkeypatch, mutated(path, old, new), name))
    assert where(error) == ("error", name, line, 7)
    assert error.message.startswith(UNBOUNDED), error.message


def test_16_static_or_confirmed_makes_it_valid_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (
        "package p;\nclass C {\n  var a : string [confirmed];\n"
        "  var b : string [writable, confirmed];\n  var c : string [static];\n"
        "  var d : string [static_no_config];\n}\n"
    )
    assert_clean(load_inline(tmp_path, monkeypatch, text))


# 17. Variants with native and alias alternatives.


def test_17_variants_with_native_and_alias_alternatives() -> None:
    program = program_of(TEST_IO)
    code = find_type(program, "test_io.AirportPriorityCode", VariantType)
    assert [(a.key, a.type) for a in code.alternatives] == [
        (0, find_type(program, "test_io.Decongest", StructType)),
        (1, find_type(program, "test_io.PriorityStdCode", EnumType)),
        (2, NATIVES["u64"]),
        (3, NATIVES["bool"]),
    ]
    basic = program_of(UTIL_MY_PACKAGE + "basic_types.stl")
    with_alias = find_type(basic, "my_package.MyVariantWithAlias", VariantType)
    string_alias = find_type(basic, "my_package.StringAlias", AliasType)
    assert string_alias.target is NATIVES["string"]
    assert [a.type for a in with_alias.alternatives] == [string_alias, NATIVES["u8"]]


def test_17_duplicate_alternatives_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    distinct = (
        "package p;\nalias S string;\nalias A u8;\nalias B u8;\nvariant V { S, string, A, B, u8 }\n"
    )
    assert_clean(load_inline(tmp_path, monkeypatch, distinct))
    twice = "package p;\nvariant V { string, string }\n"
    error = only_error(load_inline(tmp_path, monkeypatch, twice, "twice.stl"))
    assert where(error) == ("error", "twice.stl", 2, 21)
    assert error.message == "variant 'V' contains type 'string' more than once."


# 18. Signed and wide enum storage.


def test_18_signed_and_wide_enum_storage() -> None:
    airport = find_type(program_of(TEST_IO), "test_io.AirportCode", EnumType)
    assert (airport.location.line, airport.storage) == (14, NATIVES["i16"])
    assert NATIVES["i16"].signed
    test_enum = find_type(program_of(RUNTIME.format(3)), "sen.test.runtime.TestEnum", EnumType)
    assert (test_enum.location.line, test_enum.storage) == (24, NATIVES["i64"])
    assert [(e.key, e.name) for e in test_enum.enumerators] == [
        (i, f"elem{i + 1}") for i in range(5)
    ]


# 19. Attribute combinations.


def test_19_attribute_combinations() -> None:
    my_class = find_type(
        program_of(UTIL_MY_PACKAGE + "my_class.stl"), "my_package.MyClass", ClassType
    )
    prop3 = prop(my_class, "prop3")
    assert prop3.location.line == 15
    assert prop3.tags == ("someTag", "anotherTag")
    assert (prop3.category, prop3.transport) == (
        PropertyCategory.DYNAMIC_RW,
        TransportMode.CONFIRMED,
    )
    listener = find_type(program_of(OBJECT_SYNC), "object_sync.Listener", ClassType)
    query = prop(listener, "query")
    assert (query.location.line, query.category, query.transport) == (
        18,
        PropertyCategory.STATIC_RW,
        TransportMode.CONFIRMED,
    )
    program = program_of(COMPLEX)
    parent = find_type(program, "stl_resolver_test.ValidParentClass", ClassType)
    static_ro = prop(parent, "staticNonConfigurablePropertyFromParent")
    assert (static_ro.location.line, static_ro.category, static_ro.transport) == (
        58,
        PropertyCategory.STATIC_RO,
        TransportMode.UNICAST,
    )
    valid_class = find_type(program, "stl_resolver_test.ValidClass", ClassType)
    local = method(valid_class, "localMethod")
    assert (local.location.line, local.local, local.const, local.transport) == (
        94,
        True,
        False,
        TransportMode.CONFIRMED,
    )


# 20. Names valid in STL that collide in Python are not STL errors.


def test_20_python_collisions_are_not_stl_errors() -> None:
    for path, package in [
        ("components/recorder/test/stl/recorder_test_class.stl", "recorder_test"),
        ("libs/db/test/stl/db_test_class.stl", "db_test"),
    ]:
        assert_clean(load_file(path))
        other = find_type(program_of(path), f"{package}.OtherObj", ClassType)
        assert (
            prop(other, "altitude").location.line,
            event(other, "altitudeChanged").location.line,
        ) == (
            15,
            17,
        )
    chaos = "test/util/chaos_monkeys/stl/creator_monkeys/chaos_monkeys.stl"
    assert_clean(load_file(chaos))
    monkey = find_type(program_of(chaos), "creator_monkeys.MonkeyTestClass", ClassType)
    assert method(monkey, "emitTestEvent").location.line == 43
    assert event(monkey, "testEvent").location.line == 46
    churn = "libs/kernel/test/integration/stress_tests/high_churn_subs/stl/high_churn_subs.stl"
    assert_clean(load_file(churn))
    test_object = find_type(program_of(churn), "high_churn_subs.TestObject", ClassType)
    assert [(p.name, p.type) for p in test_object.properties] == [("property", NATIVES["f64"])]
    for path, package in [
        ("test/util/publish_types_manually/stl/struct_inheritance.stl", "StructInheritance"),
        ("libs/kernel/test/unit/test_kernel/stl/my_class.stl", "test"),
    ]:
        assert_clean(load_file(path))
        (stl_file,) = [f for f in program_of(path).files if f.display == path]
        assert stl_file.package == package
        assert stl_file.types and all(t.package == package for t in stl_file.types)
