"""Value types as generated classes see them: structs, variants, enums, time values, bytes, checks
and their messages, STL equality for change detection, zero values, and the registry (codegen.md
§1, §3.10; runtime.md §1.9).

The types come from ``tests/objects_stl`` (``objtest.types``), generated once for this module
under the root package ``objgen_values``; the registry tests generate the two small alternative
builds ``regalt1`` and ``regalt2`` of ``regtest`` on their own.
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import math
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from objects_support import STL_ROOT, Tree, cycle, generate_tree, imported_tree, in_cycle, on_path

from sengen.runtime import (
    ConfigError,
    Duration,
    RegistryError,
    TimeStamp,
    VariantTagError,
    set_checks,
)
from sengen.runtime.objects import values
from sengen.runtime.objects.checks import checks
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.meta import (
    DURATION,
    TIMESTAMP,
    U8,
    QuantityMeta,
    SequenceMeta,
    resolve_alias,
)
from sengen.runtime.objects.registry import OWN_SCOPE, registry

ROOT = "objgen_values"
BUS = "local.bus"
MS = 1_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("values"), ROOT) as generated:
        yield generated


@pytest.fixture
def checks_off() -> Iterator[None]:
    previous = checks.enabled
    set_checks(False)
    try:
        yield
    finally:
        set_checks(previous)


def new_gauge(tree: Tree, name: str = "g") -> Any:
    gauge = tree.devices.GaugeBase(name, serial="S", gain=1.0)
    gauge.set_tag_id(1)
    gauge.set_slot(1)
    return gauge


def registered_gauge(tree: Tree, context: Context, name: str = "g") -> Any:
    gauge = new_gauge(tree, name)
    gauge._bind_(context, BUS, 0)
    return gauge


def configured(tree: Tree, **config: object) -> Any:
    """A Gauge built from configuration values keyed by STL name."""
    return tree.devices.GaugeBase.from_config("o", {"serial": "S", "gain": 1.0, **config})


def config_problems(tree: Tree, **config: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        configured(tree, **config)
    problems: list[str] = caught.value.problems
    return problems


def commits_of(tree: Tree, name: str, first: Any, second: Any) -> list[Any]:
    """The values the owner's ``on_<name>_changed`` reports after writing ``first`` in one cycle
    and ``second`` in the next."""
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    seen: list[Any] = []
    in_cycle(owner, lambda: getattr(gauge, f"on_{name}_changed")(seen.append))
    setter = getattr(gauge, f"set_next_{name}")
    cycle(owner, 1 * MS, update=lambda: setter(first))
    cycle(owner, 2 * MS, update=lambda: setter(second))
    cycle(owner, 3 * MS)
    return seen


# -- structs ---------------------------------------------------------------------------------------


def test_a_struct_is_an_immutable_slotted_value(tree: Tree) -> None:
    point = tree.types.Point(1.0, y=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    # a new attribute is refused too (CPython 3.11's frozen slotted dataclass raises TypeError)
    with pytest.raises((AttributeError, TypeError)):
        point.extra = 1
    assert not hasattr(point, "extra")
    assert not hasattr(point, "__dict__")
    assert (point.x, point.y) == (1.0, 2.0)
    assert point == tree.types.Point(1.0, 2.0)
    assert hash(point) == hash(tree.types.Point(1.0, 2.0))
    assert repr(point) == "Point(x=1.0, y=2.0)"
    changed = dataclasses.replace(point, y=5.0)
    assert changed == tree.types.Point(1.0, 5.0) and point.y == 2.0


def test_a_struct_with_a_parent_subclasses_it_with_parent_fields_first(tree: Tree) -> None:
    point3 = tree.types.Point3(1.0, 2.0, 3.0)
    assert issubclass(tree.types.Point3, tree.types.Point)
    assert [f.name for f in dataclasses.fields(point3)] == ["x", "y", "z"]
    assert [f.stl_name for f in tree.types.Point3.META.fields] == ["x", "y", "z"]
    assert tree.types.Point3.META.parent is tree.types.Point.META
    # equality requires the same exact class, both ways
    assert point3 != tree.types.Point(1.0, 2.0)
    assert tree.types.Point(1.0, 2.0) != tree.types.Point3(1.0, 2.0, 0.0)
    assert tree.types.Point3(x=1.0, y=2.0, z=3.0) == point3


def test_a_subclass_value_is_refused_where_the_parent_is_declared(tree: Tree) -> None:
    gauge = new_gauge(tree)
    point3 = tree.types.Point3(1.0, 2.0, 3.0)
    with pytest.raises(ValueError) as caught:
        gauge.set_next_maybe_point(point3)
    assert str(caught.value) == (
        "value of type 'objtest.Point3' given where 'objtest.Point' is expected"
        " in property 'maybePoint' of 'objtest.Gauge'"
    )
    with pytest.raises(ValueError) as caught:
        gauge.set_next_value(tree.types.Value("Point", point3))
    assert str(caught.value) == (
        "value of type 'objtest.Point3' given where 'objtest.Point' is expected"
        " in property 'value.Point' of 'objtest.Gauge'"
    )
    # and a parent value where the subclass is declared
    spot = tree.types.Spot(tree.types.Point(0.0, 0.0), 1.0, 6)
    with pytest.raises(ValueError) as caught:
        gauge.set_next_spot(spot)
    assert str(caught.value) == (
        "expected objtest.Point3, got Point(x=0.0, y=0.0) in property 'spot.position' of"
        " 'objtest.Gauge'"
    )
    assert gauge.get_next_maybe_point() is None


def test_a_struct_from_configuration_is_built_field_by_field(tree: Tree) -> None:
    shape = configured(
        tree,
        shape={
            "mode": "running",
            "corners": [1, 2],
            "pair": [3, 4],
            "label": "L",
            "raw": [0, 255],
            "from": "1.5 s",
            "at": "1970-01-01T00:00:01Z",
        },
    ).shape
    types = tree.types
    assert type(shape) is types.Shape
    assert shape == types.Shape(
        types.Mode.running,
        None,  # an omitted optional field
        (1, 2),
        (3, 4),
        "L",
        b"\x00\xff",
        Duration(1_500_000_000),
        TimeStamp(1_000_000_000),
    )
    assert shape.from_ == Duration(1_500_000_000)
    problems = config_problems(tree, shape={"mode": "idle"})
    assert len(problems) == 1 and "missing field 'corners' of objtest.Shape" in problems[0]
    problems = config_problems(tree, spot={"position": {"x": 0, "y": 0, "z": 0}, "alt": 1, "w": 1})
    assert len(problems) == 1 and "struct objtest.Spot has no field 'w'" in problems[0]


# -- variants --------------------------------------------------------------------------------------


def test_variant_alternatives_of_the_same_python_type_stay_apart(tree: Tree) -> None:
    value = tree.types.Value
    assert value("u64", 1) != value("i32", 1)
    assert value("Label", "a") != value("string", "a")
    assert value("u64", 1) == value("u64", 1)
    assert hash(value("u64", 1)) == hash(value("u64", 1))
    assert [a.tag for a in value.META.alternatives] == [
        "u64",
        "i32",
        "Label",
        "string",
        "bool",
        "Point",
    ]
    assert [a.key for a in value.META.alternatives] == [0, 1, 2, 3, 4, 5]
    held = value("i32", -4)
    assert held.get("i32") == -4
    with pytest.raises(VariantTagError):
        held.get("u64")
    with pytest.raises(dataclasses.FrozenInstanceError):
        held.tag = "u64"


@pytest.mark.parametrize(
    ("first", "second"),
    [(("u64", 1), ("i32", 1)), (("Label", "a"), ("string", "a")), (("i32", 1), ("bool", True))],
)
def test_a_variant_changing_only_its_tag_is_a_change(
    tree: Tree, first: tuple[str, Any], second: tuple[str, Any]
) -> None:
    a, b = tree.types.Value(*first), tree.types.Value(*second)
    assert commits_of(tree, "value", a, b) == [a, b]


@pytest.mark.parametrize(
    ("tag", "value", "message"),
    [
        ("u64", -1, "value -1 does not fit in u64 in property 'value.u64' of 'objtest.Gauge'"),
        ("u64", True, "expected u64, got True in property 'value.u64' of 'objtest.Gauge'"),
        ("i32", 2**31, "value 2147483648 does not fit in i32 in property 'value.i32' of"),
        ("bool", 1, "expected bool, got 1 in property 'value.bool' of 'objtest.Gauge'"),
        ("Label", 3, "expected string, got 3 in property 'value.Label' of 'objtest.Gauge'"),
        ("nope", 1, "'nope' is not an alternative of objtest.Value in property 'value' of"),
    ],
)
def test_a_variant_value_must_match_its_tag(
    tree: Tree, tag: str, value: object, message: str
) -> None:
    gauge = new_gauge(tree)
    with pytest.raises(ValueError) as caught:
        gauge.set_next_value(tree.types.Value(tag, value))
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("raw", "tag", "value"),
    [
        ({"type": "u64", "value": 5}, "u64", 5),
        ({"type": "i32", "value": -5}, "i32", -5),
        ({"type": "Label", "value": "x"}, "Label", "x"),
        ({"type": "objtest.Label", "value": "x"}, "Label", "x"),
        ({"type": "string", "value": "x"}, "string", "x"),
        ({"type": "bool", "value": False}, "bool", False),
    ],
)
def test_variant_configuration_takes_the_tag_or_the_qualified_name(
    tree: Tree, raw: dict[str, object], tag: str, value: object
) -> None:
    held = configured(tree, value=raw).value
    assert (held.tag, held.value) == (tag, value)
    assert type(held.value) is type(value)
    assert values.to_config(tree.types.Value.META, held) == {"type": tag, "value": value}


def test_variant_configuration_of_a_struct_alternative(tree: Tree) -> None:
    held = configured(tree, value={"type": "objtest.Point", "value": {"x": 1, "y": 2}}).value
    assert held == tree.types.Value("Point", tree.types.Point(1.0, 2.0))
    assert values.to_config(tree.types.Value.META, held) == {
        "type": "Point",
        "value": {"x": 1.0, "y": 2.0},
    }


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        ({"type": "nope", "value": 1}, "invalid type 'nope' (expected one of u64, i32, Label"),
        ({"type": "bool", "value": 1}, "expected bool, got 1"),
        ({"type": "u64", "value": -1}, "value -1 does not fit in u64"),
        ({"value": 1}, "got {'value': 1}"),
    ],
)
def test_variant_configuration_errors(tree: Tree, raw: dict[str, object], detail: str) -> None:
    (problem,) = config_problems(tree, value=raw)
    assert problem.startswith("invalid value for property 'value': expected objtest.Value, got")
    assert detail in problem


# -- enums -----------------------------------------------------------------------------------------


def test_enums_by_name(tree: Tree) -> None:
    mode = tree.types.Mode
    assert [(m.name, m.value) for m in mode] == [("idle", 0), ("running", 1), ("stopped", 2)]
    assert configured(tree, mode="stopped").mode is mode.stopped
    assert values.to_config(resolve_alias(tree.types.META_Mode), mode.running) == "running"
    for raw in ("Running", 1, None):
        (problem,) = config_problems(tree, mode=raw)
        assert problem.startswith("invalid value for property 'mode': expected objtest.Mode")
        assert "(expected one of idle, running, stopped)" in problem
    with pytest.raises(ValueError, match=r"expected objtest\.Mode, got 1 in property 'mode'"):
        new_gauge(tree).set_next_mode(1)


# -- Duration and TimeStamp ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("5 s", 5_000_000_000),
        ("100ms", 100_000_000),
        ("1.5 s", 1_500_000_000),
        ("1.1 s", 1_100_000_000),
        ("20 ms", 20_000_000),
        ("10s", 10_000_000_000),
        ("2 h", 7_200_000_000_000),
        ("3 min", 180_000_000_000),
        ("7 us", 7_000),
        ("12 ns", 12),
        ("-1 s", -1_000_000_000),
    ],
)
def test_duration_configuration_form(tree: Tree, text: str, ns: int) -> None:
    period = configured(tree, period=text).period
    assert type(period) is Duration
    assert period == Duration(ns)
    assert configured(tree, period=values.to_config(DURATION, period)).period == period


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (5, "Duration needs a unit, e.g. '100 ms'"),
        (1.5, "Duration needs a unit, e.g. '100 ms'"),
        ("5", "Duration needs a unit, e.g. '100 ms'"),
        (
            "5 sec",
            "invalid Duration '5 sec' (expected a number followed by ns, us, ms, s, min or h)",
        ),
        ("x", "invalid Duration 'x' (expected a number followed by ns, us, ms, s, min or h)"),
        ("1.5 ns", "Duration '1.5 ns' is not a whole number of nanoseconds"),
        ("9223372036854775808 ns", "Duration of 9223372036854775808 ns is outside the i64 range"),
    ],
)
def test_duration_configuration_errors(tree: Tree, raw: object, message: str) -> None:
    (problem,) = config_problems(tree, period=raw)
    assert problem.startswith("invalid value for property 'period': expected Duration")
    assert message in problem


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("2024-01-01T00:00:00Z", 1_704_067_200_000_000_000),
        ("2024-01-01T01:00:00.5+01:00", 1_704_067_200_500_000_000),
    ],
)
def test_timestamp_configuration_form(tree: Tree, text: str, ns: int) -> None:
    stamp = configured(tree, stamp=text).stamp
    assert type(stamp) is TimeStamp
    assert stamp == TimeStamp(ns)
    assert configured(tree, stamp=values.to_config(TIMESTAMP, stamp)).stamp == stamp


@pytest.mark.parametrize("raw", [5, "yesterday", "5 s"])
def test_timestamp_configuration_errors(tree: Tree, raw: object) -> None:
    (problem,) = config_problems(tree, stamp=raw)
    assert problem.startswith("invalid value for property 'stamp': expected TimeStamp")


def test_durations_and_timestamps_are_distinct_types(tree: Tree) -> None:
    gauge = new_gauge(tree)
    with pytest.raises(ValueError, match=r"expected Duration, got .* in property 'period'"):
        gauge.set_next_period(TimeStamp(5))
    with pytest.raises(ValueError, match=r"expected TimeStamp, got .* in property 'stamp'"):
        gauge.set_next_stamp(Duration(5))
    with pytest.raises(ValueError, match="in property 'period'"):
        gauge.set_next_period(5)


# -- bytes -----------------------------------------------------------------------------------------


def test_u8_sequences_and_arrays_are_bytes(tree: Tree) -> None:
    gauge = configured(tree, blob=[1, 2, 255], quad=[9, 8, 7, 6], octets=[1, 2])
    assert gauge.blob == b"\x01\x02\xff" and type(gauge.blob) is bytes
    assert gauge.quad == b"\x09\x08\x07\x06" and type(gauge.quad) is bytes
    # a u8 alias as the element type keeps the tuple form
    assert gauge.octets == (1, 2) and type(gauge.octets) is tuple
    assert values.to_config(resolve_alias(tree.types.META_Blob), gauge.blob) == [
        1,
        2,
        255,
    ]
    for key, raw, detail in [
        ("blob", [256], "value 256 does not fit in u8"),
        ("blob", [True], "expected u8, got True"),
        ("quad", [1, 2, 3], "objtest.Quad holds exactly 4 elements, got 3"),
        ("octets", [-1], "value -1 does not fit in u8"),
    ]:
        (problem,) = config_problems(tree, **{key: raw})
        assert problem.startswith(f"invalid value for property '{key}'")
        assert detail in problem
    gauge = new_gauge(tree)
    gauge.set_next_blob(b"\x00" * 1000)
    with pytest.raises(ValueError, match=r"expected objtest\.Blob, got"):
        gauge.set_next_blob((1, 2))
    with pytest.raises(ValueError, match=r"expected objtest\.ByteList, got"):
        gauge.set_next_octets(b"\x01")
    with pytest.raises(ValueError, match=r"objtest\.Quad holds exactly 4 elements, got 5"):
        gauge.set_next_quad(b"12345")


def test_a_bounded_byte_sequence_checks_its_bound_and_its_type() -> None:
    """The byte sequence's own check (the common payload, no element to look at)."""
    short = SequenceMeta("t.Short", "", 1, element=U8, max_size=4, is_bytes=True)
    check = values.checker(short)
    check(b"")
    check(b"1234")
    with pytest.raises(values.Invalid, match=r"t\.Short holds at most 4 elements, got 5"):
        check(b"12345")
    for wrong in (bytearray(b"1"), (1, 2), "12"):
        with pytest.raises(values.Invalid, match=r"expected t\.Short, got"):
            check(wrong)


