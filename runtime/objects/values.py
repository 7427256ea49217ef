"""Per-type value operations compiled once from metadata: checks, STL equality, zero values and
the configuration form (codegen.md §1.3, §1.4).

Each operation is built the first time a type needs it and cached by the metadata's identity, so
a hot call is one closure call with no reflection over fields. The closures raise
:class:`Invalid` with a field path; the boundaries turn that into one message naming the
property or argument and the class (:func:`describe`).
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

from sengen.runtime.errors import SengenError
from sengen.runtime.objects.duration import Duration, TimeStamp, TimeValueError
from sengen.runtime.objects.meta import (
    AliasMeta,
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

Check = Callable[[Any], None]
Equal = Callable[[Any, Any], bool]
Convert = Callable[[Any], Any]

_F32_MAX: Final = 3.4028234663852886e38


class Invalid(SengenError, ValueError):
    """A value that does not fit its STL type. ``path`` is the field path inside the value."""

    def __init__(self, message: str, path: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def inside(self, step: str) -> Invalid:
        return Invalid(self.message, (step, *self.path))


def describe(error: Invalid, member: str, kind: str, owner: str) -> str:
    """``<message> in property 'position.x' of 'animals.Cat'``."""
    path = ".".join((member, *error.path)).replace(".[", "[")
    return f"{error.message} in {kind} '{path}' of '{owner}'"


def show(value: object) -> str:
    """A short, unambiguous rendering of a rejected value for messages."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _cached(table: dict[TypeMeta, Any], build: Callable[[TypeMeta], Any], meta: TypeMeta) -> Any:
    found = table.get(meta)
    if found is None:
        found = table[meta] = build(meta)
    return found


# -- checks --------------------------------------------------------------------------------------

_CHECKS: dict[TypeMeta, Check] = {}
# What :func:`_native_check` passes on its class alone (f32 has a range, strings an encoding).
_EXACT_NATIVES: Final[dict[str, tuple[type, ...]]] = {
    "f64": (float, int),
    "bool": (bool,),
    "Duration": (Duration,),
    "TimeStamp": (TimeStamp,),
}


def checker(meta: TypeMeta) -> Check:
    """The deep check of ``meta``'s values (kind, ranges, lengths, exact classes)."""
    result: Check = _cached(_CHECKS, _build_check, meta)
    return result


def passing_classes(meta: TypeMeta) -> tuple[type, ...]:
    """The classes whose every value passes ``meta``'s check, where the check looks at nothing
    else (f64, bool, enums, ...); empty where it does. A hot path (``set_next_<s>``) tests
    the class in C and calls the check only for what it cannot pass that way."""
    if isinstance(meta, AliasMeta):
        return passing_classes(meta.target)
    if isinstance(meta, EnumMeta):
        return (meta.py_class,)
    if isinstance(meta, NativeMeta):
        return _EXACT_NATIVES.get(meta.qualified_name, ())
    return ()


def integer_range(meta: NativeMeta) -> tuple[int, int]:
    if meta.signed:
        return -(2 ** (meta.bits - 1)), 2 ** (meta.bits - 1) - 1
    return 0, 2**meta.bits - 1


def _expected(meta: TypeMeta, value: object) -> Invalid:
    return Invalid(f"expected {meta.qualified_name}, got {show(value)}")


def _native_check(meta: NativeMeta) -> Check:
    name = meta.qualified_name
    if name in ("f32", "f64"):
        limit = _F32_MAX if name == "f32" else math.inf

        def check_float(v: Any) -> None:
            kind = type(v)
            if kind is not float and kind is not int:
                raise _expected(meta, v)
            if limit is not math.inf and math.isfinite(v) and abs(v) > limit:
                raise Invalid(f"value {v} does not fit in {name}")

        return check_float
    if name == "bool":
        return _exact(meta, bool)
    if name == "string":

        def check_string(v: Any) -> None:
            if type(v) is not str:
                raise _expected(meta, v)
            if not v.isascii():
                try:
                    v.encode()
                except UnicodeEncodeError:
                    raise Invalid(f"string {show(v)} cannot be encoded as UTF-8") from None

        return check_string
    if name == "Duration":
        return _exact(meta, Duration)
    if name == "TimeStamp":
        return _exact(meta, TimeStamp)
    low, high = integer_range(meta)

    def check_int(v: Any) -> None:
        if type(v) is not int:
            raise _expected(meta, v)
        if not low <= v <= high:
            raise Invalid(f"value {v} does not fit in {name}")

    return check_int


