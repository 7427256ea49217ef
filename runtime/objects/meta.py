"""Metadata of generated types and classes (codegen.md §3.7).

The shell, queries, the YAML loader, the schema generator and the wire codec work only from
these records, never from Python reflection. Generated modules build them once at import time
from values the generator computed (structural hashes included); they are immutable.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True, slots=True, eq=False)
class TypeMeta:
    """A value type. ``qualified_name`` is the STL name (natives: ``i32``, ``string``, …)."""

    qualified_name: str
    description: str
    type_hash: int

    @property
    def kind(self) -> Kind:
        raise NotImplementedError

    @property
    def name(self) -> str:
        return self.qualified_name.rpartition(".")[2]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.qualified_name}>"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class NativeMeta(TypeMeta):
    """``bits`` is the width of numbers and times; ``signed`` tells integer ranges apart."""

    bits: int = 0
    signed: bool = False

    @property
    def kind(self) -> Kind:
        return Kind.NATIVE


@dataclass(frozen=True, slots=True)
class EnumeratorMeta:
    stl_name: str
    py_name: str
    key: int
    description: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EnumMeta(TypeMeta):
    storage: NativeMeta
    enumerators: tuple[EnumeratorMeta, ...]
    py_class: type[enum.Enum]

    @property
    def kind(self) -> Kind:
        return Kind.ENUM


@dataclass(frozen=True, slots=True)
class FieldMeta:
    stl_name: str
    py_name: str
    type: TypeMeta
    description: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StructMeta(TypeMeta):
    """``fields`` are all fields, parent fields first; ``own`` counts the struct's own ones."""

    parent: StructMeta | None
    fields: tuple[FieldMeta, ...]
    py_class: type

    @property
    def kind(self) -> Kind:
        return Kind.STRUCT


@dataclass(frozen=True, slots=True)
class AlternativeMeta:
    tag: str
    key: int
    type: TypeMeta
    description: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class VariantMeta(TypeMeta):
    alternatives: tuple[AlternativeMeta, ...]
    py_class: type

    @property
    def kind(self) -> Kind:
        return Kind.VARIANT

    def alternative(self, tag: str) -> AlternativeMeta | None:
        """The alternative of ``tag``, also accepting an alternative's qualified type name."""
        for alternative in self.alternatives:
            if tag in (alternative.tag, alternative.type.qualified_name):
                return alternative
        return None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SequenceMeta(TypeMeta):
    """``max_size`` None: unbounded. ``is_bytes``: the element is exactly native ``u8``."""

    element: TypeMeta
    max_size: int | None
    is_bytes: bool

    @property
    def kind(self) -> Kind:
        return Kind.SEQUENCE


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ArrayMeta(TypeMeta):
    element: TypeMeta
    size: int
    is_bytes: bool

    @property
    def kind(self) -> Kind:
        return Kind.ARRAY


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class OptionalMeta(TypeMeta):
    target: TypeMeta

    @property
    def kind(self) -> Kind:
        return Kind.OPTIONAL


@dataclass(frozen=True, slots=True)
class UnitMeta:
    abbreviation: str
    name: str
    category: str
    factor: float


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class QuantityMeta(TypeMeta):
    """A plain number of ``value_type`` in ``unit`` (None: unitless), within ``[minimum,
    maximum]`` when given."""

    value_type: NativeMeta
    unit: UnitMeta | None
    minimum: int | float | None
    maximum: int | float | None

    @property
    def kind(self) -> Kind:
        return Kind.QUANTITY


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class AliasMeta(TypeMeta):
    target: TypeMeta

    @property
    def kind(self) -> Kind:
        return Kind.ALIAS


def resolve_alias(meta: TypeMeta) -> TypeMeta:
    """The type an alias chain denotes."""
    while isinstance(meta, AliasMeta):
        meta = meta.target
    return meta


@dataclass(frozen=True, slots=True)
class ArgMeta:
    stl_name: str
    py_name: str
    type: TypeMeta
    description: str


@dataclass(frozen=True, slots=True)
class PropertyMeta:
    stl_name: str
    py_name: str
    type: TypeMeta
    category: Category
    transport: Transport
    checked: bool
    tags: tuple[str, ...]
    description: str

    @property
    def dynamic(self) -> bool:
        return not self.category.is_static

    @property
    def writable(self) -> bool:
        return self.category is Category.DYNAMIC_RW


@dataclass(frozen=True, slots=True)
class MethodMeta:
    stl_name: str
    py_name: str
    args: tuple[ArgMeta, ...]
    return_type: TypeMeta | None  # None: void
    constant: bool
    transport: Transport
    deferred: bool
    local: bool
    description: str


@dataclass(frozen=True, slots=True)
class EventMeta:
    stl_name: str
    py_name: str
    args: tuple[ArgMeta, ...]
    transport: Transport
    description: str


@dataclass(frozen=True, slots=True, eq=False)
class ClassMeta:
    """An STL class. Member tuples hold the class's own members; the ``all_*`` views add the
    inherited ones, root first. ``scope`` is the generated root package that registered it."""

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
    _index: dict[str, Any] = field(init=False, repr=False, compare=False)
    _all: tuple[tuple[PropertyMeta, ...], tuple[MethodMeta, ...], tuple[EventMeta, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        # The inherited members extend the parent's, already gathered: a deep chain of classes
        # costs one copy per class, never a walk up the chain (nor recursion).
        parent = self.parent
        if parent is None:
            index: dict[str, Any] = {}
            gathered = (self.properties, self.methods, self.events)
        else:
            # Another ClassMeta's own fields (ruff cannot tell), copied in C, not rebuilt.
            index = dict(parent._index)  # noqa: SLF001
            properties, methods, events = (
                parent.all_properties,
                parent.all_methods,
                parent.all_events,
            )
            gathered = (properties + self.properties, methods + self.methods, events + self.events)
        own: tuple[PropertyMeta | MethodMeta, ...] = (*self.properties, *self.methods)
        for member in own:
            index[member.stl_name] = member
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_all", gathered)

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
        return self._all[0]

    @property
    def all_methods(self) -> tuple[MethodMeta, ...]:
        return self._all[1]

    @property
    def all_events(self) -> tuple[EventMeta, ...]:
        return self._all[2]

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