# -- checks and their messages ---------------------------------------------------------------------

CHECKS: list[tuple[str, Callable[[Any], Any], str]] = [
    ("level", lambda t: 2**40, "value 1099511627776 does not fit in i32 in property 'level'"),
    ("level", lambda t: True, "expected i32, got True in property 'level'"),
    ("level", lambda t: 1.0, "expected i32, got 1.0 in property 'level'"),
    ("small", lambda t: 40000, "value 40000 does not fit in i16 in property 'small'"),
    ("flag", lambda t: 1, "expected bool, got 1 in property 'flag'"),
    ("type", lambda t: b"x", "expected string, got b'x' in property 'type'"),
    ("type", lambda t: "\ud800", "cannot be encoded as UTF-8 in property 'type'"),
    ("reading", lambda t: "1", "expected f64, got '1' in property 'reading'"),
    (
        "altitude",
        lambda t: 5000.0,
        "5000.0 is out of the range [-10.0, 1000.0] in property 'altitude'",
    ),
    ("depth", lambda t: 51, "51 is out of the range [5, 50] in property 'depth'"),
    ("depth", lambda t: 7.0, "expected i32, got 7.0 in property 'depth'"),
    (
        "few",
        lambda t: (1, 2, 3, 4),
        "objtest.Few holds at most 3 elements, got 4 in property 'few'",
    ),
    ("few", lambda t: [1], "expected objtest.Few, got [1] in property 'few'"),
    ("few", lambda t: (1, 2**40), "does not fit in i32 in property 'few[1]'"),
    ("pair", lambda t: (1,), "objtest.Pair holds exactly 2 elements, got 1 in property 'pair'"),
    ("pair", lambda t: (1, 2**15), "value 32768 does not fit in i16 in property 'pair[1]'"),
    ("samples", lambda t: (1.0,) * 5, "objtest.Samples holds at most 4 elements, got 5"),
    ("maybe", lambda t: 2**40, "does not fit in i32 in property 'maybe'"),
    (
        "spot",
        lambda t: t.Spot(t.Point3(0.0, 0.0, 1e39), 1.0, 6),
        "value 1e+39 does not fit in f32 in property 'spot.position.z'",
    ),
    (
        "spot",
        lambda t: t.Spot(t.Point3(0.0, 0.0, 0.0), 5000.0, 6),
        "5000.0 is out of the range [-10.0, 1000.0] in property 'spot.alt'",
    ),
    (
        "spot",
        lambda t: t.Spot(t.Point3(0.0, 0.0, 0.0), 0.0, 4),
        "4 is out of the range [5, 50] in property 'spot.depth'",
    ),
    (
        "shape",
        lambda t: t.Shape(t.Mode.idle, None, (), (0, 2**20), "", b"", Duration(0), TimeStamp(0)),
        "value 1048576 does not fit in i16 in property 'shape.pair[1]'",
    ),
    (
        "shape",
        lambda t: t.Shape(t.Mode.idle, None, (), (0, 0), "", b"", 5, TimeStamp(0)),
        "expected Duration, got 5 in property 'shape.from'",
    ),
]


