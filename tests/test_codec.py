"""The binary codecs: round trips, the cheap encode checks and the decode checks (codegen.md
§1.4), and the per-class codec a remote proxy is fed through."""

from __future__ import annotations

import itertools
import math
import re
import struct
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from objects_support import Tree, imported_tree

from sengen.runtime import Duration, TimeStamp
from sengen.runtime.objects import codec, values
from sengen.runtime.objects.codec import ClassCodec
from sengen.runtime.objects.meta import (
    U8,
    ArrayMeta,
    Category,
    EnumMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    Transport,
    VariantMeta,
    resolve_alias,
)
from sengen.runtime.objects.registry import registry

ROOT = "objgen_codec"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("codec"), ROOT) as generated:
        yield generated


def _meta(tree: Tree, name: str) -> Any:
    found = registry.find_type(f"objtest.{name}", [ROOT])
    assert found is not None, name
    return found


def _sample(meta: Any) -> Any:
    """A value of ``meta`` unlike its zero in every part (random ones: test_hypothesis_codec)."""
    meta = resolve_alias(meta)
    name = meta.qualified_name
    if isinstance(meta, NativeMeta):
        samples = {"bool": True, "string": "sample", "f32": 1.5, "f64": -2.25}
        if name in ("Duration", "TimeStamp"):
            return (Duration if name == "Duration" else TimeStamp)(7)
        return samples.get(name, 7)
    if isinstance(meta, QuantityMeta):
        return meta.maximum if meta.maximum is not None else 7
    if isinstance(meta, EnumMeta):
        return list(meta.py_class)[-1]
    if isinstance(meta, StructMeta):
        return meta.py_class(**{f.py_name: _sample(f.type) for f in _fields(meta)})
    if isinstance(meta, VariantMeta):
        last = meta.alternatives[-1]
        return meta.py_class(last.tag, _sample(last.type))
    if isinstance(meta, SequenceMeta | ArrayMeta):
        size = meta.size if isinstance(meta, ArrayMeta) else 2
        return b"\x07" * size if meta.is_bytes else (_sample(meta.element),) * size
    assert isinstance(meta, OptionalMeta)
    return _sample(meta.target)


def _fields(meta: StructMeta) -> list[Any]:
    return [*(_fields(meta.parent) if meta.parent is not None else []), *meta.fields]


def _round(meta: Any, value: Any) -> Any:
    return codec.decode(meta, codec.encode(meta, value))


def test_every_kind_round_trips(tree: Tree) -> None:
    t = tree.types
    shape = t.Shape(
        t.Mode.running,
        t.Point(1.5, -2.0),
        (1, 2, 3),
        (-5, 7),
        "näme",
        b"\x00\xff",
        Duration(-3),
        TimeStamp(10**18),
    )
    assert _round(t.Shape.META, shape) == shape
    assert _round(t.Shape.META, values.zero(t.Shape.META)) == values.zero(t.Shape.META)
    spot = t.Spot(t.Point3(1.0, 2.0, 3.5), 12.5, 6)
    assert _round(t.Spot.META, spot) == spot


def test_variants_keep_same_typed_alternatives_apart(tree: Tree) -> None:
    t = tree.types
    for tag, value in [("u64", 7), ("i32", 7), ("Label", "x"), ("string", "x"), ("bool", True)]:
        decoded = _round(t.Value.META, t.Value(tag, value))
        assert (decoded.tag, decoded.value) == (tag, value)
    assert codec.encode(t.Value.META, t.Value("i32", 7))[:4] == struct.pack("<I", 1)


def test_nan_survives_and_bytes_stay_bytes(tree: Tree) -> None:
    t = tree.types
    decoded = _round(t.Point.META, t.Point(math.nan, 0.0))
    assert math.isnan(decoded.x)
    assert _round(_meta(tree, "Blob"), b"abc") == b"abc"
    assert _round(_meta(tree, "ByteList"), (1, 2)) == (1, 2)


def test_a_struct_of_numbers_is_one_packed_run(tree: Tree) -> None:
    t = tree.types
    data = codec.encode(t.Point3.META, t.Point3(1.0, 2.0, 3.0))
    assert data == struct.pack("<ddf", 1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("Point", "Point3", "given where 'objtest.Point' is expected"),
        ("Few", (1, 2, 3, 4), "holds at most 3 elements, got 4"),
        ("Pair", (1,), "holds exactly 2 elements, got 1"),
        ("Small", 70000, "does not fit in objtest.Small"),
        ("Altitude", 1e39, "does not fit in objtest.Altitude"),
    ],
)
def test_encode_checks(tree: Tree, name: str, value: Any, message: str) -> None:
    if value == "Point3":
        value = tree.types.Point3(0.0, 0.0, 0.0)
    with pytest.raises(values.Invalid, match=re.escape(message)):
        codec.encode(_meta(tree, name) if name != "Point" else tree.types.Point.META, value)


