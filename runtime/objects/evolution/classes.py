"""The check of a class pair (evolution.md §4, §6): members matched by STL name over the whole
hierarchy, each with its converters, or the first incompatible position as one line."""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sengen.runtime.errors import SengenError
from sengen.runtime.objects.codec import codec, member_id
from sengen.runtime.objects.evolution.convert import Convert, Incompatible, build, same
from sengen.runtime.objects.meta import (
    ArrayMeta,
    ClassMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    TypeMeta,
    resolve_alias,
)

# Plans are shared by every producer process of a version: their texts name the process by
# this mark, replaced by each process's label when logged or delivered.
LABEL = "\x00"
Decode = Callable[[memoryview, int], tuple[Any, int]]
_U32 = struct.Struct("<I")


class Refused(SengenError):
    """An incompatible pair: ``where`` and the two types, as the refusal line writes them."""


@dataclass(slots=True)
class PropertyPlan:
    """A property in both versions: how its bytes and values come in, and setters go out."""

    local: PropertyMeta
    remote: PropertyMeta
    incoming: Convert  # a remote value into a local one
    outgoing: Convert  # a local value into a remote one (setters)
    read: Decode  # the wire bytes: the local codec if identical, else the remote one
    direct: bool  # ``read`` gives local values (identical types): no conversion
    dynamic: bool  # dynamic in both versions: updates apply (§4.2)


@dataclass(slots=True)
class MethodPlan:
    """A local method: how it is called on the remote version, or why it cannot be."""

    stl_name: str
    error: tuple[str, str] | None  # (CallFailed type, message): every call fails so
    why: str = ""  # for IncompatibleMember: the end of the pair check's WARNING
    remote_args: tuple[tuple[int, Convert], ...] = ()  # per remote argument: local index, L→R
    names: tuple[str, ...] = ()  # the remote arguments' STL names
    result: Convert | None = None  # R → L; None: discarded (local void)


@dataclass(slots=True)
class EventPlan:
    """A remote event that is delivered here: per local argument, the remote index and R→L."""

    stl_name: str
    args: tuple[tuple[int, Convert], ...] | None  # None: never delivered


@dataclass(slots=True)
class ClassPlan:
    remote: ClassMeta
    local: ClassMeta
    properties: dict[int, tuple[PropertyMeta, PropertyPlan | None]]  # by remote member id
    by_local: dict[str, PropertyPlan]  # by local STL name
    methods: dict[str, MethodPlan]
    events: dict[str, EventPlan]  # by remote STL name
    differences: list[str] = field(default_factory=list)  # DEBUG lines
    warnings: list[str] = field(default_factory=list)  # never-delivered / never-callable


def spell(meta: TypeMeta) -> str:
    """A type as the refusal line writes it (§6.3)."""
    meta = resolve_alias(meta)
    if isinstance(meta, NativeMeta):
        return meta.qualified_name
    return f"{meta.qualified_name} ({_summary(meta)})"


def _summary(meta: TypeMeta) -> str:
    if isinstance(meta, SequenceMeta):
        bound = "" if meta.max_size is None else f", {meta.max_size}"
        return f"sequence<{meta.element.qualified_name}{bound}>"
    if isinstance(meta, ArrayMeta):
        return f"array<{meta.element.qualified_name}, {meta.size}>"
    if isinstance(meta, OptionalMeta):
        return f"optional<{meta.target.qualified_name}>"
    if isinstance(meta, QuantityMeta):
        unit = "" if meta.unit is None else f", {meta.unit.abbreviation}"
        return f"quantity<{meta.value_type.qualified_name}{unit}>"
    return meta.kind.value


def _checked(member: str, remote: TypeMeta, local: TypeMeta) -> Convert:
    """R → L, or :class:`Refused` with the position."""
    try:
        return build(remote, local)
    except Incompatible as error:
        steps = "".join(f" > {s}" for s in error.steps)
        raise Refused(
            f"{member}{steps}: local {spell(error.local)}, remote {spell(error.remote)}"
        ) from None


def _identical(remote: TypeMeta, local: TypeMeta) -> bool:
    return same(resolve_alias(remote), resolve_alias(local))