@pytest.mark.parametrize(("stl_name", "value", "message"), CHECKS)
def test_checks_name_the_property_path_and_the_class(
    tree: Tree, stl_name: str, value: Callable[[Any], Any], message: str
) -> None:
    gauge = new_gauge(tree)
    py_name = tree.devices.Gauge.META.property(stl_name).py_name.rstrip("_")
    with pytest.raises(ValueError) as caught:
        getattr(gauge, f"set_next_{py_name}")(value(tree.types))
    text = str(caught.value)
    assert message in text
    assert text.endswith(" of 'objtest.Gauge'")


def test_f64_has_no_f32_limit_and_floats_accept_ints_nan_and_infinities(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)

    def update() -> None:
        gauge.set_next_samples((1e39, math.inf, -math.inf, math.nan))
        gauge.set_next_altitude(3)
        gauge.set_next_reading(1e300)
        gauge.set_next_spot(tree.types.Spot(tree.types.Point3(math.nan, 0.0, math.inf), -10.0, 50))

    cycle(owner, 1 * MS, update=update)
    assert gauge.samples[:3] == (1e39, math.inf, -math.inf) and math.isnan(gauge.samples[3])
    assert gauge.altitude == 3
    assert gauge.reading == 1e300
    assert gauge.spot.position.z == math.inf


