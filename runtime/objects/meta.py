"""Metadata of generated types and classes (codegen.md §3.7).

The shell, queries, the YAML loader, the schema generator and the wire codec work only from
these records, never from Python reflection. Generated modules build them once at import time
from values the generator computed (structural hashes included); they are immutable.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable
from typing import Any, ClassVar

_set = object.__setattr__


class _Record:
    """An immutable record whose fields ``__match_args__`` names, like a frozen dataclass.

    The records are written out rather than declared as dataclasses: generated modules build
    them as they are imported, and defining a dataclass takes about a millisecond (there are
    twenty here), which every process importing a generated package would pay."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __setattr__(self, name: str, value: object) -> None:
        from dataclasses import FrozenInstanceError  # on this error path only

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self) -> tuple[type[_Record], tuple[Any, ...]]:
        # Copies and pickles are built through __init__: assigning the fields is refused.
        return type(self), tuple(getattr(self, name) for name in self.__match_args__)


class _Value(_Record):
    """A record that compares and hashes by its fields, and shows them, like a dataclass."""

    __slots__ = ()
    _fields: ClassVar[Callable[[Any], tuple[Any, ...]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Each has several fields, so this returns them as a tuple (built in C).
        cls._fields = operator.attrgetter(*cls.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            fields = type(self)._fields  # read through the class: never bound
            return fields(self) == fields(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(type(self)._fields(self))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__qualname__}({fields})"


class Kind(enum.StrEnum):
    NATIVE = "native"
    ENUM = "enum"
    STRUCT = "struct"
    VARIANT = "variant"
    SEQUENCE = "sequence"
    ARRAY = "array"
    OPTIONAL = "optional"
    QUANTITY = "quantity"
    ALIAS = "alias"


class Category(enum.StrEnum):
    STATIC_RW = "STATIC_RW"  # [static]: from configuration and the constructor
    STATIC_RO = "STATIC_RO"  # [static_no_config]: set by the implementation before registration
    DYNAMIC_RW = "DYNAMIC_RW"  # [writable]
    DYNAMIC_RO = "DYNAMIC_RO"  # the default

    @property
    def is_static(self) -> bool:
        return self in (Category.STATIC_RW, Category.STATIC_RO)


class Transport(enum.StrEnum):
    UNICAST = "UNICAST"  # [bestEffort]
    MULTICAST = "MULTICAST"  # best effort to every receiver: the default of properties and events
    CONFIRMED = "CONFIRMED"  # reliable and ordered: the default of methods

    @property
    def reliable(self) -> bool:
        return self is Transport.CONFIRMED


class TypeMeta(_Record):
    """A value type. ``qualified_name`` is the STL name (natives: ``i32``, ``string``, …).
    Types compare by identity."""

    __slots__ = ("description", "qualified_name", "type_hash")
    __match_args__ = ("qualified_name", "description", "type_hash")
    qualified_name: str
    description: str
    type_hash: int

    def __init__(self, qualified_name: str, description: str, type_hash: int) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)

    @property
    def kind(self) -> Kind:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self.qualified_name.rpartition(".")[2]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualified_name}>"


class NativeMeta(TypeMeta):
    """``bits`` is the width of numbers and times; ``signed`` tells integer ranges apart."""

    __slots__ = ("bits", "signed")
    __match_args__ = ("qualified_name", "description", "type_hash", "bits", "signed")
    bits: int
    signed: bool

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        bits: int = 0,
        signed: bool = False,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "bits", bits)
        _set(self, "signed", signed)

    @property
    def kind(self) -> Kind:
        return Kind.NATIVE


class EnumeratorMeta(_Value):
    __slots__ = ("description", "key", "py_name", "stl_name")
    __match_args__ = ("stl_name", "py_name", "key", "description")
    stl_name: str
    py_name: str
    key: int
    description: str

    def __init__(self, stl_name: str, py_name: str, key: int, description: str) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "key", key)
        _set(self, "description", description)


class EnumMeta(TypeMeta):
    __slots__ = ("enumerators", "py_class", "storage")
    __match_args__ = (
        "qualified_name",
        "description",
        "type_hash",
        "storage",
        "enumerators",
        "py_class",
    )
    storage: NativeMeta
    enumerators: tuple[EnumeratorMeta, ...]
    py_class: type[enum.Enum]

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        storage: NativeMeta,
        enumerators: tuple[EnumeratorMeta, ...],
        py_class: type[enum.Enum],
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "storage", storage)
        _set(self, "enumerators", enumerators)
        _set(self, "py_class", py_class)

    @property
    def kind(self) -> Kind:
        return Kind.ENUM


