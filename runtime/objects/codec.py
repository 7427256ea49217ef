"""Binary codecs compiled once per type from its metadata (codegen.md §1.4, §3.4, §9 item 8).

A codec is a pair of closures: ``encode(out: bytearray, value)`` appends, ``decode(view, pos)``
returns ``(value, next_pos)``. Runs of consecutive fixed-size struct fields share one
``struct.Struct``, so a struct of numbers is one pack call. Little-endian throughout; lengths and
counts are u32; a variant writes its alternative's key (declaration index) as u32; an optional
writes a u8 flag. Encoding does the cheap checks (exact struct class, integer widths, the f32
range); decoding checks lengths and bounds, enum and variant keys and quantity ranges, and never
reads past the buffer. The transport (distribution issue) frames these bytes.
"""

from __future__ import annotations

import functools
import itertools
import operator
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.objects.meta import (
    AliasMeta,
    ArgMeta,
    ArrayMeta,
    ClassMeta,
    EnumMeta,
    EventMeta,
    MethodMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)
from sengen.runtime.objects.values import Invalid, checker, enum_member

Encode = Callable[[bytearray, Any], None]
Decode = Callable[[memoryview, int], tuple[Any, int]]

_FORMATS = {
    "u8": "B",
    "u16": "H",
    "u32": "I",
    "u64": "Q",
    "i16": "h",
    "i32": "i",
    "i64": "q",
    "f32": "f",
    "f64": "d",
    "bool": "?",
    "Duration": "q",
    "TimeStamp": "q",
}
_U32 = struct.Struct("<I")
_U8 = struct.Struct("<B")
_ALONE_BLOB = struct.Struct("<III")  # a change of one byte sequence alone: 1, its id, the size


def _fixed(meta: TypeMeta) -> tuple[str, Callable[[Any], Any], Callable[[Any], Any]] | None:
    """For a fixed-size type: its struct format and the value ↔ packed-item conversions."""
    while isinstance(meta, AliasMeta):
        meta = meta.target
    same: Callable[[Any], Any] = _identity
    if isinstance(meta, NativeMeta) and meta.qualified_name in _FORMATS:
        fmt = _FORMATS[meta.qualified_name]
        if meta.qualified_name == "Duration":
            return fmt, _ns_of, Duration
        if meta.qualified_name == "TimeStamp":
            return fmt, _ns_of, TimeStamp
        if meta.qualified_name == "bool":
            return fmt, _bool_of, same
        return fmt, same, same
    if isinstance(meta, QuantityMeta):
        return _FORMATS[meta.value_type.qualified_name], same, _quantity_check(meta)
    if isinstance(meta, EnumMeta):
        return _FORMATS[meta.storage.qualified_name], _key_of, _member_of(meta)
    return None


def _identity(value: Any) -> Any:
    return value


def _ns_of(value: Any) -> int:
    ns: int = value.ns
    return ns


def _bool_of(value: Any) -> bool:
    if type(value) is not bool:
        raise Invalid(f"expected bool, got {value!r}")
    return value


def _key_of(value: Any) -> int:
    key: int = value.value
    return key


def _member_of(meta: EnumMeta) -> Callable[[Any], Any]:
    return lambda key: enum_member(meta, key)


def _quantity_check(meta: QuantityMeta) -> Callable[[Any], Any]:
    check = checker(meta)

    def checked(value: Any) -> Any:
        check(value)
        return value

    return checked


_CODECS: dict[TypeMeta, tuple[Encode, Decode]] = {}


def codec(meta: TypeMeta) -> tuple[Encode, Decode]:
    """The (encode, decode) pair of ``meta``, built once."""
    found = _CODECS.get(meta)
    if found is None:
        found = _CODECS[meta] = _build(meta)
    return found


def encode(meta: TypeMeta, value: Any) -> bytes:
    out = bytearray()
    codec(meta)[0](out, value)
    return bytes(out)


def decode(meta: TypeMeta, data: bytes) -> Any:
    """Decode one whole value; trailing bytes are an error."""
    view = memoryview(data)
    value, end = codec(meta)[1](view, 0)
    if end != len(view):
        raise Invalid(f"{len(view) - end} bytes left after a {meta.qualified_name}")
    return value


def _unpack(layout: struct.Struct, view: memoryview, pos: int) -> tuple[Any, ...]:
    try:
        return layout.unpack_from(view, pos)
    except struct.error:
        raise Invalid(f"truncated data at byte {pos}") from None