@pytest.mark.parametrize("gain", [1e39, -3.5e38])
def test_f32_static_values_beyond_binary32_are_refused(tree: Tree, gain: float) -> None:
    with pytest.raises(ValueError) as caught:
        tree.devices.GaugeBase("g", serial="s", gain=gain)
    assert (
        str(caught.value)
        == f"value {gain} does not fit in f32 in property 'gain' of 'objtest.Gauge'"
    )
    (problem,) = config_problems(tree, gain=gain)
    assert problem.startswith("invalid value for property 'gain': expected f32")
    for ok in (3.4e38, math.nan, math.inf, -math.inf, 7):
        assert tree.devices.GaugeBase("g", serial="s", gain=ok).gain == ok or math.isnan(ok)


def test_event_arguments_are_checked(tree: Tree) -> None:
    gauge = new_gauge(tree)
    with pytest.raises(ValueError) as caught:
        gauge.events.ticked.emit(-1, "x")
    assert str(caught.value) == (
        "value -1 does not fit in u32 in event argument 'ticked.count' of 'objtest.Gauge'"
    )
    with pytest.raises(
        ValueError, match=r"expected string, got 3 in event argument 'ticked\.note'"
    ):
        gauge.events.ticked.emit(1, 3)


def test_checks_switched_off_let_values_through_but_not_configuration(
    tree: Tree, checks_off: None
) -> None:
    assert not checks.enabled
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    seen: list[tuple[int, str]] = []
    in_cycle(owner, lambda: gauge.events.ticked.connect(lambda c, n: seen.append((c, n))))

    def update() -> None:
        gauge.set_next_level(2**40)
        gauge.set_next_altitude(5000.0)
        gauge.events.ticked.emit(-1, "x")

    cycle(owner, 1 * MS, update=update)
    cycle(owner, 2 * MS)
    assert gauge.level == 2**40
    assert gauge.altitude == 5000.0
    assert seen == [(-1, "x")]
    assert tree.devices.GaugeBase("g2", serial="s", gain=1e39).gain == 1e39
    # configuration load checks whatever the switch says
    (problem,) = config_problems(tree, level=2**40)
    assert "does not fit in i32" in problem


