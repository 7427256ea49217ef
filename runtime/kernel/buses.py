"""Sessions, buses and sources: where objects are published (runtime.md §3.1 to §3.3, §3.13).

A process has one :class:`BusSpace`. A name is used at most once per bus across every component
of the process, counting objects already published and those added but not yet committed; the
same name on another bus is fine. A component adds and removes its objects through its
:class:`Source` on a bus. Discovery (subscriptions, proxies) is built on top of this by the
kernel.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.processes import ProcessDirectory
from sengen.runtime.kernel.publisher import Interests, Publisher
from sengen.runtime.kernel.sessions import BusDirectory
from sengen.runtime.objects.addresses import bus_address_problem
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.objects import NativeObject, object_id
from sengen.runtime.time.stepping import ClockLink

_log = logging.getLogger("sengen.kernel")
LOCAL_SESSION = "local"


class DuplicateObjectName(SengenError, ValueError):
    """A second object of one name on one bus (runtime.md §3.13)."""


def check_bus_address(address: str) -> str:
    """``address`` when it is a valid ``session.bus``; ``ValueError`` with §3.1's text."""
    problem = bus_address_problem(address)
    if problem is not None:
        raise ValueError(problem)
    return address


class BusSpace:
    """Every bus of the process: which component owns which name on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: dict[str, dict[str, tuple[NativeObject, str]]] = {}
        self._ids: dict[str, dict[int, str]] = {}
        self._sessions: set[str] = set()
        self.transport_loaded = False
        # The transport's way to a remote kernel clock, for a master in this process.
        self.clock_link: ClockLink | None = None
        # The transport: told of the objects a source adds (True) or removes (False), a batch
        # at a time, to find the same name used on a bus by another process (runtime.md §3.13).
        self.publication_listener: Callable[[Source, list[NativeObject], bool], None] | None = None
        self.interests = Interests()
        self.directory = BusDirectory()  # what api.sessions() reports
        # The transport's knowledge of the other processes (``ps``, owners in ``info``).
        self.processes: ProcessDirectory | None = None

    def sessions(self) -> list[str]:
        """The sessions in use, sorted."""
        with self._lock:
            return sorted(self._sessions)

    def objects(self, bus: str) -> list[NativeObject]:
        """The objects registered on ``bus``, in registration order."""
        with self._lock:
            return [obj for obj, _ in self._names.get(bus, {}).values()]

    def owner_of(self, bus: str, name: str) -> str | None:
        """The component that registered object ``name`` on ``bus``; None if none did."""
        with self._lock:
            held = self._names.get(bus, {}).get(name)
        return None if held is None else held[1]

    def claim(self, bus: str, objects: list[NativeObject], component: str) -> list[int]:
        """Reserve the objects' names (and ids) on ``bus`` for ``component``: their ids; or
        raise, none of them reserved. ``bus`` is a checked address (``Source``)."""
        session = bus.partition(".")[0]
        idents: list[int] = []
        with self._lock:
            names = self._names.setdefault(bus, {})
            ids = self._ids.setdefault(bus, {})
            try:
                for obj in objects:
                    name = obj.name
                    holder = names.get(name)
                    if holder is not None:
                        raise DuplicateObjectName(
                            f"object name '{name}' is already used on bus '{bus}' by component"
                            f" '{holder[1]}'"
                        )
                    ident = object_id(f"{bus}.{name}")
                    other = ids.get(ident)
                    if other is not None:
                        raise DuplicateObjectName(
                            f"object id collision between '{other}' and '{name}' on bus '{bus}'"
                        )
                    names[name] = (obj, component)
                    ids[ident] = name
                    idents.append(ident)
            except DuplicateObjectName:
                for obj, ident in zip(objects, idents, strict=False):
                    del names[obj.name]
                    del ids[ident]
                raise
            first_use = session not in self._sessions
            self._sessions.add(session)
        self.directory.add(bus, len(objects))
        if first_use and session != LOCAL_SESSION and not self.transport_loaded:
            _log.info("no transport loaded: session '%s' is process-local", session)
        return idents

    def release(self, bus: str, obj: NativeObject) -> None:
        with self._lock:
            names = self._names.get(bus, {})
            held = names.get(obj.name, (None, ""))[0] is obj
            if held:
                del names[obj.name]
                self._ids.get(bus, {}).pop(object_id(f"{bus}.{obj.name}"), None)
        if held:
            self.directory.remove(bus)


class Source:
    """A component's handle on one bus: adds and removes the component's objects."""

    def __init__(
        self,
        space: BusSpace,
        context: Context,
        bus: str,
        api: Any = None,
        publisher: Publisher | None = None,
    ) -> None:
        self.space = space
        self.context = context
        self.bus = check_bus_address(bus)
        self.api = api
        self.publisher = publisher

    def add(self, objects: NativeObject | Iterable[NativeObject]) -> None:
        """Publish: names checked first (nothing is added on a failure), then each object is
        bound to the component, its ``registered`` hook runs and its initial state becomes
        current at once."""
        batch = [objects] if isinstance(objects, NativeObject) else list(objects)
        for obj in batch:
            if obj.bus is not None:
                raise ValueError(f"object '{obj.name}' is already on bus '{obj.bus}'")
        idents = self.space.claim(self.bus, batch, self.context.name)
        for obj, ident in zip(batch, idents, strict=True):
            obj._bind_(self.context, self.bus, self.context.time, self.api, ident)
            if self.publisher is not None:
                self.publisher.added(obj)
        listener = self.space.publication_listener
        if listener is not None:
            listener(self, batch, True)

    def remove(self, objects: NativeObject | Iterable[NativeObject]) -> None:
        """Withdraw: the ``unregistered`` hook runs at once; later calls fail."""
        batch = [objects] if isinstance(objects, NativeObject) else list(objects)
        for obj in batch:
            if obj.bus != self.bus or obj._ctx_ is not self.context:
                raise ValueError(
                    f"object '{obj.name}' is not on bus '{self.bus}' of this component"
                )
        for obj in batch:
            obj._unbind_(self.api)
            self.space.release(self.bus, obj)
            if self.publisher is not None:
                self.publisher.removed(obj)
        listener = self.space.publication_listener
        if listener is not None:
            listener(self, batch, False)
