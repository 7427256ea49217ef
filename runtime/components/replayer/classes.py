"""The classes of replayed objects, built from an archive's type descriptions.

An archive carries the STL description of every recorded class (the form the transport sends
with a first publication, :mod:`sengen.runtime.objects.describe`), so a replay needs no generated
package: each class becomes a native class driven by its metadata, as a remote class becomes a
dynamic proxy in the shell. When the process does import the generated class of that name and
structural hash, the replayed objects subclass its generated base instead, so that a component
of the process sees the proxies it knows (``tank.on_level_changed``). A loaded class of the same
name and another hash is a clash: the archive's values would not fit it.

A replayed object answers no call: a replay cannot compute what the original would have
answered, so every method and every setter through a proxy fails with :class:`ReplayedCall`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sengen.runtime import CallError, EventHandle, LocalProxy, NativeObject
from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.extension import (
    ClassMeta,
    Events,
    MethodMeta,
    PropertyMeta,
    describe,
    registry,
    values,
)

__all__ = ["ClassClash", "ReplayedCall", "ReplayedObject", "replay_class"]


class ReplayedCall(CallError):
    """A call to a replayed object: a replay has no implementation to answer it."""


class ClassClash(SengenError, ValueError):
    """An archive's class whose description differs from the loaded class of that name."""


class _Emitter(EventHandle[...]):
    """An event handle of a replayed object: the replayer re-emits what was recorded."""

    __slots__ = ()

    def emit(self, *args: Any) -> None:
        self._emit(args)


class ReplayedObject(NativeObject):
    """What every replayed object adds to its class: state from archive values, re-emitted
    events, and calls refused."""

    __slots__ = ()
    events: Events  # NativeObject's slot: the class's handles, emitters included

    def __init__(self, name: str) -> None:
        # Not the generated constructor, which wants the static properties as arguments: every
        # property, static ones included, comes from the archive (load_state).
        NativeObject.__init__(self, name)

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Properties by STL name, in their JSON form: before publication, set at once (static
        ones included); afterwards, written for the next commit like any owner's write."""
        meta = self.META
        for stl_name, raw in state.items():
            prop = meta.property(stl_name)
            if prop is None:
                continue  # a property the description does not know cannot be shown anyway
            value = values.from_config(prop.type)(raw)
            if self.bus is None:
                self._PROPS[prop.py_name].set(self, value)
            else:
                self._set_next(prop.py_name, value)

    def emit_recorded(self, event: str, arguments: Mapping[str, Any]) -> None:
        """Emit ``event`` (its STL name) with its recorded arguments by name (JSON form)."""
        meta = self.META.event(event)
        if meta is None:
            return
        handle = getattr(self.events, meta.py_name)
        handle.emit(*(values.from_config(a.type)(arguments.get(a.stl_name)) for a in meta.args))

    def _execute_setter(
        self,
        prop: PropertyMeta,
        value: Any,
        reply: Callable[[Any, BaseException | None], None],
    ) -> None:
        reply(None, self.refusal(prop.stl_name))

    def refusal(self, member: str) -> ReplayedCall:
        return ReplayedCall(
            f"'{self._address_}.{member}' cannot be called: the object is replayed from an archive"
        )


def _refusing(method: MethodMeta) -> Callable[..., Any]:
    def refuse(self: ReplayedObject, *_args: Any) -> Any:
        raise self.refusal(method.stl_name)

    return refuse


def _implementation(py_name: str) -> str:
    """The name of a method's implementation hook (codegen.md §2.3: the unmangled stem)."""
    return (py_name[:-1] if py_name.endswith("_") else py_name) + "_impl"


def replay_class(description: bytes) -> type[ReplayedObject]:
    """The class of the replayed objects of a described class; raises
    :class:`describe.DescriptionError` for an unreadable description, :class:`ClassClash`."""
    meta = describe.read(description)
    name = meta.qualified_name
    namespace: dict[str, Any] = {_implementation(m.py_name): _refusing(m) for m in meta.all_methods}
    entry = registry.by_hash(name, meta.type_hash)
    if entry is None and registry.knows_class(name):
        raise ClassClash(
            f"class '{name}' of the archive differs from the loaded class of that name"
            " (its STL changed since the recording): replay it in a process that does not"
            " import that package"
        )
    if entry is not None and entry.meta.scope != describe.DYNAMIC_SCOPE:
        namespace.update(__slots__=(), _STL_VIEW=True)
        return type(f"{meta.stl_name}Replayed", (ReplayedObject, entry.base), namespace)
    if entry is not None:  # described before, by this or another replay of the process
        meta = entry.meta
    cls = _dynamic(meta, namespace)
    if entry is None:
        _register(meta, cls)
    return cls


def _dynamic(meta: ClassMeta, namespace: dict[str, Any]) -> type[ReplayedObject]:
    slots = tuple(p.py_name for p in meta.all_properties)
    events = type(
        f"{meta.stl_name}ReplayedEvents",
        (Events,),
        {"HANDLES": {e.py_name: _Emitter for e in meta.all_events}},
    )
    namespace.update(__slots__=slots, META=meta, _STL_VIEW=True, _EVENTS=events)
    bases = (ReplayedObject, describe.DynamicObject)
    cls: type[ReplayedObject] = type(f"{meta.stl_name}Replayed", bases, namespace)
    return cls


def _register(meta: ClassMeta, native: type[ReplayedObject]) -> None:
    """Registered under the dynamic scope, so that subscribers of this process get local
    proxies of the class, and the transport finds it by name and hash."""
    slots = tuple(p.py_name for p in meta.all_properties)
    local = type(
        f"{meta.stl_name}ReplayedLocalProxy",
        (LocalProxy, describe.DynamicObject),
        {"__slots__": slots, "META": meta, "_STL_VIEW": True},
    )
    interface = type(
        f"{meta.stl_name}Replayed", (describe.DynamicObject,), {"__slots__": (), "META": meta}
    )
    registry.register_class(__name__, interface, native, local, describe.dynamic_proxy(meta))