def test_decode_checks(tree: Tree) -> None:
    t = tree.types
    with pytest.raises(values.Invalid, match=re.escape("not a key of objtest.Mode")):
        codec.decode(_meta(tree, "Mode"), b"\x07")
    with pytest.raises(values.Invalid, match=re.escape("not an alternative key")):
        codec.decode(t.Value.META, struct.pack("<I", 9))
    with pytest.raises(values.Invalid, match=re.escape("out of the range")):
        codec.decode(_meta(tree, "Depth"), struct.pack("<i", 99))
    with pytest.raises(values.Invalid, match=re.escape("holds at most 3 elements, got 5")):
        codec.decode(_meta(tree, "Few"), struct.pack("<I", 5) + bytes(20))
    with pytest.raises(values.Invalid, match=re.escape("truncated")):
        codec.decode(t.Point.META, b"\x00" * 9)
    with pytest.raises(values.Invalid, match=re.escape("truncated string")):
        codec.decode(_meta(tree, "Label"), struct.pack("<I", 100) + b"ab")
    with pytest.raises(values.Invalid, match=re.escape("bytes left")):
        codec.decode(t.Point.META, bytes(17))
    with pytest.raises(values.Invalid, match=re.escape("invalid optional flag")):
        codec.decode(_meta(tree, "MaybeInt"), b"\x02")


def test_class_codec_feeds_a_remote_proxy(tree: Tree) -> None:
    d = tree.devices
    meta = d.Gauge.META
    wire = ClassCodec(meta)
    dynamic = [p for p in meta.all_properties if p.dynamic]
    changes = {p.stl_name: _sample(p.type) for p in dynamic}
    decoded = wire.decode_properties(wire.encode_properties(changes))
    assert decoded == changes and decoded != {p.stl_name: values.zero(p.type) for p in dynamic}
    with pytest.raises(values.Invalid, match=re.escape("unknown property id")):
        wire.decode_properties(struct.pack("<II", 1, 12345))
    for event in meta.all_events:
        args = tuple(_sample(a.type) for a in event.args)
        assert wire.decode_event(wire.encode_event(event.stl_name, args)) == (event.stl_name, args)


def test_class_codec_calls_and_results(tree: Tree) -> None:
    meta = tree.devices.Worker.META
    wire = ClassCodec(meta)
    for method in meta.all_methods:
        args = tuple(_sample(a.type) for a in method.args)
        assert wire.decode_call(wire.encode_call(method.stl_name, args)) == (method.stl_name, args)
        if method.return_type is not None:
            result = _sample(method.return_type)
            assert result != values.zero(method.return_type)  # a zeroing decoder must fail
            encoded = wire.encode_result(method.stl_name, result)
            assert wire.decode_result(method.stl_name, encoded) == result


def test_a_change_of_one_property_alone_reads_the_object_and_encodes_it_by_name(
    tree: Tree,
) -> None:
    """``singles``, what a remote commit sends of an object that changed one property: the
    same bytes as that change encoded by name, for properties of every kind (byte sequences,
    the common payload, have a path of their own)."""
    d = tree.devices
    gauge = d.GaugeBase("g", serial="S-1", gain=0.5)
    wire = ClassCodec(d.Gauge.META)
    for prop in d.Gauge.META.all_properties:
        expected = wire.encode_properties({prop.stl_name: getattr(gauge, prop.py_name)})
        assert bytes(wire.singles[prop.py_name](gauge)) == expected, prop.stl_name
    several = [gauge._PROPS["blob"], gauge._PROPS["reading"]]
    state = wire.changed_state(gauge, several)
    assert wire.decode_properties(bytes(state)) == {"blob": b"", "reading": 0.0}


def test_a_column_of_changes_is_each_objects_change_joined(tree: Tree) -> None:
    """``columns``, what a commit that changed the same property of many objects sends: each
    object's change as ``singles`` encodes it, joined, and where each one ends; for every kind
    of property, and for byte sequences of one size (joined at once, their ends a range) and
    of different sizes."""
    d = tree.devices
    wire = ClassCodec(d.Gauge.META)
    gauges = [d.GaugeBase(f"g{i}", serial=f"S-{i}", gain=0.5) for i in range(3)]
    props = gauges[0]._PROPS

    def same_as_singles(key: str) -> Sequence[int]:
        ends, sep, pieces = wire.columns[key](gauges)
        states = [bytes(wire.singles[key](g)) for g in gauges]
        assert [sep + piece for piece in pieces] == states, key
        assert list(ends) == list(itertools.accumulate(map(len, states))), key
        return ends

    for prop in d.Gauge.META.all_properties:
        same_as_singles(prop.py_name)
    for gauge, blob in zip(gauges, (b"ab", b"cd", b"ef"), strict=True):
        props["blob"].set(gauge, blob)
    assert isinstance(same_as_singles("blob"), range)
    props["blob"].set(gauges[1], b"")
    assert not isinstance(same_as_singles("blob"), range)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (b"12345", values.Invalid, "at most 4 elements, got 5"),
        ("1234", TypeError, None),
        (7, TypeError, None),
    ],
)
def test_a_byte_sequence_alone_refuses_what_checks_let_through(
    value: object, error: type[Exception], message: str | None
) -> None:
    """With checks off a value of the wrong type or size can reach a commit: its change is
    refused (the transport logs it and sends the others), never sent cut or mistyped."""
    short = SequenceMeta("t.Short", "", 1, element=U8, max_size=4, is_bytes=True)
    prop = PropertyMeta(
        "data",
        "data",
        short,
        Category.DYNAMIC_RO,
        Transport.MULTICAST,
        False,
        (),
        "",
    )

    class Holder:
        data = b"1234"

    write = codec._alone_writer(prop)
    assert codec.decode(short, bytes(write(Holder())[8:])) == b"1234"
    Holder.data = value  # type: ignore[assignment]
    with pytest.raises(error, match=None if message is None else re.escape(message)):
        write(Holder())
