"""Value converters between two versions of a type (evolution.md §3): built once per type pair,
as closures, so converting a value inspects no metadata.

``build(source, target)`` gives a converter from values of ``source`` to values of ``target``,
or raises :class:`Incompatible` naming the first incompatible position. A converter takes the
value and a list to which it appends lossy adjustments (§5.2) as ``(kind, note)``; a value that
cannot be represented raises :class:`ValueFailure` (§5.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from sengen.runtime.errors import SengenError
from sengen.runtime.objects.evolution.text import F32_MAX, FLOAT, INTEGER, f32, number_text
from sengen.runtime.objects.meta import (
    ArrayMeta,
    EnumMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)
from sengen.runtime.objects.values import enum_member, integer_range, zero

Notes = list[tuple[str, str]]
Convert = Callable[[Any, Notes], Any]

_INTS: Final = frozenset(("u8", "u16", "u32", "u64", "i16", "i32", "i64"))
_FLOATS: Final = frozenset(("f32", "f64"))
# Offsets of the units that have them (stl.md §10.1; the description carries factors only and
# every sengen process has the same registry, so they are looked up here by abbreviation).
UNIT_OFFSETS: Final[dict[str, tuple[float, float]]] = {
    "degC": (273.15, 0.0),
    "degF": (273.15, -32.0),
}


class Incompatible(SengenError):
    """Two types that do not adapt (§3.2): the position (steps inside the member) and the pair
    found there, after resolving aliases."""

    def __init__(self, steps: list[str], local: TypeMeta, remote: TypeMeta) -> None:
        super().__init__(steps)
        self.steps = steps
        self.local = local
        self.remote = remote


class ValueFailure(SengenError):
    """A value of compatible types that the receiving side cannot represent (§5.1)."""

    def __init__(self, reason: str, steps: list[str] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.steps = steps if steps is not None else []


def kind(meta: TypeMeta) -> str:
    """The kind of the compatibility matrix (§3.2) of a resolved, non-optional type."""
    if isinstance(meta, NativeMeta):
        name = meta.qualified_name
        if name in _INTS:
            return "int"
        if name in _FLOATS:
            return "float"
        return name  # bool, string, Duration, TimeStamp
    if isinstance(meta, EnumMeta):
        return "enum"
    if isinstance(meta, QuantityMeta):
        return "quantity"
    if isinstance(meta, StructMeta):
        return "struct"
    if isinstance(meta, VariantMeta):
        return "variant"
    return "seq"


_SCALARS: Final = frozenset(("int", "float", "bool", "string", "enum", "quantity"))


def same(a: TypeMeta, b: TypeMeta) -> bool:
    """Identical types: natives by name, named types by structural hash."""
    if isinstance(a, NativeMeta) or isinstance(b, NativeMeta):
        return a.qualified_name == b.qualified_name
    return a.type_hash == b.type_hash and type(a) is type(b)


def build(source: TypeMeta, target: TypeMeta) -> Convert:
    """The converter from ``source`` values to ``target`` values (§3.1)."""
    source, target = resolve_alias(source), resolve_alias(target)
    if isinstance(source, OptionalMeta) or isinstance(target, OptionalMeta):
        return _optional(source, target)
    ks, kt = kind(source), kind(target)
    if ks in _SCALARS and kt in _SCALARS:
        if {ks, kt} == {"enum", "quantity"}:
            raise Incompatible([], target, source)
        if isinstance(source, QuantityMeta) and isinstance(target, QuantityMeta):
            return _quantity_pair(source, target)
        return _scalar(source, target)
    if ks != kt:  # Duration and TimeStamp are kinds of their own: they meet only themselves
        raise Incompatible([], target, source)
    if isinstance(source, StructMeta) and isinstance(target, StructMeta):
        return _struct(source, target)
    if isinstance(source, VariantMeta) and isinstance(target, VariantMeta):
        return _variant(source, target)
    if isinstance(source, SequenceMeta | ArrayMeta):
        return _sequence(source, target)
    return _keep


def _keep(value: Any, notes: Notes) -> Any:
    return value


def _nested(source: TypeMeta, target: TypeMeta, step: str) -> Convert:
    try:
        return build(source, target)
    except Incompatible as error:
        error.steps.insert(0, step)
        raise


# -- optionals (§3.12) ---------------------------------------------------------------------------


def _optional(source: TypeMeta, target: TypeMeta) -> Convert:
    s = source.target if isinstance(source, OptionalMeta) else source
    t = target.target if isinstance(target, OptionalMeta) else target
    inner = build(s, t)
    if isinstance(source, OptionalMeta) and isinstance(target, OptionalMeta):

        def both(value: Any, notes: Notes) -> Any:
            return None if value is None else inner(value, notes)

        return both
    if isinstance(target, OptionalMeta):
        return inner  # always present
    absent = zero(target)

    def unwrap(value: Any, notes: Notes) -> Any:
        return absent if value is None else inner(value, notes)

    return unwrap


# -- scalars: numbers, bool, string, enum, quantity (§3.3 to §3.8) --------------------------------


def _name(meta: TypeMeta) -> str:
    return meta.qualified_name


def _read_number(source: TypeMeta) -> Callable[[Any], Any]:
    """What gives the plain number (int or float) a scalar source value stands for, or the text
    of a string."""
    if isinstance(source, EnumMeta):
        return lambda value: int(value.value)
    if isinstance(source, NativeMeta) and source.qualified_name == "bool":
        return lambda value: 1 if value else 0
    return lambda value: value


def _scalar(source: TypeMeta, target: TypeMeta) -> Convert:
    ks, kt = kind(source), kind(target)
    if ks == kt and ks != "enum" and same(source, target):
        return _keep
    if kt == "string":
        return _to_string(source)
    if ks == "string":
        return _from_string(target)
    if isinstance(source, EnumMeta) and isinstance(target, EnumMeta):
        return _enum_pair(source, target)
    number = _read_number(source)
    into = _into(target)

    def scalar(value: Any, notes: Notes) -> Any:
        return into(number(value), notes)

    return scalar


def _to_string(source: TypeMeta) -> Convert:
    if isinstance(source, EnumMeta):
        names = {e.key: e.stl_name for e in source.enumerators}
        return lambda value, notes: names[int(value.value)]
    if isinstance(source, NativeMeta) and source.qualified_name == "bool":
        return lambda value, notes: "true" if value else "false"
    native = source.value_type if isinstance(source, QuantityMeta) else source
    single = native.qualified_name == "f32"
    return lambda value, notes: number_text(value, single)


def _from_string(target: TypeMeta) -> Convert:
    empty = zero(target)
    name = _name(target)
    if isinstance(target, EnumMeta):
        members = {e.stl_name: enum_member(target, e.key) for e in target.enumerators}

        def enum_of(value: str, notes: Notes) -> Any:
            text = value.strip()
            if not text:
                return empty
            found = members.get(text)
            if found is None:
                raise ValueFailure(f"no enumerator '{text}' in {name}")
            return found

        return enum_of
    into = _into(target)
    is_bool = isinstance(target, NativeMeta) and target.qualified_name == "bool"
    integral = kind(target) == "int"

    def number_of(value: str, notes: Notes) -> Any:
        text = value.strip()
        if not text:
            return empty
        if is_bool and text in ("true", "false"):
            return text == "true"
        if integral and INTEGER.fullmatch(text):
            return into(int(text), notes)
        if FLOAT.fullmatch(text):
            return into(float(text), notes)
        raise ValueFailure(f"cannot read '{value}' as {name}")

    return number_of


def _enum_pair(source: EnumMeta, target: EnumMeta) -> Convert:
    """By enumerator STL name (§3.7), at every depth."""
    by_key = {}
    for e in source.enumerators:
        found = next((t for t in target.enumerators if t.stl_name == e.stl_name), None)
        by_key[e.key] = (e.stl_name, None if found is None else enum_member(target, found.key))
    name = _name(target)

    def enum_to_enum(value: Any, notes: Notes) -> Any:
        stl, member = by_key[int(value.value)]
        if member is None:
            raise ValueFailure(f"no enumerator '{stl}' in {name}")
        return member

    return enum_to_enum


def _into(target: TypeMeta) -> Callable[[int | float, Notes], Any]:
    """What stores a plain number into ``target`` (a number, bool, enum or quantity)."""
    if isinstance(target, QuantityMeta):
        return _into_quantity(target)
    if isinstance(target, EnumMeta):
        return _into_enum(target)
    assert isinstance(target, NativeMeta)
    if target.qualified_name == "bool":
        return lambda value, notes: value != 0
    return _into_native(target)


def _into_native(target: NativeMeta) -> Callable[[int | float, Notes], Any]:
    name = target.qualified_name
    if name == "f64":
        return lambda value, notes: float(value)
    if name == "f32":

        def single(value: int | float, notes: Notes) -> float:
            rounded = f32(float(value))
            if rounded is None:
                limit = math.copysign(F32_MAX, value)
                notes.append(
                    ("saturated", f"{number_text(value, False)} saturated to {limit!r} (f32)")
                )
                return limit
            return rounded

        return single
    low, high = integer_range(target)

    def integer(value: int | float, notes: Notes) -> int:
        if isinstance(value, float):
            if value != value:
                raise ValueFailure(f"NaN cannot be stored in {name}")
            number = value if math.isinf(value) else round(value)
        else:
            number = value
        if number < low or number > high:
            limit = low if number < low else high
            text = number_text(value, False)
            notes.append(("saturated", f"{text} saturated to {limit} ({name})"))
            return limit
        return int(number)

    return integer


def _into_enum(target: EnumMeta) -> Callable[[int | float, Notes], Any]:
    keys = {e.key: enum_member(target, e.key) for e in target.enumerators}
    name = _name(target)

    def enum_of(value: int | float, notes: Notes) -> Any:
        if isinstance(value, float):
            if value != value:
                raise ValueFailure(f"NaN cannot be stored in {name}")
            if math.isinf(value):
                raise ValueFailure(f"no enumerator with key {value!r} in {name}")
            value = round(value)
        found = keys.get(int(value))
        if found is None:
            raise ValueFailure(f"no enumerator with key {int(value)} in {name}")
        return found

    return enum_of


def _into_quantity(target: QuantityMeta) -> Callable[[int | float, Notes], Any]:
    """A number already in ``target``'s unit: clamped to its bounds, then stored (§3.8)."""
    store = _into_native(target.value_type)
    low, high, name = target.minimum, target.maximum, _name(target)

    def quantity(value: int | float, notes: Notes) -> Any:
        if (low is not None and value < low) or (high is not None and value > high):
            limit = low if low is not None and value < low else high
            assert limit is not None
            text, shown = number_text(value, False), number_text(limit, False)
            notes.append(("clamped", f"{text} clamped to {shown} (range of {name})"))
            value = limit
        return store(value, notes)

    return quantity