def _exact(meta: TypeMeta, cls: type) -> Check:
    def check_exact(v: Any) -> None:
        if type(v) is not cls:
            if isinstance(v, cls):
                raise Invalid(
                    f"value of type '{_type_name(v)}' given where '{meta.qualified_name}'"
                    " is expected"
                )
            raise _expected(meta, v)

    return check_exact


def _type_name(value: object) -> str:
    meta = getattr(type(value), "META", None)
    return meta.qualified_name if isinstance(meta, TypeMeta) else type(value).__qualname__


def _struct_check(meta: StructMeta) -> Check:
    exact = _exact(meta, meta.py_class)
    fields = [(f.py_name, f.stl_name, checker(f.type)) for f in meta.fields]

    def check_struct(v: Any) -> None:
        exact(v)
        for py_name, stl_name, check in fields:
            try:
                check(getattr(v, py_name))
            except Invalid as error:
                raise error.inside(stl_name) from None

    return check_struct


def _variant_check(meta: VariantMeta) -> Check:
    exact = _exact(meta, meta.py_class)
    alternatives = {a.tag: checker(a.type) for a in meta.alternatives}

    def check_variant(v: Any) -> None:
        exact(v)
        check = alternatives.get(v.tag)
        if check is None:
            raise Invalid(f"'{v.tag}' is not an alternative of {meta.qualified_name}")
        try:
            check(v.value)
        except Invalid as error:
            raise error.inside(v.tag) from None

    return check_variant


def _sequence_check(meta: SequenceMeta | ArrayMeta) -> Check:
    element = checker(meta.element)
    if isinstance(meta, ArrayMeta):
        low, high = meta.size, meta.size
    else:
        low, high = 0, meta.max_size if meta.max_size is not None else -1

    def wrong_size(size: int) -> Invalid:
        bound = f"exactly {low}" if low == high else f"at most {high}"
        return Invalid(f"{meta.qualified_name} holds {bound} elements, got {size}")

    def check_sequence(v: Any) -> None:
        if type(v) is not tuple:
            raise _expected(meta, v)
        size = len(v)
        if size < low or (high >= 0 and size > high):
            raise wrong_size(size)
        for index, item in enumerate(v):
            try:
                element(item)
            except Invalid as error:
                raise error.inside(f"[{index}]") from None

    # Bytes (``u8`` elements) hold no element to check: the common payload, so checked apart.
    def check_blob(v: Any) -> None:
        if type(v) is not bytes:
            raise _expected(meta, v)
        if high >= 0 and len(v) > high:
            raise wrong_size(len(v))

    def check_byte_array(v: Any) -> None:
        if type(v) is not bytes:
            raise _expected(meta, v)
        if len(v) != low:
            raise wrong_size(len(v))

    if not meta.is_bytes:
        return check_sequence
    return check_byte_array if isinstance(meta, ArrayMeta) else check_blob


def _quantity_check(meta: QuantityMeta) -> Check:
    base = checker(meta.value_type)
    low, high = meta.minimum, meta.maximum

    def check_quantity(v: Any) -> None:
        base(v)
        if (low is not None and v < low) or (high is not None and v > high):
            raise Invalid(f"{v} is out of the range [{_bound(low)}, {_bound(high)}]")

    return check_quantity


def _bound(value: float | None) -> str:
    return "-inf" if value is None else str(value)


def _optional_check(meta: OptionalMeta) -> Check:
    target = checker(meta.target)

    def check_optional(v: Any) -> None:
        if v is not None:
            target(v)

    return check_optional


def _enum_check(meta: EnumMeta) -> Check:
    return _exact(meta, meta.py_class)


