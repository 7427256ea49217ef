"""Property-based round trips (hypothesis) of every value kind through the binary codec, the
per-class codec (properties, calls, results, events) and the configuration converters, with
random values: a codec that drops, zeroes or truncates any part of a value fails here (issue
21 item 8: the older round trips used zero values, so a ``decode_result`` returning zeroed
scalars went unnoticed)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from objects_support import Tree, imported_tree

from sengen.runtime import Duration, TimeStamp
from sengen.runtime.objects import codec, values
from sengen.runtime.objects.codec import ClassCodec
from sengen.runtime.objects.meta import (
    BOOL,
    DURATION,
    F32,
    F64,
    I16,
    I32,
    I64,
    STRING,
    TIMESTAMP,
    U8,
    U16,
    U32,
    U64,
    AliasMeta,
    ArrayMeta,
    ClassMeta,
    EnumMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
)
from sengen.runtime.objects.registry import registry

ROOT = "objgen_hypothesis"
NATIVES = (BOOL, U8, U16, U32, U64, I16, I32, I64, F32, F64, STRING, DURATION, TIMESTAMP)
# Every user type of tests/objects_stl/objtest/types.stl, so every kind: enum, struct (with a
# parent), quantity (integer and real), alias, sequence (bounded, unbounded, bytes), array
# (bytes and not), optional, variant.
USER_TYPES = (
    "Mode Point Point3 Altitude Depth Label Small Numbers Few Samples Pair Blob Quad MyByte"
    " ByteList MaybePoint MaybeInt Value Spot Shape"
).split()
CLASSES = ("Gauge", "Worker")
# Enough to exercise every branch of every kind quickly: this module adds a few seconds.
QUICK = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("hypothesis"), ROOT) as generated:
        yield generated


def _user(name: str) -> TypeMeta:
    found = registry.find_type(f"objtest.{name}", [ROOT])
    assert found is not None, name
    return found


def _class(tree: Tree, name: str) -> ClassMeta:
    meta: ClassMeta = getattr(tree.devices, name).META
    return meta


def _integers(meta: NativeMeta) -> st.SearchStrategy[int]:
    low, high = values.integer_range(meta)
    return st.integers(low, high)


def _native(meta: NativeMeta) -> st.SearchStrategy[Any]:
    name = meta.qualified_name
    if name == "bool":
        return st.booleans()
    if name == "string":
        return st.text(max_size=40)
    if name == "f32":
        return st.floats(width=32, allow_nan=False)
    if name == "f64":
        return st.floats(allow_nan=False)
    if name in ("Duration", "TimeStamp"):  # both are i64 nanoseconds on the wire
        cls = Duration if name == "Duration" else TimeStamp
        return st.integers(-(2**63), 2**63 - 1).map(cls)
    return _integers(meta)


def strategy(meta: TypeMeta) -> st.SearchStrategy[Any]:
    """Random valid values of ``meta``, built as generated code builds them."""
    if isinstance(meta, AliasMeta):
        return strategy(meta.target)
    if isinstance(meta, NativeMeta):
        return _native(meta)
    if isinstance(meta, EnumMeta):
        return st.sampled_from(list(meta.py_class))
    if isinstance(meta, QuantityMeta):
        low = meta.minimum
        high = meta.maximum
        if meta.value_type.qualified_name == "f32":
            return st.floats(low, high, width=32, allow_nan=False, allow_infinity=False)
        if meta.value_type.qualified_name == "f64":
            return st.floats(low, high, allow_nan=False, allow_infinity=False)
        lowest, highest = values.integer_range(meta.value_type)
        return st.integers(
            lowest if low is None else math.ceil(low), highest if high is None else math.floor(high)
        )
    if isinstance(meta, StructMeta):
        fields = {f.py_name: strategy(f.type) for f in _all_fields(meta)}
        return st.fixed_dictionaries(fields).map(lambda kw: meta.py_class(**kw))
    if isinstance(meta, VariantMeta):
        return st.one_of([_alternative(meta, a.tag, a.type) for a in meta.alternatives])
    if isinstance(meta, SequenceMeta | ArrayMeta):
        if isinstance(meta, ArrayMeta):
            low = high = meta.size
        else:
            low, high = 0, min(meta.max_size or 8, 8)
        if meta.is_bytes:
            return st.binary(min_size=low, max_size=high)
        return st.lists(strategy(meta.element), min_size=low, max_size=high).map(tuple)
    assert isinstance(meta, OptionalMeta)
    return st.none() | strategy(meta.target)


def _alternative(meta: VariantMeta, tag: str, held: TypeMeta) -> st.SearchStrategy[Any]:
    return strategy(held).map(lambda value: meta.py_class(tag, value))


def _all_fields(meta: StructMeta) -> list[Any]:
    chain = [meta]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return [f for m in reversed(chain) for f in m.fields]


def _same(meta: TypeMeta, a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(values.equality(meta)(a, b))


# -- value codecs --------------------------------------------------------------------------------


@pytest.mark.parametrize("meta", NATIVES, ids=lambda m: m.qualified_name)
@QUICK
@given(data=st.data())
def test_native_values_round_trip_through_the_codec(meta: NativeMeta, data: st.DataObject) -> None:
    value = data.draw(strategy(meta))
    assert _same(meta, codec.decode(meta, codec.encode(meta, value)), value)


@pytest.mark.parametrize("name", USER_TYPES)
@QUICK
@given(data=st.data())
def test_user_values_round_trip_through_the_codec_and_the_configuration(
    tree: Tree, name: str, data: st.DataObject
) -> None:
    meta = _user(name)
    value = data.draw(strategy(meta))
    values.checker(meta)(value)  # the strategy makes only valid values
    assert _same(meta, codec.decode(meta, codec.encode(meta, value)), value)
    assert _same(meta, values.from_config(meta)(values.to_config(meta, value)), value)


@pytest.mark.parametrize("meta", NATIVES, ids=lambda m: m.qualified_name)
@QUICK
@given(data=st.data())
def test_native_values_round_trip_through_the_configuration(
    meta: NativeMeta, data: st.DataObject
) -> None:
    value = data.draw(strategy(meta))
    assert _same(meta, values.from_config(meta)(values.to_config(meta, value)), value)


# -- the per-class codec -------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLASSES)
@QUICK
@given(data=st.data())
def test_properties_round_trip_through_the_class_codec(
    tree: Tree, name: str, data: st.DataObject
) -> None:
    meta = _class(tree, name)
    class_codec = ClassCodec(meta)
    state = {p.stl_name: data.draw(strategy(p.type)) for p in meta.all_properties}
    encoded = class_codec.encode_properties(state)
    # A whole state (a publication's snapshot) compiled: the same bytes, read either way.
    assert class_codec.encode_state(state) == encoded
    for decoded in (class_codec.decode_properties(encoded), class_codec.decode_state(encoded)):
        assert decoded.keys() == state.keys()
        for prop in meta.all_properties:
            assert _same(prop.type, decoded[prop.stl_name], state[prop.stl_name]), prop.stl_name
    # Laid out otherwise (a change, properties reversed), it is read property by property.
    reversed_state = dict(reversed(state.items()))
    decoded = class_codec.decode_state(class_codec.encode_properties(reversed_state))
    assert list(decoded) == list(reversed_state)


@QUICK
@given(data=st.data())
def test_calls_results_and_events_round_trip_through_the_class_codec(
    tree: Tree, data: st.DataObject
) -> None:
    meta = _class(tree, "Worker")
    class_codec = ClassCodec(meta)
    for method in meta.all_methods:
        args = tuple(data.draw(strategy(a.type)) for a in method.args)
        name, decoded = class_codec.decode_call(class_codec.encode_call(method.stl_name, args))
        assert name == method.stl_name
        assert all(_same(a.type, x, y) for a, x, y in zip(method.args, decoded, args, strict=True))
        if method.return_type is None:
            assert class_codec.decode_result(method.stl_name, b"") is None
            continue
        result = data.draw(strategy(method.return_type))
        back = class_codec.decode_result(
            method.stl_name, class_codec.encode_result(method.stl_name, result)
        )
        assert _same(method.return_type, back, result), method.stl_name
    for event in meta.all_events:
        args = tuple(data.draw(strategy(a.type)) for a in event.args)
        name, decoded = class_codec.decode_event(class_codec.encode_event(event.stl_name, args))
        assert name == event.stl_name
        assert all(_same(a.type, x, y) for a, x, y in zip(event.args, decoded, args, strict=True))


@QUICK
@given(amount=st.integers(-(2**63), 2**63 - 1))
def test_a_decoded_result_is_the_value_sent_not_its_zero(tree: Tree, amount: int) -> None:
    """Pins the bug of issue 21 item 8: ``decode_result`` returning zeroed scalars."""
    assume(amount != 0)
    class_codec = ClassCodec(_class(tree, "Worker"))
    assert class_codec.decode_result("add", class_codec.encode_result("add", amount)) == amount