def _quantity_pair(source: QuantityMeta, target: QuantityMeta) -> Convert:
    su, tu = source.unit, target.unit
    if (su is None) != (tu is None) or (su and tu and su.category != tu.category):
        raise Incompatible([], target, source)
    into = _into_quantity(target)
    if su is None or tu is None or su.abbreviation == tu.abbreviation:
        return into
    sx, sy = UNIT_OFFSETS.get(su.abbreviation, (0.0, 0.0))
    tx, ty = UNIT_OFFSETS.get(tu.abbreviation, (0.0, 0.0))
    sf, tf = su.factor, tu.factor

    def units(value: Any, notes: Notes) -> Any:
        reference = (float(value) + sy) * sf + sx
        return into((reference - tx) / tf - ty, notes)

    return units


# -- composites (§3.9 to §3.11) ------------------------------------------------------------------


def _struct(source: StructMeta, target: StructMeta) -> Convert:
    remote = {f.stl_name: f for f in source.fields}
    plan: list[tuple[str | None, Convert | None, Any, str]] = []
    for field in target.fields:
        found = remote.get(field.stl_name)
        if found is None:
            plan.append((None, None, zero(field.type), field.stl_name))
        else:
            convert = _nested(found.type, field.type, f"field '{field.stl_name}'")
            plan.append((found.py_name, convert, None, field.stl_name))
    make = target.py_class

    def struct_of(value: Any, notes: Notes) -> Any:
        values = []
        for attribute, convert, default, stl in plan:
            if attribute is None or convert is None:
                values.append(default)
                continue
            try:
                values.append(convert(getattr(value, attribute), notes))
            except ValueFailure as failure:
                failure.steps.insert(0, f"field '{stl}'")
                raise
        return make(*values)

    return struct_of