def _build_check(meta: TypeMeta) -> Check:
    if isinstance(meta, NativeMeta):
        return _native_check(meta)
    if isinstance(meta, EnumMeta):
        return _enum_check(meta)
    if isinstance(meta, StructMeta):
        return _struct_check(meta)
    if isinstance(meta, VariantMeta):
        return _variant_check(meta)
    if isinstance(meta, SequenceMeta | ArrayMeta):
        return _sequence_check(meta)
    if isinstance(meta, QuantityMeta):
        return _quantity_check(meta)
    if isinstance(meta, OptionalMeta):
        return _optional_check(meta)
    if isinstance(meta, AliasMeta):
        return checker(meta.target)
    raise TypeError(f"no check for {meta!r}")


_ARGUMENTS: dict[tuple[TypeMeta, ...], Callable[[tuple[Any, ...]], None]] = {}


def arguments_checker(types: tuple[TypeMeta, ...]) -> Callable[[tuple[Any, ...]], None]:
    """One check of a whole argument tuple; a failure's path starts with the argument's index."""
    found = _ARGUMENTS.get(types)
    if found is None:
        found = _ARGUMENTS[types] = _build_arguments(tuple(checker(t) for t in types))
    return found


def _build_arguments(checks: tuple[Check, ...]) -> Callable[[tuple[Any, ...]], None]:
    if len(checks) == 1:
        (only,) = checks

        def check_one(args: tuple[Any, ...]) -> None:
            try:
                only(args[0])
            except Invalid as error:
                raise error.inside("0") from None

        return check_one

    def check_all(args: tuple[Any, ...]) -> None:
        for index, (check, value) in enumerate(zip(checks, args, strict=True)):
            try:
                check(value)
            except Invalid as error:
                raise error.inside(str(index)) from None

    return check_all


# -- STL equality --------------------------------------------------------------------------------

_EQUALS: dict[TypeMeta, Equal] = {}


def equality(meta: TypeMeta) -> Equal:
    """STL value equality: ``==``, except that two NaN floats are equal at any depth."""
    result: Equal = _cached(_EQUALS, _build_equality, meta)
    return result


def _has_float(meta: TypeMeta) -> bool:
    if isinstance(meta, NativeMeta):
        return meta.qualified_name in ("f32", "f64")
    if isinstance(meta, QuantityMeta):
        return _has_float(meta.value_type)
    if isinstance(meta, StructMeta):
        return any(_has_float(f.type) for f in meta.fields)
    if isinstance(meta, VariantMeta):
        return any(_has_float(a.type) for a in meta.alternatives)
    if isinstance(meta, SequenceMeta | ArrayMeta):
        return _has_float(meta.element)
    if isinstance(meta, OptionalMeta | AliasMeta):
        return _has_float(meta.target)
    return False


def float_equal(a: Any, b: Any) -> bool:
    """The equality of floats (and quantities): ``==``, or both NaN."""
    return bool(a == b) or (a != a and b != b)


def _build_equality(meta: TypeMeta) -> Equal:
    if not _has_float(meta):
        return operator.eq
    if isinstance(meta, NativeMeta | QuantityMeta):
        return float_equal
    if isinstance(meta, AliasMeta):
        return equality(meta.target)
    if isinstance(meta, OptionalMeta):
        target = equality(meta.target)
        return lambda a, b: a is b or (a is not None and b is not None and target(a, b))
    if isinstance(meta, SequenceMeta | ArrayMeta):
        element = equality(meta.element)
        return lambda a, b: len(a) == len(b) and all(map(element, a, b))
    if isinstance(meta, StructMeta):
        getters = [(operator.attrgetter(f.py_name), equality(f.type)) for f in meta.fields]

        def struct_equal(a: Any, b: Any) -> bool:
            if type(a) is not type(b):
                return False
            return all(eq(get(a), get(b)) for get, eq in getters)

        return struct_equal
    assert isinstance(meta, VariantMeta)
    alternatives = {a.tag: equality(a.type) for a in meta.alternatives}

    def variant_equal(a: Any, b: Any) -> bool:
        return type(a) is type(b) and a.tag == b.tag and alternatives[a.tag](a.value, b.value)

    return variant_equal


# -- zero values ---------------------------------------------------------------------------------


