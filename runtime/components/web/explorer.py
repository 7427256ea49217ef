"""The web component's side of the system, on the component's own thread: the interests clients
opened, the objects they hold, property writes, invocations and the clock.

Every cycle, after the drain, each object whose last commit time moved is copied into a
:class:`Snapshot` (its property values as one tuple): the server's thread reads snapshots only,
never a proxy, so what it serves is always a whole committed cycle. The changes of a cycle go to
the server as one :class:`Frame`; the server turns values into JSON only for what a client reads
or receives, so an unwatched object costs one comparison per cycle.
"""

from __future__ import annotations

import itertools
import operator
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sengen.runtime import (
    Call,
    Connection,
    EventInfo,
    LocalProxy,
    NativeObject,
    Object,
    QueryError,
    RunApi,
    Subscription,
)
from sengen.runtime.errors import LocalMethodError
from sengen.runtime.kernel.extension import (
    Answer,
    ClassMeta,
    EventMeta,
    MethodMeta,
    PropertyMeta,
    did_you_mean,
    json_form,
    parse_query,
    values,
)

from .errors import ApiError, bad_request, conflict, not_found

MASTER = "sen.kernel.VirtualMasterClock"
KERNEL_BUS = "local.kernel"
MAX_CALLS = 1000  # invocation records kept for polling, oldest dropped first


@dataclass(slots=True)
class Snapshot:
    """One object as of a drain of the web component. Never changed once made: the server's
    thread reads it while the cycle makes the next one (not frozen only because a frozen
    dataclass is several times slower to make, and one is made per change)."""

    path: str
    bus: str
    name: str
    meta: ClassMeta
    kind: str  # native, local (a component of this process) or remote
    component: str  # the owning component, for objects of this process
    time: int  # the object's last commit time, ns
    values: tuple[Any, ...]  # one per meta.all_properties

    def value(self, prop: PropertyMeta) -> Any:
        index = self.meta.all_properties.index(prop)
        return json_form(prop.type, self.values[index])

    def state(self) -> dict[str, Any]:
        return {
            p.stl_name: json_form(p.type, v)
            for p, v in zip(self.meta.all_properties, self.values, strict=True)
        }

    def summary(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "session": self.bus.partition(".")[0],
            "bus": self.bus,
            "name": self.name,
            "class": self.meta.qualified_name,
            "kind": self.kind,
        }


@dataclass(frozen=True)
class CallRecord:
    """An invocation: ``status`` pending, done or failed."""

    id: str
    path: str
    method: str
    status: str = "pending"
    result: Any = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "method": self.method,
            "status": self.status,
            "result": self.result,
            "error": self.error,
        }


@dataclass(frozen=True)
class EventRecord:
    path: str
    event: str
    time: int
    args: dict[str, Any]


@dataclass
class Frame:
    """What one cycle changed."""

    changed: list[str] = field(default_factory=list)
    added: list[tuple[int, Snapshot]] = field(default_factory=list)
    removed: list[tuple[int, str]] = field(default_factory=list)
    events: list[EventRecord] = field(default_factory=list)
    results: list[CallRecord] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed or self.events or self.results)


@dataclass(eq=False)
class _Entry:
    obj: Object
    snapshot: Snapshot
    interests: set[int]
    connections: list[Connection]


@dataclass(frozen=True)
class InterestView:
    id: int
    query: str
    paths: frozenset[str]