def check(remote: ClassMeta, local: ClassMeta, label: str) -> ClassPlan:
    """The plan of the pair, or :class:`Refused` (walking L in declaration order, §6.2)."""
    q = local.qualified_name
    remote_props = {p.stl_name: p for p in remote.all_properties}
    by_local: dict[str, PropertyPlan] = {}
    differences: list[str] = []
    warnings: list[str] = []
    for prop in local.all_properties:
        theirs = remote_props.get(prop.stl_name)
        if theirs is None:
            differences.append(f"  property '{prop.stl_name}': only local (zero value)")
            continue
        where = f"property '{prop.stl_name}'"
        incoming = _checked(where, theirs.type, prop.type)
        identical = _identical(theirs.type, prop.type)
        outgoing = build(prop.type, theirs.type)
        if not identical:
            differences.append(f"  {where}: local {spell(prop.type)}, remote {spell(theirs.type)}")
        by_local[prop.stl_name] = PropertyPlan(
            prop,
            theirs,
            incoming,
            outgoing,
            codec(prop.type if identical else theirs.type)[1],
            identical,
            prop.dynamic and theirs.dynamic,
        )
    properties: dict[int, tuple[PropertyMeta, PropertyPlan | None]] = {}
    for theirs in remote.all_properties:
        properties[member_id(theirs.stl_name)] = (theirs, by_local.get(theirs.stl_name))
        if theirs.stl_name not in by_local:
            differences.append(f"  property '{theirs.stl_name}': only remote (ignored)")
    methods = {m.stl_name: _method(m.stl_name, local, remote, q, label) for m in local.all_methods}
    for name, plan in methods.items():
        if plan.why:
            warnings.append(
                f"type '{q}' of process {label}: method '{name}' cannot be called from here:"
                f" the remote method {plan.why}"
            )
    events: dict[str, EventPlan] = {}
    local_events = {e.stl_name: e for e in local.all_events}
    remote_events = {e.stl_name: e for e in remote.all_events}
    for event in local.all_events:
        theirs_e = remote_events.get(event.stl_name)
        if theirs_e is None:
            continue
        index = {a.stl_name: i for i, a in enumerate(theirs_e.args)}
        args: list[tuple[int, Convert]] = []
        missing = None
        for arg in event.args:
            at = index.get(arg.stl_name)
            if at is None:
                missing = missing or arg.stl_name
                continue
            where = f"event '{event.stl_name}' argument '{arg.stl_name}'"
            args.append((at, _checked(where, theirs_e.args[at].type, arg.type)))
        if missing is not None:
            warnings.append(
                f"type '{q}' of process {label}: event '{event.stl_name}' is never delivered"
                f" here: the remote event has no argument '{missing}'"
            )
            events[event.stl_name] = EventPlan(event.stl_name, None)
        else:
            events[event.stl_name] = EventPlan(event.stl_name, tuple(args))
    for name in remote_events:
        if name not in local_events:
            differences.append(f"  event '{name}': only remote (dropped)")
    return ClassPlan(remote, local, properties, by_local, methods, events, differences, warnings)


def _method(name: str, local: ClassMeta, remote: ClassMeta, q: str, label: str) -> MethodPlan:
    mine = local.method(name)
    theirs = remote.method(name)
    assert mine is not None
    if theirs is None:
        text = f"method '{name}' is not defined by the remote implementation of '{q}'"
        text += f" (process {label})"
        return MethodPlan(name, ("MissingMember", text))
    index = {a.stl_name: i for i, a in enumerate(mine.args)}
    for arg in mine.args:  # L's order decides which incompatibility is reported
        at = next((i for i, a in enumerate(theirs.args) if a.stl_name == arg.stl_name), None)
        if at is not None:
            where = f"method '{name}' argument '{arg.stl_name}'"
            _checked(where, theirs.args[at].type, arg.type)
    result: Convert | None = None
    void_remote = theirs.return_type is None
    if mine.return_type is not None and theirs.return_type is not None:
        result = _checked(f"method '{name}' result", theirs.return_type, mine.return_type)
    prefix = f"method '{name}' of the remote implementation of '{q}' (process {label})"
    for arg in theirs.args:
        if arg.stl_name not in index:
            text = f"{prefix} needs argument '{arg.stl_name}', which the local declaration lacks"
            return MethodPlan(
                name, ("IncompatibleMember", text), f"needs argument '{arg.stl_name}'"
            )
    if mine.return_type is not None and void_remote:
        text = f"{prefix} returns nothing"
        return MethodPlan(name, ("IncompatibleMember", text), "returns nothing")
    outgoing = tuple(
        (index[arg.stl_name], build(mine.args[index[arg.stl_name]].type, arg.type))
        for arg in theirs.args
    )
    names = tuple(a.stl_name for a in theirs.args)
    return MethodPlan(name, None, remote_args=outgoing, names=names, result=result)
