"""The resolved STL program: an immutable, fully typed model for the code generator.

Everything here is final: names are resolved to the types they denote, descriptions are
attached, defaults applied. Orders are STL declaration order (files: dependencies first), so
iterating the model is deterministic. User types compare by identity: within one resolution
universe a qualified name denotes exactly one type.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sengen.stl.units import Unit


@dataclass(frozen=True, slots=True)
class Location:
    """Where something was declared: ``path`` is the real path, ``file`` the display path."""

    path: str
    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Type:
    """Base of every type: natives, void and user-declared types."""

    __slots__ = ()

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def qualified_name(self) -> str:
        return self.name


class NativeKind(enum.StrEnum):
    INTEGER = "integer"
    FLOAT = "float"
    BOOL = "bool"
    STRING = "string"
    TIME = "time"  # TimeStamp and Duration: integer nanoseconds


@dataclass(frozen=True, slots=True)
class NativeType(Type):
    """A built-in type. For integers and floats ``bits`` is the width; TimeStamp is unsigned."""

    native_name: str
    kind: NativeKind
    bits: int = 0
    signed: bool = False

    @property
    def name(self) -> str:
        return self.native_name

    @property
    def is_numeric(self) -> bool:
        return self.kind in (NativeKind.INTEGER, NativeKind.FLOAT)

    @property
    def value_range(self) -> tuple[float, float]:
        """Lowest and highest finite value of a numeric type."""
        if self.kind is NativeKind.FLOAT:
            top = 3.4028234663852886e38 if self.bits == 32 else 1.7976931348623157e308
            return -top, top
        if self.signed:
            return float(-(2 ** (self.bits - 1))), float(2 ** (self.bits - 1) - 1)
        return 0.0, float(2**self.bits - 1)


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    """``void``: only a method's return type."""

    @property
    def name(self) -> str:
        return "void"


def _natives() -> dict[str, NativeType]:
    integers = [("u8", 8, False), ("u16", 16, False), ("u32", 32, False), ("u64", 64, False)]
    integers += [("i16", 16, True), ("i32", 32, True), ("i64", 64, True)]
    result = {n: NativeType(n, NativeKind.INTEGER, bits, signed) for n, bits, signed in integers}
    result["f32"] = NativeType("f32", NativeKind.FLOAT, 32, True)
    result["f64"] = NativeType("f64", NativeKind.FLOAT, 64, True)
    result["bool"] = NativeType("bool", NativeKind.BOOL)
    result["string"] = NativeType("string", NativeKind.STRING)
    result["TimeStamp"] = NativeType("TimeStamp", NativeKind.TIME, 64, False)
    result["Duration"] = NativeType("Duration", NativeKind.TIME, 64, True)
    return result


NATIVES: dict[str, NativeType] = _natives()
"""The built-in types by name, in the spec's order. ``i8`` does not exist."""
VOID = VoidType()


@dataclass(frozen=True, slots=True, eq=False)
class UserType(Type):
    """A declared type. ``type_name`` is the simple name; ``package`` may be empty."""

    type_name: str
    package: str
    description: str
    location: Location

    @property
    def name(self) -> str:
        return self.type_name

    @property
    def qualified_name(self) -> str:
        return f"{self.package}.{self.type_name}" if self.package else self.type_name


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: Type
    description: str
    location: Location


@dataclass(frozen=True, slots=True, eq=False)
class StructType(UserType):
    parent: StructType | None
    fields: tuple[Field, ...]

    @property
    def all_fields(self) -> tuple[Field, ...]:
        """Inherited fields first (root first), then the struct's own."""
        chain: list[StructType] = [self]
        while chain[-1].parent is not None:  # iterative: inheritance may be thousands deep
            chain.append(chain[-1].parent)
        return tuple(f for s in reversed(chain) for f in s.fields)


@dataclass(frozen=True, slots=True)
class Enumerator:
    name: str
    key: int
    description: str
    location: Location


@dataclass(frozen=True, slots=True, eq=False)
class EnumType(UserType):
    storage: NativeType
    enumerators: tuple[Enumerator, ...]


@dataclass(frozen=True, slots=True)
class Alternative:
    key: int
    type: Type
    description: str
    location: Location
    hla_name: str = ""  # a FOM alternative's HLA name (fom.md §6.8); empty in STL variants


@dataclass(frozen=True, slots=True, eq=False)
class VariantType(UserType):
    alternatives: tuple[Alternative, ...]


@dataclass(frozen=True, slots=True, eq=False)
class SequenceType(UserType):
    element: Type
    max_size: int | None  # None: unbounded


@dataclass(frozen=True, slots=True, eq=False)
class ArrayType(UserType):
    element: Type
    size: int


@dataclass(frozen=True, slots=True, eq=False)
class QuantityType(UserType):
    value_type: NativeType
    unit_name: str
    unit: Unit | None  # None: unknown unit, the quantity is unitless
    minimum: float | None
    maximum: float | None