def test_checks_are_on_again_after_being_switched_back(tree: Tree) -> None:
    set_checks(False)
    try:
        new_gauge(tree).set_next_level(2**40)
    finally:
        set_checks(True)
    with pytest.raises(ValueError):
        new_gauge(tree).set_next_level(2**40)


# -- STL equality for change detection -------------------------------------------------------------


def test_nan_equals_nan_at_any_depth_for_change_detection(tree: Tree) -> None:
    nan = math.nan
    types = tree.types
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("reading", lambda: float("nan")),
        ("altitude", lambda: float("nan")),
        ("samples", lambda: (1.0, float("nan"))),
        ("spot", lambda: types.Spot(types.Point3(float("nan"), 0.0, 0.0), 1.0, 6)),
        ("maybe_point", lambda: types.Point(float("nan"), 1.0)),
        ("value", lambda: types.Value("Point", types.Point(float("nan"), 1.0))),
    ]
    for name, build in cases:
        first, second = build(), build()
        assert first is not second
        seen = commits_of(tree, name, first, second)
        assert len(seen) == 1, name  # the second write was no change
    assert nan != nan  # plain == would have seen a change


def test_equal_values_of_other_objects_commit_no_change(tree: Tree) -> None:
    types = tree.types
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("spot", lambda: types.Spot(types.Point3(1.0, 2.0, 3.0), 1.0, 6)),
        ("blob", lambda: bytes([1, 2, 3])),
        ("few", lambda: tuple([1, 2])),
        ("period", lambda: Duration.parse("5 s")),
        ("value", lambda: types.Value("Label", "a" * 3)),
    ]
    for name, build in cases:
        assert len(commits_of(tree, name, build(), build())) == 1, name