class FieldMeta(_Value):
    __slots__ = ("description", "py_name", "stl_name", "type")
    __match_args__ = ("stl_name", "py_name", "type", "description")
    stl_name: str
    py_name: str
    type: TypeMeta
    description: str

    def __init__(self, stl_name: str, py_name: str, type: TypeMeta, description: str) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "type", type)
        _set(self, "description", description)


class StructMeta(TypeMeta):
    """``fields`` are all fields, parent fields first; ``own`` counts the struct's own ones."""

    __slots__ = ("fields", "parent", "py_class")
    __match_args__ = ("qualified_name", "description", "type_hash", "parent", "fields", "py_class")
    parent: StructMeta | None
    fields: tuple[FieldMeta, ...]
    py_class: type

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        parent: StructMeta | None,
        fields: tuple[FieldMeta, ...],
        py_class: type,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "parent", parent)
        _set(self, "fields", fields)
        _set(self, "py_class", py_class)

    @property
    def kind(self) -> Kind:
        return Kind.STRUCT


class AlternativeMeta(_Value):
    __slots__ = ("description", "key", "tag", "type")
    __match_args__ = ("tag", "key", "type", "description")
    tag: str
    key: int
    type: TypeMeta
    description: str

    def __init__(self, tag: str, key: int, type: TypeMeta, description: str) -> None:
        _set(self, "tag", tag)
        _set(self, "key", key)
        _set(self, "type", type)
        _set(self, "description", description)


class VariantMeta(TypeMeta):
    __slots__ = ("alternatives", "py_class")
    __match_args__ = ("qualified_name", "description", "type_hash", "alternatives", "py_class")
    alternatives: tuple[AlternativeMeta, ...]
    py_class: type

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        alternatives: tuple[AlternativeMeta, ...],
        py_class: type,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "alternatives", alternatives)
        _set(self, "py_class", py_class)

    @property
    def kind(self) -> Kind:
        return Kind.VARIANT

    def alternative(self, tag: str) -> AlternativeMeta | None:
        """The alternative of ``tag``, also accepting an alternative's qualified type name."""
        for alternative in self.alternatives:
            if tag in (alternative.tag, alternative.type.qualified_name):
                return alternative
        return None


class SequenceMeta(TypeMeta):
    """``max_size`` None: unbounded. ``is_bytes``: the element is exactly native ``u8``."""

    __slots__ = ("element", "is_bytes", "max_size")
    __match_args__ = (
        "qualified_name",
        "description",
        "type_hash",
        "element",
        "max_size",
        "is_bytes",
    )
    element: TypeMeta
    max_size: int | None
    is_bytes: bool

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        element: TypeMeta,
        max_size: int | None,
        is_bytes: bool,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "element", element)
        _set(self, "max_size", max_size)
        _set(self, "is_bytes", is_bytes)

    @property
    def kind(self) -> Kind:
        return Kind.SEQUENCE


class ArrayMeta(TypeMeta):
    __slots__ = ("element", "is_bytes", "size")
    __match_args__ = ("qualified_name", "description", "type_hash", "element", "size", "is_bytes")
    element: TypeMeta
    size: int
    is_bytes: bool

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        element: TypeMeta,
        size: int,
        is_bytes: bool,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "element", element)
        _set(self, "size", size)
        _set(self, "is_bytes", is_bytes)

    @property
    def kind(self) -> Kind:
        return Kind.ARRAY


class OptionalMeta(TypeMeta):
    __slots__ = ("target",)
    __match_args__ = ("qualified_name", "description", "type_hash", "target")
    target: TypeMeta

    def __init__(
        self, qualified_name: str, description: str, type_hash: int, target: TypeMeta
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "target", target)

    @property
    def kind(self) -> Kind:
        return Kind.OPTIONAL


class UnitMeta(_Value):
    __slots__ = ("abbreviation", "category", "factor", "name")
    __match_args__ = ("abbreviation", "name", "category", "factor")
    abbreviation: str
    name: str
    category: str
    factor: float

    def __init__(self, abbreviation: str, name: str, category: str, factor: float) -> None:
        _set(self, "abbreviation", abbreviation)
        _set(self, "name", name)
        _set(self, "category", category)
        _set(self, "factor", factor)