@dataclass(frozen=True, slots=True, eq=False)
class AliasType(UserType):
    target: Type


@dataclass(frozen=True, slots=True, eq=False)
class OptionalType(UserType):
    target: Type


class PropertyCategory(enum.StrEnum):
    STATIC_RW = "staticRW"  # [static]: from configuration and the constructor
    STATIC_RO = "staticRO"  # [static_no_config]: set by the implementation only
    DYNAMIC_RW = "dynamicRW"  # [writable]
    DYNAMIC_RO = "dynamicRO"  # the default

    @property
    def is_static(self) -> bool:
        return self in (PropertyCategory.STATIC_RW, PropertyCategory.STATIC_RO)


class TransportMode(enum.StrEnum):
    MULTICAST = "multicast"  # best effort, to all receivers (default for var and event)
    UNICAST = "unicast"  # [bestEffort]
    CONFIRMED = "confirmed"  # reliable and ordered (default for fn)


@dataclass(frozen=True, slots=True)
class Argument:
    name: str
    type: Type
    description: str
    location: Location


@dataclass(frozen=True, slots=True)
class Property:
    name: str
    type: Type
    category: PropertyCategory
    transport: TransportMode
    tags: tuple[str, ...]
    checked: bool
    description: str
    location: Location


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    arguments: tuple[Argument, ...]
    return_type: Type | None  # None: void
    const: bool
    local: bool
    deferred: bool
    transport: TransportMode
    description: str
    location: Location


@dataclass(frozen=True, slots=True)
class Event:
    name: str
    arguments: tuple[Argument, ...]
    transport: TransportMode
    description: str
    location: Location


@dataclass(frozen=True, slots=True, eq=False)
class ClassType(UserType):
    abstract: bool
    parent: ClassType | None
    properties: tuple[Property, ...]
    methods: tuple[Method, ...]
    events: tuple[Event, ...]
    constructor: Method  # Sen's synthesised ``constructor<Name>``: the [static] properties

    def ancestors(self) -> Iterator[ClassType]:
        """The parent, its parent, … up to the root."""
        parent = self.parent
        while parent is not None:
            yield parent
            parent = parent.parent

    @property
    def all_properties(self) -> tuple[Property, ...]:
        """Inherited properties first (root first), then the class's own."""
        # Iterative: inheritance may be deeper than Python's recursion limit.
        chain = [self, *self.ancestors()]
        return tuple(p for c in reversed(chain) for p in c.properties)

    @property
    def instantiable(self) -> bool:
        """Usable without user code (codegen.md §3.8): not abstract, no method in the class or
        an ancestor, no checked property (settings applied)."""
        chain = (self, *self.ancestors())
        return (
            not self.abstract
            and not any(c.methods for c in chain)
            and not any(p.checked for c in chain for p in c.properties)
        )


@dataclass(frozen=True, slots=True)
class StlFile:
    """One loaded file. ``root`` is the folder it was found under (a source folder, an include
    path, the importing file's root or the working directory), for paths in generated headers."""

    path: Path
    display: str
    root: Path
    package: str
    types: tuple[UserType, ...]
    imports: tuple[Path, ...]

    @property
    def relative_path(self) -> str:
        for root in (self.root, self.root.resolve()):
            try:
                return self.path.relative_to(root).as_posix()
            except ValueError:
                continue
        return self.path.name


@dataclass(frozen=True, slots=True)
class Program:
    """A resolution universe: every file of one run, dependencies before dependents."""

    files: tuple[StlFile, ...]
    _by_name: dict[str, UserType] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_by_name", {t.qualified_name: t for f in self.files for t in f.types}
        )

    @property
    def types(self) -> tuple[UserType, ...]:
        return tuple(t for f in self.files for t in f.types)

    def find(self, qualified_name: str) -> UserType | None:
        return self._by_name.get(qualified_name)


def unaliased(t: Type) -> Type:
    """The type an alias chain denotes."""
    while isinstance(t, AliasType):
        t = t.target
    return t


def is_bounded(t: Type) -> bool:
    """Spec §8.2: whether values of ``t`` have a bounded size. Iterative, each type visited
    once: a chain of structs thousands deep, or one whose fields share a type at every level,
    must not recurse or explode."""
    pending: list[Type] = [t]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, NativeType) and current.kind is NativeKind.STRING:
            return False
        if isinstance(current, SequenceType):
            if current.max_size is None:
                return False
        elif isinstance(current, StructType):
            pending += [f.type for f in current.fields]
            if current.parent is not None:
                pending.append(current.parent)
        elif isinstance(current, VariantType):
            pending += [a.type for a in current.alternatives]
        elif isinstance(current, AliasType | OptionalType):
            pending.append(current.target)
    return True  # natives but string, enums, quantities, arrays, bounded sequences