def zero(meta: TypeMeta) -> Any:
    """The initial value of a property nobody set (codegen.md §1.3)."""
    if isinstance(meta, NativeMeta):
        return _NATIVE_ZEROS[meta.qualified_name]
    if isinstance(meta, EnumMeta):
        return next(iter(meta.py_class))
    if isinstance(meta, StructMeta):
        return meta.py_class(*(zero(f.type) for f in meta.fields))
    if isinstance(meta, VariantMeta):
        first = meta.alternatives[0]
        return meta.py_class(first.tag, zero(first.type))
    if isinstance(meta, SequenceMeta):
        return b"" if meta.is_bytes else ()
    if isinstance(meta, ArrayMeta):
        if meta.is_bytes:
            return bytes(meta.size)
        return tuple(zero(meta.element) for _ in range(meta.size))
    if isinstance(meta, OptionalMeta):
        return None
    if isinstance(meta, QuantityMeta):
        value = zero(meta.value_type)
        outside = (meta.minimum is not None and value < meta.minimum) or (
            meta.maximum is not None and value > meta.maximum
        )
        if outside and meta.minimum is not None:
            return type(value)(meta.minimum)
        return value
    assert isinstance(meta, AliasMeta)
    return zero(meta.target)


_NATIVE_ZEROS: Final[dict[str, Any]] = {
    **{n: 0 for n in ("u8", "u16", "u32", "u64", "i16", "i32", "i64")},
    "f32": 0.0,
    "f64": 0.0,
    "bool": False,
    "string": "",
    "Duration": Duration(0),
    "TimeStamp": TimeStamp(0),
}


# -- configuration form --------------------------------------------------------------------------

_FROM_CONFIG: dict[TypeMeta, Convert] = {}


def from_config(meta: TypeMeta) -> Convert:
    """The converter from a configuration value (YAML data) to a checked Python value."""
    result: Convert = _cached(_FROM_CONFIG, _build_from_config, meta)
    return result


def _native_from_config(meta: NativeMeta) -> Convert:
    name = meta.qualified_name
    check = checker(meta)
    if name == "Duration":
        return _parsed(meta, Duration)
    if name == "TimeStamp":
        return _parsed(meta, TimeStamp)
    if name in ("f32", "f64"):

        def float_value(raw: Any) -> Any:
            if type(raw) is bool:
                raise _expected(meta, raw)
            check(raw)
            return float(raw)

        return float_value

    def native_value(raw: Any) -> Any:
        check(raw)
        return raw

    return native_value


def _parsed(meta: TypeMeta, cls: type[Duration] | type[TimeStamp]) -> Convert:
    def parse(raw: Any) -> Any:
        if type(raw) is cls:
            return raw
        if not isinstance(raw, str):
            if isinstance(raw, int | float) and cls is Duration and not isinstance(raw, bool):
                raise Invalid("Duration needs a unit, e.g. '100 ms'")
            raise _expected(meta, raw)
        try:
            return cls.parse(raw)
        except TimeValueError as error:
            raise Invalid(str(error)) from None

    return parse


def _enum_from_config(meta: EnumMeta) -> Convert:
    by_name = {e.stl_name: meta.py_class[e.py_name] for e in meta.enumerators}
    names = ", ".join(by_name)

    def enum_value(raw: Any) -> Any:
        if type(raw) is meta.py_class:
            return raw
        found = by_name.get(raw) if isinstance(raw, str) else None
        if found is None:
            raise Invalid(f"invalid value {show(raw)} (expected one of {names})")
        return found

    return enum_value


def _struct_from_config(meta: StructMeta) -> Convert:
    fields = [(f.stl_name, f, from_config(f.type)) for f in meta.fields]
    known = {f.stl_name for f in meta.fields}

    def struct_value(raw: Any) -> Any:
        if type(raw) is meta.py_class:
            checker(meta)(raw)
            return raw
        if not isinstance(raw, Mapping):
            raise _expected(meta, raw)
        for key in raw:
            if key not in known:
                raise Invalid(f"struct {meta.qualified_name} has no field {show(key)}")
        values: list[Any] = []
        for stl_name, field_meta, convert in fields:
            if stl_name not in raw:
                if isinstance(field_meta.type, OptionalMeta):
                    values.append(None)
                    continue
                raise Invalid(f"missing field '{stl_name}' of {meta.qualified_name}")
            try:
                values.append(convert(raw[stl_name]))
            except Invalid as error:
                raise error.inside(stl_name) from None
        return meta.py_class(*values)

    return struct_value