class QuantityMeta(TypeMeta):
    """A plain number of ``value_type`` in ``unit`` (None: unitless), within ``[minimum,
    maximum]`` when given."""

    __slots__ = ("maximum", "minimum", "unit", "value_type")
    __match_args__ = (
        "qualified_name",
        "description",
        "type_hash",
        "value_type",
        "unit",
        "minimum",
        "maximum",
    )
    value_type: NativeMeta
    unit: UnitMeta | None
    minimum: int | float | None
    maximum: int | float | None

    def __init__(
        self,
        qualified_name: str,
        description: str,
        type_hash: int,
        value_type: NativeMeta,
        unit: UnitMeta | None,
        minimum: int | float | None,
        maximum: int | float | None,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "value_type", value_type)
        _set(self, "unit", unit)
        _set(self, "minimum", minimum)
        _set(self, "maximum", maximum)

    @property
    def kind(self) -> Kind:
        return Kind.QUANTITY


class AliasMeta(TypeMeta):
    __slots__ = ("target",)
    __match_args__ = ("qualified_name", "description", "type_hash", "target")
    target: TypeMeta

    def __init__(
        self, qualified_name: str, description: str, type_hash: int, target: TypeMeta
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "type_hash", type_hash)
        _set(self, "target", target)

    @property
    def kind(self) -> Kind:
        return Kind.ALIAS


def resolve_alias(meta: TypeMeta) -> TypeMeta:
    """The type an alias chain denotes."""
    while isinstance(meta, AliasMeta):
        meta = meta.target
    return meta


class ArgMeta(_Value):
    __slots__ = ("description", "py_name", "stl_name", "type")
    __match_args__ = ("stl_name", "py_name", "type", "description")
    stl_name: str
    py_name: str
    type: TypeMeta
    description: str

    def __init__(self, stl_name: str, py_name: str, type: TypeMeta, description: str) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "type", type)
        _set(self, "description", description)


class PropertyMeta(_Value):
    __slots__ = (
        "category",
        "checked",
        "description",
        "py_name",
        "stl_name",
        "tags",
        "transport",
        "type",
    )
    __match_args__ = (
        "stl_name",
        "py_name",
        "type",
        "category",
        "transport",
        "checked",
        "tags",
        "description",
    )
    stl_name: str
    py_name: str
    type: TypeMeta
    category: Category
    transport: Transport
    checked: bool
    tags: tuple[str, ...]
    description: str

    def __init__(
        self,
        stl_name: str,
        py_name: str,
        type: TypeMeta,
        category: Category,
        transport: Transport,
        checked: bool,
        tags: tuple[str, ...],
        description: str,
    ) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "type", type)
        _set(self, "category", category)
        _set(self, "transport", transport)
        _set(self, "checked", checked)
        _set(self, "tags", tags)
        _set(self, "description", description)

    @property
    def dynamic(self) -> bool:
        return not self.category.is_static

    @property
    def writable(self) -> bool:
        return self.category is Category.DYNAMIC_RW


class MethodMeta(_Value):
    __slots__ = (
        "args",
        "constant",
        "deferred",
        "description",
        "local",
        "py_name",
        "return_type",
        "stl_name",
        "transport",
    )
    __match_args__ = (
        "stl_name",
        "py_name",
        "args",
        "return_type",
        "constant",
        "transport",
        "deferred",
        "local",
        "description",
    )
    stl_name: str
    py_name: str
    args: tuple[ArgMeta, ...]
    return_type: TypeMeta | None  # None: void
    constant: bool
    transport: Transport
    deferred: bool
    local: bool
    description: str

    def __init__(
        self,
        stl_name: str,
        py_name: str,
        args: tuple[ArgMeta, ...],
        return_type: TypeMeta | None,
        constant: bool,
        transport: Transport,
        deferred: bool,
        local: bool,
        description: str,
    ) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "args", args)
        _set(self, "return_type", return_type)
        _set(self, "constant", constant)
        _set(self, "transport", transport)
        _set(self, "deferred", deferred)
        _set(self, "local", local)
        _set(self, "description", description)


class EventMeta(_Value):
    __slots__ = ("args", "description", "py_name", "stl_name", "transport")
    __match_args__ = ("stl_name", "py_name", "args", "transport", "description")
    stl_name: str
    py_name: str
    args: tuple[ArgMeta, ...]
    transport: Transport
    description: str

    def __init__(
        self,
        stl_name: str,
        py_name: str,
        args: tuple[ArgMeta, ...],
        transport: Transport,
        description: str,
    ) -> None:
        _set(self, "stl_name", stl_name)
        _set(self, "py_name", py_name)
        _set(self, "args", args)
        _set(self, "transport", transport)
        _set(self, "description", description)