def _pack_failure(meta: TypeMeta, value: Any) -> Invalid:
    return Invalid(f"value {value!r} does not fit in {meta.qualified_name}")


def _build(meta: TypeMeta) -> tuple[Encode, Decode]:
    fixed = _fixed(meta)
    if fixed is not None:
        return _fixed_codec(meta, fixed)
    if isinstance(meta, AliasMeta):
        return codec(meta.target)
    if isinstance(meta, NativeMeta):  # string
        return _encode_string, _decode_string
    if isinstance(meta, StructMeta):
        return _struct_codec(meta)
    if isinstance(meta, VariantMeta):
        return _variant_codec(meta)
    if isinstance(meta, SequenceMeta | ArrayMeta):
        return _sequence_codec(meta)
    assert isinstance(meta, OptionalMeta)
    return _optional_codec(meta)


def _fixed_codec(
    meta: TypeMeta, fixed: tuple[str, Callable[[Any], Any], Callable[[Any], Any]]
) -> tuple[Encode, Decode]:
    fmt, to_item, from_item = fixed
    layout = struct.Struct("<" + fmt)

    def encode_fixed(out: bytearray, value: Any) -> None:
        try:
            out += layout.pack(to_item(value))
        except (struct.error, OverflowError, AttributeError, TypeError):
            raise _pack_failure(meta, value) from None

    unpack_from, size = layout.unpack_from, layout.size

    def decode_fixed(view: memoryview, pos: int) -> tuple[Any, int]:
        try:
            (item,) = unpack_from(view, pos)
        except struct.error:
            raise Invalid(f"truncated data at byte {pos}") from None
        return from_item(item), pos + size

    def decode_plain(view: memoryview, pos: int) -> tuple[Any, int]:
        """A number as it is: one call less, for the most common values."""
        try:
            (item,) = unpack_from(view, pos)
        except struct.error:
            raise Invalid(f"truncated data at byte {pos}") from None
        return item, pos + size

    return encode_fixed, decode_plain if from_item is _identity else decode_fixed


def _encode_string(out: bytearray, value: Any) -> None:
    if type(value) is not str:
        raise Invalid(f"expected string, got {value!r}")
    try:
        data = value.encode()
    except UnicodeEncodeError:
        raise Invalid(f"string {value!r} cannot be encoded as UTF-8") from None
    out += _U32.pack(len(data))
    out += data


def _decode_string(view: memoryview, pos: int) -> tuple[Any, int]:
    (size,) = _unpack(_U32, view, pos)
    start = pos + 4
    if start + size > len(view):
        raise Invalid(f"truncated string at byte {pos}")
    try:
        return str(view[start : start + size], "utf-8"), start + size
    except UnicodeDecodeError:
        raise Invalid(f"invalid UTF-8 in a string at byte {pos}") from None


def _struct_codec(meta: StructMeta) -> tuple[Encode, Decode]:
    """Consecutive fixed-size fields form one packed run; other fields have their own codec."""
    steps: list[tuple[str, Any]] = (
        []
    )  # ("run", (Struct, names, to, from)) or ("one", (name, codec))
    run: list[tuple[str, str, Callable[[Any], Any], Callable[[Any], Any]]] = []

    def close_run() -> None:
        if run:
            layout = struct.Struct("<" + "".join(fmt for _, fmt, _, _ in run))
            steps.append(("run", (layout, [(n, t, f) for n, _, t, f in run])))
            run.clear()

    for f in meta.fields:
        fixed = _fixed(f.type)
        if fixed is not None:
            run.append((f.py_name, *fixed))
        else:
            close_run()
            steps.append(("one", (f.py_name, codec(f.type))))
    close_run()
    cls = meta.py_class

    def encode_struct(out: bytearray, value: Any) -> None:
        if type(value) is not cls:
            raise Invalid(
                f"value of type '{type(value).__qualname__}' given where '{meta.qualified_name}'"
                " is expected"
            )
        for kind, step in steps:
            if kind == "run":
                layout, names = step
                try:
                    out += layout.pack(*(to(getattr(value, n)) for n, to, _ in names))
                except (struct.error, OverflowError, AttributeError, TypeError):
                    raise _pack_failure(meta, value) from None
            else:
                name, (encode_field, _) = step
                encode_field(out, getattr(value, name))

    def decode_struct(view: memoryview, pos: int) -> tuple[Any, int]:
        values: list[Any] = []
        for kind, step in steps:
            if kind == "run":
                layout, names = step
                items = _unpack(layout, view, pos)
                values.extend(back(item) for item, (_, _, back) in zip(items, names, strict=True))
                pos += layout.size
            else:
                _, (_, decode_field) = step
                value, pos = decode_field(view, pos)
                values.append(value)
        return cls(*values), pos

    return encode_struct, decode_struct