# -- zero values -----------------------------------------------------------------------------------

ZEROS: list[tuple[str, Callable[[Any], Any]]] = [
    ("level", lambda t: 0),
    ("reading", lambda t: 0.0),
    ("flag", lambda t: False),
    ("type_", lambda t: ""),
    ("period", lambda t: Duration(0)),
    ("stamp", lambda t: TimeStamp(0)),
    ("mode", lambda t: t.Mode.idle),
    ("altitude", lambda t: 0.0),
    ("depth", lambda t: 5),  # 0 lies outside [5, 50]: min
    ("spot", lambda t: t.Spot(t.Point3(0.0, 0.0, 0.0), 0.0, 5)),
    ("value", lambda t: t.Value("u64", 0)),
    ("few", lambda t: ()),
    ("numbers", lambda t: ()),
    ("samples", lambda t: ()),
    ("pair", lambda t: (0, 0)),
    ("blob", lambda t: b""),
    ("quad", lambda t: b"\x00\x00\x00\x00"),
    ("octets", lambda t: ()),
    ("maybe", lambda t: None),
    ("maybe_point", lambda t: None),
    ("small", lambda t: 0),
    (
        "shape",
        lambda t: t.Shape(t.Mode.idle, None, (), (0, 0), "", b"", Duration(0), TimeStamp(0)),
    ),
]


