"""The interface that generated code imports, and nothing else does.

Every module ``sengen build`` writes starts with ``from sengen.runtime import abi as _rt`` and
``_rt.check_interface(N, __name__)``. :data:`INTERFACE` numbers this module's contents: it goes
up whenever a name is removed or changes meaning, and a module generated for another number
fails at import with :class:`InterfaceMismatch`, which says to run ``sengen build`` again.
Users import from :mod:`sengen.runtime`, never from here.
"""

from __future__ import annotations

from sengen.runtime.errors import (
    CallDropped,
    CallError,
    CallFailed,
    CallTimeout,
    ConstViolation,
    LocalMethodError,
    ObjectGone,
    RegistryError,
    SengenError,
    VariantTagError,
)
from sengen.runtime.objects.calls import Call, Promise
from sengen.runtime.objects.declare import (
    Event,
    Module,
    Prop,
    alternative,
    arg,
    enum_meta,
    enumerator,
    event,
    field,
    method,
    prop,
    struct,
    variant,
)
from sengen.runtime.objects.duration import Duration, TimeStamp, TimeValueError
from sengen.runtime.objects.events import (
    BaseEvents,
    Connection,
    Emitter,
    EventHandle,
    EventInfo,
    Events,
)
from sengen.runtime.objects.interface import INTERFACE
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
    AlternativeMeta,
    ArgMeta,
    ArrayMeta,
    Category,
    ClassMeta,
    EnumeratorMeta,
    EnumMeta,
    EventMeta,
    FieldMeta,
    Kind,
    MethodMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    Transport,
    TypeMeta,
    UnitMeta,
    VariantMeta,
)
from sengen.runtime.objects.objects import ConfigError, NativeObject, Object
from sengen.runtime.objects.proxies import LocalProxy, RemoteEndpoint, RemoteProxy
from sengen.runtime.objects.registry import OWN_SCOPE, registry

__all__ = [
    "BOOL",
    "DURATION",
    "F32",
    "F64",
    "I16",
    "I32",
    "I64",
    "INTERFACE",
    "OWN_SCOPE",
    "STRING",
    "TIMESTAMP",
    "U8",
    "U16",
    "U32",
    "U64",
    "AliasMeta",
    "AlternativeMeta",
    "ArgMeta",
    "ArrayMeta",
    "BaseEvents",
    "Call",
    "CallDropped",
    "CallError",
    "CallFailed",
    "CallTimeout",
    "Category",
    "ClassMeta",
    "ConfigError",
    "Connection",
    "ConstViolation",
    "Duration",
    "Emitter",
    "EnumMeta",
    "EnumeratorMeta",
    "Event",
    "EventHandle",
    "EventInfo",
    "EventMeta",
    "Events",
    "FieldMeta",
    "InterfaceMismatch",
    "Kind",
    "LocalMethodError",
    "LocalProxy",
    "MethodMeta",
    "Module",
    "NativeMeta",
    "NativeObject",
    "Object",
    "ObjectGone",
    "OptionalMeta",
    "Promise",
    "Prop",
    "PropertyMeta",
    "QuantityMeta",
    "RegistryError",
    "RemoteEndpoint",
    "RemoteProxy",
    "SequenceMeta",
    "StructMeta",
    "TimeStamp",
    "TimeValueError",
    "Transport",
    "TypeMeta",
    "UnitMeta",
    "VariantMeta",
    "VariantTagError",
    "alternative",
    "arg",
    "check_interface",
    "enum_meta",
    "enumerator",
    "event",
    "field",
    "method",
    "prop",
    "registry",
    "struct",
    "variant",
]


class InterfaceMismatch(SengenError, ImportError):
    """A generated module written for another version of this interface."""


def check_interface(expected: int, module: str) -> None:
    """Raise :class:`InterfaceMismatch` unless ``expected`` is this module's :data:`INTERFACE`."""
    if expected != INTERFACE:
        raise InterfaceMismatch(
            f"{module} was generated for interface {expected} of sengen.runtime, this sengen "
            f"has interface {INTERFACE}: run `sengen build` again"
        )