def _require(value: object, cls: type, meta: TypeMeta) -> None:
    if type(value) is not cls:
        raise Invalid(f"expected {meta.qualified_name}, got {value!r}")


def _variant_codec(meta: VariantMeta) -> tuple[Encode, Decode]:
    by_tag = {a.tag: (a.key, codec(a.type)[0]) for a in meta.alternatives}
    by_key = {a.key: (a.tag, codec(a.type)[1]) for a in meta.alternatives}
    cls = meta.py_class

    def encode_variant(out: bytearray, value: Any) -> None:
        _require(value, cls, meta)
        key, encode_value = by_tag[value.tag]
        out += _U32.pack(key)
        encode_value(out, value.value)

    def decode_variant(view: memoryview, pos: int) -> tuple[Any, int]:
        (key,) = _unpack(_U32, view, pos)
        found = by_key.get(key)
        if found is None:
            raise Invalid(f"{key} is not an alternative key of {meta.qualified_name}")
        tag, decode_value = found
        value, end = decode_value(view, pos + 4)
        return cls(tag, value), end

    return encode_variant, decode_variant


def _sequence_codec(meta: SequenceMeta | ArrayMeta) -> tuple[Encode, Decode]:
    exact = meta.size if isinstance(meta, ArrayMeta) else None
    bound = meta.max_size if isinstance(meta, SequenceMeta) else meta.size
    encode_item, decode_item = codec(meta.element)

    def check_size(size: int) -> None:
        if (exact is not None and size != exact) or (bound is not None and size > bound):
            limit = f"exactly {exact}" if exact is not None else f"at most {bound}"
            raise Invalid(f"{meta.qualified_name} holds {limit} elements, got {size}")

    def encode_sequence(out: bytearray, value: Any) -> None:
        check_size(len(value))
        if exact is None:
            out += _U32.pack(len(value))
        if meta.is_bytes:
            out += value
        else:
            for item in value:
                encode_item(out, item)

    def encode_blob(out: bytearray, value: Any) -> None:
        """A bounded byte sequence, the common payload: ``encode_sequence`` in short."""
        size = len(value)
        if bound is not None and size > bound:
            check_size(size)
        out += _U32.pack(size)
        out += value

    def decode_sequence(view: memoryview, pos: int) -> tuple[Any, int]:
        if exact is None:
            (size,) = _unpack(_U32, view, pos)
            pos += 4
        else:
            size = exact
        check_size(size)
        if meta.is_bytes:
            if pos + size > len(view):
                raise Invalid(f"truncated {meta.qualified_name} at byte {pos}")
            return bytes(view[pos : pos + size]), pos + size
        items = []
        for _ in range(size):
            item, pos = decode_item(view, pos)
            items.append(item)
        return tuple(items), pos

    if meta.is_bytes and exact is None:
        return encode_blob, decode_sequence
    return encode_sequence, decode_sequence


def _optional_codec(meta: OptionalMeta) -> tuple[Encode, Decode]:
    encode_target, decode_target = codec(meta.target)

    def encode_optional(out: bytearray, value: Any) -> None:
        if value is None:
            out.append(0)
        else:
            out.append(1)
            encode_target(out, value)

    def decode_optional(view: memoryview, pos: int) -> tuple[Any, int]:
        (flag,) = _unpack(_U8, view, pos)
        if flag == 0:
            return None, pos + 1
        if flag != 1:
            raise Invalid(f"invalid optional flag {flag} at byte {pos}")
        return decode_target(view, pos + 1)

    return encode_optional, decode_optional


def member_id(stl_name: str) -> int:
    """The wire id of a member: a 32-bit digest of its STL name, the same in every process."""
    import hashlib  # as in object_id: loaded when a class codec is first built

    return int.from_bytes(hashlib.blake2b(stl_name.encode(), digest_size=4).digest(), "big")