@pytest.mark.parametrize(("py_name", "expected"), ZEROS)
def test_zero_values(tree: Tree, py_name: str, expected: Callable[[Any], Any]) -> None:
    gauge = new_gauge(tree)
    value = getattr(gauge, py_name)
    assert value == expected(tree.types)
    assert type(value) is type(expected(tree.types))


def test_every_dynamic_property_has_a_zero_value_test(tree: Tree) -> None:
    dynamic = {p.py_name for p in tree.devices.Gauge.META.all_properties if p.dynamic}
    assert dynamic - {name for name, _ in ZEROS} == {"a", "b"}


# -- the registry ----------------------------------------------------------------------------------


def test_generated_types_register_by_qualified_name_in_their_root_scope(tree: Tree) -> None:
    assert tree.devices.Gauge.META.scope == ROOT
    assert registry.find_type("objtest.Point", [ROOT]) is tree.types.Point.META
    assert registry.find_type("objtest.Point", [ROOT, OWN_SCOPE]) is tree.types.Point.META
    assert registry.find_type("objtest.Point", [OWN_SCOPE]) is None
    quantity = registry.find_type("objtest.Altitude", [ROOT])
    assert isinstance(quantity, QuantityMeta)
    assert (quantity.minimum, quantity.maximum) == (-10.0, 1000.0)
    assert quantity.unit is not None and quantity.unit.abbreviation == "m"
    entry = registry.find_stl_class("objtest.Gauge", [ROOT])
    assert entry is not None
    assert entry.base is tree.devices.GaugeBase
    assert entry.local_proxy is tree.devices.GaugeLocalProxy
    assert entry.remote_proxy is tree.devices.GaugeRemoteProxy
    assert entry.module == f"{ROOT}.objtest.devices"


@dataclasses.dataclass(frozen=True)
class Builds:
    """``regalt1`` generated as the root ``first``, ``regalt2`` as ``second``, under fresh root
    names (the registry outlives a test, so no two tests share a scope)."""

    first: str
    second: str
    first_dir: Path
    second_dir: Path
    tmp: Path


_BUILDS = itertools.count(1)


@pytest.fixture
def builds(tmp_path: Path) -> Iterator[Builds]:
    n = next(_BUILDS)
    first, second = f"regalt_a{n}", f"regalt_b{n}"
    first_dir = generate_tree(tmp_path / "a", first, [STL_ROOT / "regalt1"], settings=None)
    second_dir = generate_tree(tmp_path / "b", second, [STL_ROOT / "regalt2"], settings=None)
    with on_path(first_dir.parent, first), on_path(second_dir.parent, second):
        yield Builds(first, second, first_dir, second_dir, tmp_path)