class Explorer:
    def __init__(self, api: RunApi, max_interests: int) -> None:
        self._api = api
        self._max_interests = max_interests
        self._readers: dict[ClassMeta, Callable[[Object], tuple[Any, ...]]] = {}
        self._ids = itertools.count(1)
        self._call_ids = itertools.count(1)
        self._entries: dict[str, _Entry] = {}
        self._subscriptions: dict[int, Subscription] = {}
        self._pending: list[tuple[CallRecord, Call[Any], MethodMeta | None]] = []
        self._frame = Frame()
        self._sessions = api.sessions()
        mode = api.fetch_monitoring_info().run_mode.name
        self.virtual = mode in ("virtualTime", "virtualTimeRunning")
        # Read by the server's thread: replaced or assigned whole, never changed in place.
        self.view: dict[str, Snapshot] = {}
        self.interests: dict[int, InterestView] = {}
        self.calls: OrderedDict[str, CallRecord] = OrderedDict()
        self.buses: tuple[str, ...] = ()
        self.kernel_objects: dict[str, Snapshot] = {}
        # The kernel's bus, for the master clock and the recorders (found by class, generically).
        self._kernel_sub = api.select(f"SELECT * FROM {KERNEL_BUS}")

    # -- the cycle -------------------------------------------------------------------------------

    def cycle(self) -> Frame:
        """After the drain: refresh the snapshots; the frame of what changed."""
        for path, entry in self._entries.items():
            obj = entry.obj
            if obj.last_commit_time != entry.snapshot.time:
                entry.snapshot = self._snapshot(obj, path, entry.snapshot)
                self.view[path] = entry.snapshot
                self._frame.changed.append(path)
        self._finish_calls()
        kernel = {}
        for obj in self._kernel_sub.objects:
            path = f"{obj.bus}.{obj.name}"
            old = self.kernel_objects.get(path)
            same = old is not None and old.time == obj.last_commit_time
            kernel[path] = old if same and old is not None else self._snapshot(obj, path, old)
        self.kernel_objects = kernel
        buses = tuple(self._sessions.buses())
        if buses != self.buses:
            self.buses = buses
        frame, self._frame = self._frame, Frame()
        return frame

    def _snapshot(self, obj: Object, path: str, old: Snapshot | None) -> Snapshot:
        meta = obj.META
        if old is not None:
            return Snapshot(
                path, old.bus, old.name, meta, old.kind, old.component,
                obj.last_commit_time, self._readers[meta](obj),
            )  # fmt: skip
        read = self._readers.get(meta)
        if read is None:
            read = self._readers[meta] = _reader(meta)
        kind, component = _owner(obj)
        return Snapshot(
            path, obj.bus or "", obj.name, meta, kind, component, obj.last_commit_time, read(obj)
        )

    def close(self) -> None:
        for interest in list(self._subscriptions):
            self.close_interest(interest)
        self._kernel_sub.close()

    # -- interests -------------------------------------------------------------------------------

    def open_interest(self, text: str) -> InterestView:
        if len(self._subscriptions) >= self._max_interests:
            raise ApiError(429, f"too many open interests (at most {self._max_interests})")
        try:
            query = parse_query(text)
        except QueryError as error:
            lines = str(error).splitlines()
            raise bad_request(lines[0], lines[1:]) from None
        if query.bus is None:
            raise bad_request("a subscription needs a bus")
        interest = next(self._ids)
        self.interests[interest] = InterestView(interest, str(query), frozenset())
        subscription = self._api.select(query)
        subscription.on_added(lambda objects: self._added(interest, objects))
        subscription.on_removed(lambda objects: self._removed(interest, objects))
        self._subscriptions[interest] = subscription
        return self.interests[interest]

    def close_interest(self, interest: int) -> None:
        subscription = self._subscriptions.pop(interest, None)
        if subscription is None:
            raise not_found(f"no open interest {interest}")
        subscription.close()
        view = self.interests.pop(interest)
        for path in view.paths:
            self._release(interest, path)

    def _added(self, interest: int, objects: list[Object]) -> None:
        view = self.interests.get(interest)
        if view is None:
            return
        paths = set(view.paths)
        for obj in objects:
            path = f"{obj.bus}.{obj.name}"
            entry = self._entries.get(path)
            if entry is None:
                entry = _Entry(obj, self._snapshot(obj, path, None), set(), [])
                entry.connections = [self._listen(path, obj, e) for e in obj.META.all_events]
                self._entries[path] = entry
                self.view[path] = entry.snapshot
            entry.interests.add(interest)
            paths.add(path)
            self._frame.added.append((interest, entry.snapshot))
        self.interests[interest] = InterestView(interest, view.query, frozenset(paths))

    def _removed(self, interest: int, objects: list[Object]) -> None:
        view = self.interests.get(interest)
        if view is None:
            return
        gone = {f"{o.bus}.{o.name}" for o in objects}
        self.interests[interest] = InterestView(interest, view.query, view.paths - gone)
        for path in gone:
            self._release(interest, path)

    def _release(self, interest: int, path: str) -> None:
        self._frame.removed.append((interest, path))
        entry = self._entries.get(path)
        if entry is None:
            return
        entry.interests.discard(interest)
        if not entry.interests:
            for connection in entry.connections:
                connection.close()
            del self._entries[path]
            self.view.pop(path, None)

    def _listen(self, path: str, obj: Object, meta: EventMeta) -> Connection:
        def heard(info: EventInfo, *args: Any) -> None:
            named = {a.stl_name: json_form(a.type, v) for a, v in zip(meta.args, args, strict=True)}
            self._frame.events.append(EventRecord(path, meta.stl_name, info.creation_time, named))

        return obj._connect_event_(meta, heard, True)

    # -- objects ---------------------------------------------------------------------------------

    def object(self, path: str) -> Object:
        entry = self._entries.get(path)
        if entry is None:
            raise not_found(f"could not find object {path}{did_you_mean(path, self._entries)}")
        return entry.obj

    def owner(self, path: str) -> Answer | None:
        """The question to the owner's process of a remote object; None when it is known."""
        obj = self.object(path)
        directory = self._api.bus_space.processes
        if isinstance(obj, LocalProxy | NativeObject) or directory is None:
            return None
        return directory.ask_owner(obj)

    def set_property(self, path: str, name: str, raw: Any) -> None:
        obj = self.object(path)
        prop = property_of(obj.META, path, name)
        if not prop.writable:
            raise bad_request(f"property '{name}' of '{obj.bus}.{obj.name}' is not writable")
        try:
            value = values.from_config(prop.type)(raw)
        except values.Invalid as error:
            where = _where(name, error)
            raise bad_request(f"invalid value for property '{where}': {error.message}") from None
        call = obj._setter_call_(prop.stl_name, value)
        self._track(path, f"setNext{name[:1].upper()}{name[1:]}", call, None)

    def invoke(self, path: str, name: str, raw: list[Any] | dict[str, Any]) -> CallRecord:
        obj = self.object(path)
        method = method_of(obj.META, path, name)
        args = arguments(method, raw)
        call: Call[Any] = obj._call_(method.stl_name, tuple(args), None, None)
        return self._track(path, name, call, method)

    def _track(
        self, path: str, name: str, call: Call[Any], method: MethodMeta | None
    ) -> CallRecord:
        record = CallRecord(f"c{next(self._call_ids)}", path, name)
        self._remember(record)
        self._pending.append((record, call, method))
        return record

    def _remember(self, record: CallRecord) -> None:
        self.calls[record.id] = record
        while len(self.calls) > MAX_CALLS:
            self.calls.popitem(last=False)

    def _finish_calls(self) -> None:
        waiting = []
        for record, call, method in self._pending:
            if not call.done():
                waiting.append((record, call, method))
                continue
            error = call.exception()
            if error is not None:
                done = CallRecord(record.id, record.path, record.method, "failed", None, str(error))
            else:
                returned = method.return_type if method is not None else None
                value = json_form(returned, call.result()) if returned is not None else None
                done = CallRecord(record.id, record.path, record.method, "done", value)
            if record.id in self.calls:
                self.calls[record.id] = done
            self._frame.results.append(done)
        self._pending = waiting

    # -- the clock and the kernel's objects ------------------------------------------------------

    def master(self) -> Object:
        for obj in self._kernel_sub.objects:
            if obj.META.is_a(MASTER):
                return obj
        raise conflict("no master clock: the system does not run in virtual time")

    def kernel_object(self, path: str) -> Object:
        for obj in self._kernel_sub.objects:
            if f"{obj.bus}.{obj.name}" == path:
                return obj
        raise not_found(f"could not find object {path}")

    def call_on(self, obj: Object, method: str, args: tuple[Any, ...]) -> CallRecord:
        meta = method_of(obj.META, f"{obj.bus}.{obj.name}", method)
        call: Call[Any] = obj._call_(method, args, None, None)
        return self._track(f"{obj.bus}.{obj.name}", method, call, meta)