def _variant(source: VariantMeta, target: VariantMeta) -> Convert:
    plan: dict[str, tuple[int, str | None, Convert | None]] = {}
    for index, alternative in enumerate(source.alternatives):
        if index < len(target.alternatives):
            local = target.alternatives[index]
            convert = _nested(alternative.type, local.type, f"alternative {index}")
            plan[alternative.tag] = (index, local.tag, convert)
        else:
            plan[alternative.tag] = (index, None, None)
    make, name = target.py_class, _name(target)

    def variant_of(value: Any, notes: Notes) -> Any:
        index, tag, convert = plan[value.tag]
        if tag is None or convert is None:
            raise ValueFailure(f"no alternative {index} in {name}")
        try:
            return make(tag, convert(value.value, notes))
        except ValueFailure as failure:
            failure.steps.insert(0, f"alternative {index}")
            raise

    return variant_of


def _sequence(source: SequenceMeta | ArrayMeta, target: TypeMeta) -> Convert:
    assert isinstance(target, SequenceMeta | ArrayMeta)
    element = _nested(source.element, target.element, "element")
    plain = element is _keep
    size = target.size if isinstance(target, ArrayMeta) else target.max_size
    pad = zero(target.element) if isinstance(target, ArrayMeta) else None
    array = isinstance(target, ArrayMeta)
    holds = f"holds {size}" if array else f"holds at most {size}"
    name, blob = _name(target), target.is_bytes

    def sequence_of(value: Any, notes: Notes) -> Any:
        items = list(value) if plain else _elements(element, value, notes)
        if size is not None and len(items) > size:
            notes.append(("dropped", f"{len(items) - size} element(s) dropped ({name} {holds})"))
            del items[size:]
        if array and size is not None and len(items) < size:
            items.extend([pad] * (size - len(items)))
        return bytes(items) if blob else tuple(items)

    return sequence_of


def _elements(element: Convert, value: Any, notes: Notes) -> list[Any]:
    try:
        return [element(item, notes) for item in value]
    except ValueFailure as failure:
        failure.steps.insert(0, "element")
        raise