def test_the_same_name_in_another_scope_is_allowed_and_ambiguous_only_at_lookup(
    builds: Builds,
) -> None:
    a, b = builds.first, builds.second
    first = importlib.import_module(f"{a}.regtest.shapes")
    second = importlib.import_module(f"{b}.regtest.shapes")  # no error at import
    assert registry.find_type("regtest.Box", [a]) is first.Box.META
    assert registry.find_type("regtest.Box", [b]) is second.Box.META
    entry = registry.find_stl_class("regtest.Holder", [b, OWN_SCOPE])
    assert entry is not None and entry.base is second.HolderBase
    with pytest.raises(RegistryError) as caught:
        registry.find_stl_class("regtest.Holder", [a, b])
    assert str(caught.value) == f"class name 'regtest.Holder' is ambiguous: {a}, {b}"
    with pytest.raises(RegistryError, match=f"'regtest.Box' is ambiguous: {a}, {b}"):
        registry.find_type("regtest.Box", [a, b])
    # a remote publication resolves to the registration with its structural hash
    assert first.Holder.META.type_hash != second.Holder.META.type_hash
    for module in (first, second):
        meta = module.Holder.META
        found = registry.by_hash("regtest.Holder", meta.type_hash)
        assert found is not None and found.meta.type_hash == meta.type_hash
    assert registry.by_hash("regtest.Holder", 12345) is None


def test_one_module_imported_under_two_names_registers_once(builds: Builds) -> None:
    a = builds.first
    package = builds.first_dir / "regtest"
    shutil.copyfile(package / "shapes.py", package / "shapes_again.py")
    original = importlib.import_module(f"{a}.regtest.shapes")
    again = importlib.import_module(f"{a}.regtest.shapes_again")  # ignored, no error
    assert again.Box is not original.Box
    assert registry.find_type("regtest.Box", [a]) is original.Box.META
    entry = registry.find_stl_class("regtest.Holder", [a])
    assert entry is not None and entry.module == f"{a}.regtest.shapes"


def test_another_structure_under_the_same_name_in_one_scope_is_an_import_error(
    builds: Builds,
) -> None:
    a = builds.first
    other = generate_tree(builds.tmp / "c", a, [STL_ROOT / "regalt2"], settings=None)
    shutil.copyfile(other / "regtest" / "shapes.py", builds.first_dir / "regtest" / "shapes_b.py")
    importlib.import_module(f"{a}.regtest.shapes")
    with pytest.raises(RegistryError) as caught:
        importlib.import_module(f"{a}.regtest.shapes_b")
    assert str(caught.value) == (
        f"type 'regtest.Box' registered by '{a}.regtest.shapes_b' conflicts with the one"
        f" registered by '{a}.regtest.shapes'"
    )


# -- implementation classes ------------------------------------------------------------------------


def test_an_implementation_registers_as_stl_package_dot_python_name(tree: Tree) -> None:
    impl = type("RegisteredGauge", (tree.devices.GaugeBase,), {"__module__": "user_gauges"})
    assert registry.find_implementation("objtest.RegisteredGauge", [ROOT]) is impl
    assert registry.find_implementation("objtest.RegisteredGauge", ["elsewhere"]) is None
    assert registry.find_implementation("RegisteredGauge", [ROOT]) is None
    # the STL package is that of the class the base was generated from, at any depth
    device = type("RegisteredDevice", (tree.devices.DeviceBase,), {"__module__": "user_gauges"})
    deeper = type("DeeperGauge", (impl,), {"__module__": "user_gauges"})
    assert registry.find_implementation("objtest.RegisteredDevice", [ROOT]) is device
    assert registry.find_implementation("objtest.DeeperGauge", [ROOT]) is deeper
    # the generated bases themselves are STL classes, not implementations
    assert registry.find_implementation("objtest.GaugeBase", [ROOT]) is None
    built = impl.from_config("i", {"serial": "s", "gain": 1.0})
    assert type(built) is impl


def test_two_implementations_with_one_name_are_ambiguous_only_when_referenced(
    tree: Tree,
) -> None:
    first = type("TwinGauge", (tree.devices.GaugeBase,), {"__module__": "user_a"})
    second = type("TwinGauge", (tree.devices.GaugeBase,), {"__module__": "user_b"})
    assert first is not second  # defining both is fine
    with pytest.raises(RegistryError) as caught:
        registry.find_implementation("objtest.TwinGauge", [ROOT])
    assert str(caught.value) == (
        "class name 'objtest.TwinGauge' is ambiguous: user_a.TwinGauge, user_b.TwinGauge"
    )