class ClassMeta(_Record):
    """An STL class. Member tuples hold the class's own members; the ``all_*`` views add the
    inherited ones, root first. ``scope`` is the generated root package that registered it.
    Classes compare by identity."""

    __slots__ = (
        "_index",
        "constructor",
        "description",
        "events",
        "instantiable",
        "is_abstract",
        "methods",
        "parent",
        "properties",
        "qualified_name",
        "scope",
        "source",
        "type_hash",
    )
    __match_args__ = (
        "qualified_name",
        "description",
        "source",
        "parent",
        "is_abstract",
        "instantiable",
        "properties",
        "methods",
        "events",
        "constructor",
        "type_hash",
        "scope",
    )
    qualified_name: str
    description: str
    source: str  # relative STL path and line, "school/person.stl:12"
    parent: ClassMeta | None
    is_abstract: bool
    instantiable: bool
    properties: tuple[PropertyMeta, ...]
    methods: tuple[MethodMeta, ...]
    events: tuple[EventMeta, ...]
    constructor: tuple[ArgMeta, ...]
    type_hash: int
    scope: str
    _index: dict[str, Any]

    def __init__(
        self,
        qualified_name: str,
        description: str,
        source: str,
        parent: ClassMeta | None,
        is_abstract: bool,
        instantiable: bool,
        properties: tuple[PropertyMeta, ...],
        methods: tuple[MethodMeta, ...],
        events: tuple[EventMeta, ...],
        constructor: tuple[ArgMeta, ...],
        type_hash: int,
        scope: str,
    ) -> None:
        _set(self, "qualified_name", qualified_name)
        _set(self, "description", description)
        _set(self, "source", source)
        _set(self, "parent", parent)
        _set(self, "is_abstract", is_abstract)
        _set(self, "instantiable", instantiable)
        _set(self, "properties", properties)
        _set(self, "methods", methods)
        _set(self, "events", events)
        _set(self, "constructor", constructor)
        _set(self, "type_hash", type_hash)
        _set(self, "scope", scope)
        index: dict[str, Any] = {}
        members: tuple[PropertyMeta | MethodMeta, ...] = (*self.all_properties, *self.all_methods)
        for member in members:
            index[member.stl_name] = member
        _set(self, "_index", index)

    @property
    def stl_name(self) -> str:
        return self.qualified_name.rpartition(".")[2]

    @property
    def package(self) -> str:
        return self.qualified_name.rpartition(".")[0]

    @property
    def parents(self) -> tuple[ClassMeta, ...]:
        """The parent, its parent, … up to the root."""
        chain: list[ClassMeta] = []
        parent = self.parent
        while parent is not None:
            chain.append(parent)
            parent = parent.parent
        return tuple(chain)

    @property
    def all_properties(self) -> tuple[PropertyMeta, ...]:
        inherited = self.parent.all_properties if self.parent is not None else ()
        return inherited + self.properties

    @property
    def all_methods(self) -> tuple[MethodMeta, ...]:
        inherited = self.parent.all_methods if self.parent is not None else ()
        return inherited + self.methods

    @property
    def all_events(self) -> tuple[EventMeta, ...]:
        inherited = self.parent.all_events if self.parent is not None else ()
        return inherited + self.events

    def property(self, stl_name: str) -> PropertyMeta | None:
        member = self._index.get(stl_name)
        return member if isinstance(member, PropertyMeta) else None

    def method(self, stl_name: str) -> MethodMeta | None:
        member = self._index.get(stl_name)
        return member if isinstance(member, MethodMeta) else None

    def event(self, stl_name: str) -> EventMeta | None:
        return next((e for e in self.all_events if e.stl_name == stl_name), None)

    def is_a(self, qualified_name: str) -> bool:
        return any(c.qualified_name == qualified_name for c in (self, *self.parents))

    def __repr__(self) -> str:
        return f"<ClassMeta {self.qualified_name}>"


def _native(name: str, bits: int = 0, signed: bool = False) -> NativeMeta:
    return NativeMeta(name, "", 0, bits, signed)


U8 = _native("u8", 8)
U16 = _native("u16", 16)
U32 = _native("u32", 32)
U64 = _native("u64", 64)
I16 = _native("i16", 16, True)
I32 = _native("i32", 32, True)
I64 = _native("i64", 64, True)
F32 = _native("f32", 32, True)
F64 = _native("f64", 64, True)
BOOL = _native("bool")
STRING = _native("string")
DURATION = _native("Duration", 64, True)
TIMESTAMP = _native("TimeStamp", 64, False)
NATIVES: dict[str, NativeMeta] = {
    n.qualified_name: n
    for n in (U8, U16, U32, U64, I16, I32, I64, F32, F64, BOOL, STRING, DURATION, TIMESTAMP)
}