@functools.cache
def class_codec(meta: ClassMeta) -> ClassCodec:
    """The codec of a class, built once."""
    return ClassCodec(meta)


class ClassCodec:
    """What crosses the wire for one class: property changes, calls, results and events.
    Members travel by the id of their STL name; an unknown id is a decode error."""

    def __init__(self, meta: ClassMeta) -> None:
        self.meta = meta
        self._properties = {member_id(p.stl_name): p for p in meta.all_properties}
        # By member id: the property's STL name and decoder (every change decodes through it).
        self._decoders = {
            ident: (p.stl_name, codec(p.type)[1]) for ident, p in self._properties.items()
        }
        self._methods = {member_id(m.stl_name): m for m in meta.all_methods}
        self._events = {member_id(e.stl_name): e for e in meta.all_events}
        # Property changes are the hot path: each property's packed id and encoder, by name;
        # by Python name (``Prop.key``, what an owner's commit lists), what encodes a change of
        # that property alone from an object's current value (:func:`_alone_writer`), and the
        # same for many objects at once (:func:`_alone_column`); and the name of the property
        # that the first bytes of such a change (count 1, its id) change.
        self._encoders = {
            p.stl_name: (_U32.pack(member_id(p.stl_name)), codec(p.type)[0])
            for p in meta.all_properties
        }
        self.singles = {p.py_name: _alone_writer(p) for p in meta.all_properties}
        self.columns = {
            p.py_name: _alone_column(p, self.singles[p.py_name]) for p in meta.all_properties
        }
        self._whole = _Whole(meta.all_properties)
        self._dynamic = frozenset(p.stl_name for p in meta.all_properties if p.dynamic)
        self._alone = {_alone_head(p): p.stl_name for p in meta.all_properties}
        # Fixed-size dynamic properties travel in columns (``wire.Column``): by Python name,
        # what packs many objects' values at once; by member id, what unpacks them.
        self.column_writers: dict[str, ColumnWriter] = {}
        self._columns: dict[int, tuple[str, str, int, Callable[[Any], Any]]] = {}
        for p in meta.all_properties:
            fixed = _fixed(p.type) if p.dynamic else None
            if fixed is not None:
                fmt, to_item, from_item = fixed
                ident = member_id(p.stl_name)
                self.column_writers[p.py_name] = _column_writer(p, ident, fmt, to_item)
                self._columns[ident] = (p.stl_name, fmt, struct.calcsize("<" + fmt), from_item)

    def encode_state(self, values: Mapping[str, Any]) -> bytes:
        """Every property (``values`` holds each by STL name), as :meth:`encode_properties`
        encodes them in declaration order: a publication's snapshot, compiled."""
        try:
            return self._whole.encode(values)
        except (struct.error, OverflowError, AttributeError, TypeError):
            return self.encode_properties(values)  # raises what does not fit, named

    def decode_state(self, data: bytes) -> dict[str, Any]:
        """What :meth:`encode_state` wrote (or anything :meth:`decode_properties` reads)."""
        values = self._whole.decode(data)
        return self.decode_properties(data) if values is None else values

    def encode_properties(self, values: Mapping[str, Any]) -> bytes:
        """Changed properties by STL name, in the given order."""
        out = bytearray(_U32.pack(len(values)))
        encoders = self._encoders
        for stl_name, value in values.items():
            found = encoders.get(stl_name)
            if found is None:
                raise Invalid(f"class '{self.meta.qualified_name}' has no property '{stl_name}'")
            out += found[0]
            found[1](out, value)
        return bytes(out)

    def changed_state(self, obj: Any, props: Sequence[Any]) -> bytes | bytearray:
        """The changed properties ``props`` (``Prop``) of ``obj``, with their current values, as
        :meth:`encode_properties` encodes them: the owner's commit, read at once."""
        if len(props) == 1:
            return self.singles[props[0].key](obj)
        out = bytearray(_U32.pack(len(props)))
        encoders = self._encoders
        for prop in props:
            packed, encode = encoders[prop.meta.stl_name]
            out += packed
            encode(out, prop.get(obj))
        return out

    def decode_properties(self, data: bytes) -> dict[str, Any]:
        view = memoryview(data)
        decoders = self._decoders
        unpack_from = _U32.unpack_from
        pos, values = 0, {}
        try:
            (count,) = unpack_from(view, 0)
            pos = 4
            for _ in range(count):
                (ident,) = unpack_from(view, pos)
                found = decoders.get(ident)
                if found is None:
                    raise Invalid(f"unknown property id {ident} of '{self.meta.qualified_name}'")
                values[found[0]], pos = found[1](view, pos + 4)
        except struct.error:
            raise Invalid(f"truncated data at byte {pos}") from None
        _finished(view, pos)
        return values

    def latest(
        self, changes: Iterable[bytes | Mapping[str, Any]]
    ) -> tuple[dict[str, Any], list[Invalid]]:
        """The latest value of each property in ``changes``, given newest first, encoded
        (:meth:`encode_properties`) or decoded; and the errors of the encoded ones that could
        not be decoded, which are left out. A change of a single property whose latest value
        is known already is not even decoded: properties are state (runtime.md §3.7). Only
        dynamic properties are taken (a static one never changes), so once each has its value
        the older changes are not even looked at."""
        values: dict[str, Any] = {}
        errors: list[Invalid] = []
        alone = self._alone
        dynamic = self._dynamic
        every = len(dynamic)
        for change in changes:
            if len(values) == every:
                break
            if isinstance(change, bytes):
                if alone.get(change[:8]) in values:
                    continue
                try:
                    change = self.decode_properties(change)
                except Invalid as error:
                    errors.append(error)
                    continue
            for name, value in change.items():
                if name not in values and name in dynamic:
                    values[name] = value
        return values, errors

    def decode_column(
        self, member: int, size: int, data: bytes
    ) -> tuple[str, Sequence[Any], list[Invalid]]:
        """The values of a column (``wire.Column``) of property ``member``, ``size`` bytes
        each: the property's STL name, the values in order (:data:`SKIPPED` for one that does
        not decode, e.g. an enumerator this version lacks), and the errors of those."""
        found = self._columns.get(member)
        if found is None:
            raise Invalid(f"no fixed-size property of id {member} in '{self.meta.qualified_name}'")
        stl_name, fmt, own_size, from_item = found
        if size != own_size:
            raise Invalid(f"values of {size} bytes for property '{stl_name}' of {own_size}")
        items = _packed(fmt, len(data) // size).unpack(data)
        if from_item is _identity:
            return stl_name, items, []
        try:
            return stl_name, list(map(from_item, items)), []
        except Invalid:
            pass
        values: list[Any] = []
        errors: list[Invalid] = []
        for item in items:
            try:
                values.append(from_item(item))
            except Invalid as error:
                values.append(SKIPPED)
                errors.append(error)
        return stl_name, values, errors

    def encode_call(self, stl_name: str, args: tuple[Any, ...]) -> bytes:
        method = self.meta.method(stl_name)
        if method is None:
            raise Invalid(f"class '{self.meta.qualified_name}' has no method '{stl_name}'")
        return _encode_member(stl_name, method.args, args)

    def decode_call(self, data: bytes) -> tuple[str, tuple[Any, ...]]:
        return _decode_member(data, self._methods, "method", self.meta.qualified_name)

    def encode_result(self, stl_name: str, value: Any) -> bytes:
        method = self.meta.method(stl_name)
        assert method is not None
        if method.return_type is None:
            return b""
        return encode(method.return_type, value)

    def decode_result(self, stl_name: str, data: bytes) -> Any:
        method = self.meta.method(stl_name)
        assert method is not None
        if method.return_type is None:
            _finished(memoryview(data), 0)
            return None
        return decode(method.return_type, data)

    def encode_event(self, stl_name: str, args: tuple[Any, ...]) -> bytes:
        event = self.meta.event(stl_name)
        if event is None:
            raise Invalid(f"class '{self.meta.qualified_name}' has no event '{stl_name}'")
        return _encode_member(stl_name, event.args, args)

    def decode_event(self, data: bytes) -> tuple[str, tuple[Any, ...]]:
        return _decode_member(data, self._events, "event", self.meta.qualified_name)


class _Whole:
    """A class's whole state as :meth:`ClassCodec.encode_properties` encodes every property in
    declaration order (a publication's snapshot), compiled: each run of consecutive fixed-size
    properties is one ``struct`` call, their ids included, so that a state of numbers costs one
    call to write and one to read, not one per property."""

    def __init__(self, props: Sequence[PropertyMeta]) -> None:
        self.head = _U32.pack(len(props))
        # ("run", layout, getter, template, to_items | None, ids, from_items | None, names)
        # or ("one", stl_name, packed id, encode, decode)
        self.steps: list[tuple[Any, ...]] = []
        run: list[tuple[PropertyMeta, str, Callable[[Any], Any], Callable[[Any], Any]]] = []
        for p in props:
            fixed = _fixed(p.type)
            if fixed is not None:
                run.append((p, *fixed))
                continue
            self._run(run)
            run = []
            encode, decode = codec(p.type)
            self.steps.append(("one", p.stl_name, _U32.pack(member_id(p.stl_name)), encode, decode))
        self._run(run)

    def _run(
        self, run: list[tuple[PropertyMeta, str, Callable[[Any], Any], Callable[[Any], Any]]]
    ) -> None:
        if not run:
            return
        names = tuple(p.stl_name for p, _, _, _ in run)
        ids = tuple(member_id(name) for name in names)
        layout = struct.Struct("<" + "".join("I" + fmt for _, fmt, _, _ in run))
        getter = operator.itemgetter(*names) if len(names) > 1 else _one_getter(names[0])
        template: list[Any] = [value for ident in ids for value in (ident, None)]
        to_items = tuple(to for _, _, to, _ in run)
        from_items = tuple(back for _, _, _, back in run)
        plain = all(f is _identity for f in to_items + from_items)
        self.steps.append(
            ("run", layout, getter, template, None if plain else to_items, ids,
             None if plain else from_items, names)
        )  # fmt: skip

    def encode(self, values: Mapping[str, Any]) -> bytes:
        out = bytearray(self.head)
        for step in self.steps:
            if step[0] == "run":
                _, layout, getter, template, to_items, _, _, _ = step
                items = getter(values)
                args = template.copy()
                if to_items is None:
                    args[1::2] = items
                else:
                    args[1::2] = [to(item) for to, item in zip(to_items, items, strict=True)]
                out += layout.pack(*args)
            else:
                _, name, packed, encode, _ = step
                out += packed
                encode(out, values[name])
        return bytes(out)

    def decode(self, data: bytes) -> dict[str, Any] | None:
        """The values, or None when ``data`` is not laid out so (then it is read property by
        property). A value out of its type's range is :class:`Invalid`, as it is then."""
        if data[:4] != self.head:
            return None
        view = memoryview(data)
        values: dict[str, Any] = {}
        pos = 4
        for step in self.steps:
            if step[0] == "run":
                _, layout, _, _, _, ids, from_items, names = step
                try:
                    items = layout.unpack_from(data, pos)
                except struct.error:
                    return None
                if items[0::2] != ids:
                    return None
                found = items[1::2]
                if from_items is not None:
                    found = tuple(back(item) for back, item in zip(from_items, found, strict=True))
                values.update(zip(names, found, strict=True))
                pos += layout.size
            else:
                _, name, packed, _, decode = step
                if data[pos : pos + 4] != packed:
                    return None
                values[name], pos = decode(view, pos + 4)
        return values if pos == len(data) else None


def _one_getter(name: str) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    return lambda values: (values[name],)


# A column's writer: the packed values of one property of many objects (one at least), their
# member id and the size of one value.
ColumnWriter = tuple[Callable[[Sequence[Any]], bytes], int, int]
SKIPPED: Any = object()  # a value of a column that did not decode (``decode_column``)


@functools.lru_cache(maxsize=64)
def _packed(fmt: str, count: int) -> struct.Struct:
    return struct.Struct(f"<{count}{fmt}")


def _column_writer(
    prop: PropertyMeta, member: int, fmt: str, to_item: Callable[[Any], Any]
) -> ColumnWriter:
    read = operator.attrgetter(prop.py_name)
    plain = to_item is _identity

    def write(objects: Sequence[Any]) -> bytes:
        """Raises ``ValueError``/``TypeError`` (``struct.error`` is one) for a value that does
        not fit: its writer then encodes the objects one by one, to name that one."""
        items = map(read, objects) if plain else map(to_item, map(read, objects))
        try:
            return _packed(fmt, len(objects)).pack(*items)
        except (struct.error, OverflowError, AttributeError) as error:
            raise ValueError(str(error)) from None

    return write, member, struct.calcsize("<" + fmt)


def _alone_head(prop: PropertyMeta) -> bytes:
    """The first bytes of a change of ``prop`` alone: the count (1), then its id."""
    return _U32.pack(1) + _U32.pack(member_id(prop.stl_name))


def _byte_sequence(prop: PropertyMeta) -> SequenceMeta | None:
    """The type of ``prop`` if it is a byte sequence (the common payload, encoded apart)."""
    target = resolve_alias(prop.type)
    return target if isinstance(target, SequenceMeta) and target.is_bytes else None


def _alone_writer(prop: PropertyMeta) -> Callable[[Any], bytes | bytearray]:
    """What encodes, from an object's current value, the change of ``prop`` alone: one call per
    changed object on the hot path of remote traffic, so a byte sequence is written in two C
    calls."""
    read = operator.attrgetter(prop.py_name)
    encode = codec(prop.type)[0]
    blob = _byte_sequence(prop)
    if blob is not None:
        bound = blob.max_size if blob.max_size is not None else -1
        pack, member = _ALONE_BLOB.pack, member_id(prop.stl_name)

        def blob_alone(obj: Any) -> bytes:
            value = read(obj)
            size = len(value)
            if 0 <= bound < size:
                encode(bytearray(), value)  # raises the sequence's own error
            state: bytes = pack(1, member, size) + value
            return state

        return blob_alone
    head = _alone_head(prop)

    def alone(obj: Any) -> bytearray:
        out = bytearray(head)
        encode(out, read(obj))
        return out

    return alone


# A column of changes: where each state ends, and the states, each ``sep`` then a piece of
# ``pieces`` (so that states of one size share their first bytes and join at once).
Column = tuple[Sequence[int], bytes, Sequence[bytes | bytearray]]


def _alone_column(
    prop: PropertyMeta, alone: Callable[[Any], bytes | bytearray]
) -> Callable[[Sequence[Any]], Column]:
    """What encodes the changes of ``prop`` alone of many objects (one at least), as ``alone``
    (:func:`_alone_writer`) does each: for a commit that changed the same property of many
    objects. Byte sequences are encoded without a Python step per object; values of one size
    (payloads tend to keep theirs) are not even copied, their ends a ``range``."""
    blob = _byte_sequence(prop)
    if blob is None:

        def column(objects: Sequence[Any]) -> Column:
            states = list(map(alone, objects))
            return list(itertools.accumulate(map(len, states))), b"", states

        return column
    read = operator.attrgetter(prop.py_name)
    bound, member = blob.max_size, member_id(prop.stl_name)
    head: Callable[[int], bytes] = functools.lru_cache(maxsize=16)(
        lambda size: _ALONE_BLOB.pack(1, member, size)
    )

    def blob_column(objects: Sequence[Any]) -> Column:
        values = list(map(read, objects))
        sizes = list(map(len, values))
        if bound is not None and max(sizes) > bound:
            raise Invalid(f"{blob.qualified_name} holds at most {bound} elements")
        size = sizes[0]
        if sizes.count(size) == len(sizes):
            sep = head(size)
            step = len(sep) + size
            return range(step, step * len(sizes) + 1, step), sep, values
        states = list(map(operator.add, map(head, sizes), values))
        return list(itertools.accumulate(map(len, states))), b"", states

    return blob_column


def _encode_member(stl_name: str, metas: tuple[ArgMeta, ...], args: tuple[Any, ...]) -> bytes:
    """A call or an event: the member's id, then its arguments in order."""
    out = bytearray(_U32.pack(member_id(stl_name)))
    for arg, value in zip(metas, args, strict=True):
        codec(arg.type)[0](out, value)
    return bytes(out)


def _decode_member(
    data: bytes, members: Mapping[int, MethodMeta | EventMeta], kind: str, owner: str
) -> tuple[str, tuple[Any, ...]]:
    view = memoryview(data)
    (ident,) = _unpack(_U32, view, 0)
    member = members.get(ident)
    if member is None:
        raise Invalid(f"unknown {kind} id {ident} of '{owner}'")
    pos, args = 4, []
    for arg in member.args:
        value, pos = codec(arg.type)[1](view, pos)
        args.append(value)
    _finished(view, pos)
    return member.stl_name, tuple(args)


def _finished(view: memoryview, pos: int) -> None:
    if pos != len(view):
        raise Invalid(f"{len(view) - pos} unexpected bytes at the end")