def _reader(meta: ClassMeta) -> Callable[[Object], tuple[Any, ...]]:
    """Every property's value, as one tuple (attrgetter: the one call per change that the
    cycle pays for an object)."""
    names = [p.py_name for p in meta.all_properties]
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    if not names:
        return lambda obj: ()
    return operator.attrgetter(*names)


def _owner(obj: Object) -> tuple[str, str]:
    if isinstance(obj, NativeObject):
        return "native", ""
    if isinstance(obj, LocalProxy):
        owner = obj.owner
        return "local", owner.local_name.removesuffix(f".{owner.bus}.{owner.name}")
    return "remote", ""


def property_of(meta: ClassMeta, path: str, name: str) -> PropertyMeta:
    prop = meta.property(name)
    if prop is None:
        hint = did_you_mean(name, (p.stl_name for p in meta.all_properties))
        raise not_found(f"property '{name}' not found in {path} ({meta.qualified_name}){hint}")
    return prop


def method_of(meta: ClassMeta, path: str, name: str) -> MethodMeta:
    method = meta.method(name)
    if method is None:
        hint = did_you_mean(name, (m.stl_name for m in meta.all_methods))
        raise not_found(f"method '{name}' not found in {path} ({meta.qualified_name}){hint}")
    if method.local:
        raise bad_request(str(LocalMethodError(method.stl_name)))
    return method


def arguments(method: MethodMeta, raw: list[Any] | dict[str, Any]) -> list[Any]:
    """The call's arguments from JSON (a list in order, or a map by name), converted to their
    STL types, with the shell's messages."""
    params = method.args
    if isinstance(raw, dict):
        unknown = [k for k in raw if k not in {a.stl_name for a in params}]
        if unknown:
            hint = did_you_mean(unknown[0], (a.stl_name for a in params))
            raise bad_request(f"method {method.stl_name} has no argument '{unknown[0]}'{hint}")
        missing = [a.stl_name for a in params if a.stl_name not in raw]
        if missing:
            raise bad_request(f"not enough arguments for method {method.stl_name}")
        raw = [raw[a.stl_name] for a in params]
    if raw and not params:
        raise bad_request(f"the method {method.stl_name} takes no arguments")
    if len(raw) > len(params):
        raise bad_request(f"too many arguments for method {method.stl_name}")
    if len(raw) < len(params):
        raise bad_request(f"not enough arguments for method {method.stl_name}")
    converted = []
    for arg, value in zip(params, raw, strict=True):
        try:
            converted.append(values.from_config(arg.type)(value))
        except values.Invalid as error:
            detail = f"argument '{_where(arg.stl_name, error)}': {error.message}"
            raise bad_request(f"error parsing the arguments: {detail}") from None
    return converted


def _where(name: str, error: values.Invalid) -> str:
    return ".".join((name, *error.path)).replace(".[", "[")