def _variant_from_config(meta: VariantMeta) -> Convert:
    tags = ", ".join(a.tag for a in meta.alternatives)

    def variant_value(raw: Any) -> Any:
        if type(raw) is meta.py_class:
            checker(meta)(raw)
            return raw
        if not isinstance(raw, Mapping) or set(raw) - {"type", "value"} or "type" not in raw:
            raise Invalid(f"expected {{type: <{tags}>, value: ...}} for {meta.qualified_name}")
        alternative = meta.alternative(raw["type"]) if isinstance(raw["type"], str) else None
        if alternative is None:
            raise Invalid(f"invalid type {show(raw['type'])} (expected one of {tags})")
        if "value" not in raw:
            return meta.py_class(alternative.tag, zero(alternative.type))
        try:
            value = from_config(alternative.type)(raw["value"])
        except Invalid as error:
            raise error.inside(alternative.tag) from None
        return meta.py_class(alternative.tag, value)

    return variant_value


def _sequence_from_config(meta: SequenceMeta | ArrayMeta) -> Convert:
    check = checker(meta)
    element = from_config(meta.element)

    def sequence_value(raw: Any) -> Any:
        if meta.is_bytes and isinstance(raw, bytes):
            value: Any = raw
        elif isinstance(raw, list | tuple):
            items = []
            for index, item in enumerate(raw):
                try:
                    items.append(element(item))
                except Invalid as error:
                    raise error.inside(f"[{index}]") from None
            value = bytes(items) if meta.is_bytes else tuple(items)
        else:
            raise _expected(meta, raw)
        check(value)
        return value

    return sequence_value


def _build_from_config(meta: TypeMeta) -> Convert:
    if isinstance(meta, NativeMeta):
        return _native_from_config(meta)
    if isinstance(meta, EnumMeta):
        return _enum_from_config(meta)
    if isinstance(meta, StructMeta):
        return _struct_from_config(meta)
    if isinstance(meta, VariantMeta):
        return _variant_from_config(meta)
    if isinstance(meta, SequenceMeta | ArrayMeta):
        return _sequence_from_config(meta)
    if isinstance(meta, OptionalMeta):
        target = from_config(meta.target)
        return lambda raw: None if raw is None else target(raw)
    if isinstance(meta, QuantityMeta):
        base = from_config(meta.value_type)
        check = checker(meta)

        def quantity_value(raw: Any) -> Any:
            value = base(raw)
            check(value)
            return value

        return quantity_value
    assert isinstance(meta, AliasMeta)
    return from_config(meta.target)


def to_config(meta: TypeMeta, value: Any) -> Any:
    """The configuration form of a value: what the shell prints and YAML accepts back."""
    meta = resolve_alias(meta)
    if isinstance(meta, NativeMeta | QuantityMeta):
        return str(value) if isinstance(value, Duration | TimeStamp) else value
    if isinstance(meta, EnumMeta):
        return next(e.stl_name for e in meta.enumerators if e.py_name == value.name)
    if isinstance(meta, StructMeta):
        return {f.stl_name: to_config(f.type, getattr(value, f.py_name)) for f in meta.fields}
    if isinstance(meta, VariantMeta):
        alternative = meta.alternative(value.tag)
        assert alternative is not None
        return {"type": value.tag, "value": to_config(alternative.type, value.value)}
    if isinstance(meta, SequenceMeta | ArrayMeta):
        if meta.is_bytes:
            return list(value)
        return [to_config(meta.element, item) for item in value]
    assert isinstance(meta, OptionalMeta)
    return None if value is None else to_config(meta.target, value)


def enum_member(meta: EnumMeta, key: int) -> enum.Enum:
    """The member of ``key``; an unknown key is :class:`Invalid` (wire decode)."""
    try:
        return meta.py_class(key)
    except ValueError:
        raise Invalid(f"{key} is not a key of {meta.qualified_name}") from None
