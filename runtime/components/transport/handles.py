"""The subscriber's side of an object crossing a process boundary (runtime.md §8.1),
transport-neutral: what this process knows of another one's objects.

A :class:`RemoteHandle` per remote object holds its last known state and feeds the
:class:`~sengen.runtime.RemoteProxy` of every component that holds it; the handle is what the
subscriber's ``Discovery`` receives as the object's owner. Changes of several properties, or of
values of variable size, stay encoded until someone reads them: a proxy decodes, at its drain,
only the latest value of each property (``ClassCodec.latest``), so a subscriber slower than the
owner pays for what it sees, not for every commit. A commit that changed one fixed-size
property of many objects (``wire.Column``) is decoded whole on arrival, in one C call, and each
proxy keeps only the latest value of each property. :class:`Calls` holds the calls sent to one
remote process until their results come.

The producer's side is :mod:`~sengen.runtime.components.transport.outbox`.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from sengen.runtime import Object, RemoteProxy
from sengen.runtime.components.transport import wire
from sengen.runtime.errors import CallDropped, CallError, CallFailed, CallTimeout, ObjectGone
from sengen.runtime.kernel.extension import (
    SKIPPED,
    ClassMeta,
    Context,
    EventMeta,
    Invalid,
    LogRecord,
    MethodMeta,
    PropertyMeta,
    Subscription,
    class_codec,
    refused,
)

# A handle settles the changes it holds into its state once it holds this many.
_SETTLE_AT = 64


def result_error(frame: wire.Result) -> CallError | None:
    """The error a result frame carries, of the class the callee's side raised."""
    if frame.status == wire.OK:
        return None
    if frame.status == wire.GONE:
        return ObjectGone(frame.message)
    if frame.status == wire.DROPPED:
        return CallDropped(frame.message)
    if frame.status == wire.TIMED_OUT:
        return CallTimeout(frame.message)
    return CallFailed(frame.error_type, frame.message)


class Calls:
    """The calls this process has sent to one remote process and not yet seen answered."""

    def __init__(self) -> None:
        self._pending: dict[int, tuple[RemoteProxy, MethodMeta | PropertyMeta]] = {}
        self._lock = threading.Lock()

    def add(self, call_id: int, proxy: RemoteProxy, member: MethodMeta | PropertyMeta) -> None:
        with self._lock:
            self._pending[call_id] = (proxy, member)

    def answered(self, frame: wire.Result) -> None:
        with self._lock:
            entry = self._pending.pop(frame.call_id, None)
        if entry is None:
            return  # a proxy already failed it (removal, loss)
        proxy, member = entry
        error = result_error(frame)
        value = None
        if error is None and isinstance(member, MethodMeta):
            try:
                value = class_codec(proxy.META).decode_result(member.stl_name, frame.value)
            except ValueError as problem:
                error = CallFailed("InvalidResult", str(problem))
        proxy._receive_result_(frame.call_id, value, error)

    def forget(self, call_ids: set[int]) -> None:
        with self._lock:
            for call_id in call_ids:
                self._pending.pop(call_id, None)


class RemoteHandle:
    """One object of another process, as this process knows it: its last state and the
    proxies of the components that hold it."""

    __slots__ = (
        "__weakref__",
        "_lock",
        "_proxy_class",
        "_recorded",
        "_send_call",
        "bus",
        "iids",
        "logs",
        "meta",
        "name",
        "oid",
        "proxies",
        "state",
        "time",
        "unsettled",
        "zid",
    )

    def __init__(
        self,
        meta: ClassMeta,
        proxy_class: type[RemoteProxy],
        zid: str,
        oid: int,
        name: str,
        bus: str,
        state: dict[str, Any],
        time: int,
        send_call: Callable[
            [RemoteHandle, RemoteProxy, MethodMeta | PropertyMeta, tuple[Any, ...], int], None
        ],
        lock: threading.Lock,
    ) -> None:
        """``lock`` is shared by the handles of one owner process, so that a commit's changes
        (:func:`deliver_changes`) take it once, not once per object. ``time``, ``unsettled``,
        ``proxies`` and ``logs`` are read and written under it, by the handle and by
        :func:`deliver_changes`, which inlines the handle's part of the hot path."""
        self.meta = meta
        self._proxy_class = proxy_class  # generated, or dynamic for a class not imported here
        self.zid = zid  # the owner's process
        self.oid = oid
        self.name = name
        self.bus = bus
        self.iids: set[int] = set()
        self.state = state  # the latest known values by STL name, static ones too
        self.time = time
        self.unsettled: list[bytes] = []  # encoded changes not yet in the state, oldest first
        self._send_call = send_call
        self.proxies: list[RemoteProxy] = []
        self.logs: list[Subscription] = []
        self._lock = lock
        # An adapted class's change logs record the local version (evolution.md §7).
        recorded = getattr(proxy_class, "_recorded_", None)
        self._recorded = None if recorded is None else recorded(self)

    @property
    def address(self) -> str:
        return f"{self.bus}.{self.name}"

    @property
    def META(self) -> ClassMeta:
        return self.meta

    def log(self, subscription: Subscription, adding: bool) -> None:
        """A change-log subscription (a recorder) starts or stops holding this object: the
        records a local owner would give it, from what arrives."""
        with self._lock:
            self.settle()
            if adding:
                self.logs.append(subscription)
                record: LogRecord = ("add", self.time, self, self.meta.qualified_name,
                                     dict(self.state))  # fmt: skip
                if self._recorded is not None:
                    state = self._recorded.state(self.state)
                    record = ("add", self.time, self._recorded, self.meta.qualified_name, state)
            else:
                if subscription in self.logs:
                    self.logs.remove(subscription)
                record = ("remove", self.time, self._recorded or self, "", {})
            _post(subscription, record)

    def view_for(self, context: Context) -> Object:
        """In the subscriber's drain: a proxy holding the latest state, fed from now on."""
        with self._lock:
            self.settle()
            proxy = self._proxy_class(self, context, self.name, self.bus, self.state, self.time)
            self.proxies.append(proxy)
        return proxy

    # -- the proxies' endpoint --------------------------------------------------------------------

    def send_call(
        self,
        proxy: RemoteProxy,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call_id: int,
    ) -> None:
        self._send_call(self, proxy, member, args, call_id)

    def subscribe_event(self, proxy: RemoteProxy, event: EventMeta) -> None:
        """Every event of an object this process holds travels: nothing to ask for."""

    def unsubscribe_event(self, proxy: RemoteProxy, event: EventMeta) -> None:
        """See :meth:`subscribe_event`."""

    def release(self, proxy: RemoteProxy) -> None:
        with self._lock:
            if proxy in self.proxies:
                self.proxies.remove(proxy)

    # -- arrivals (transport threads) ------------------------------------------------------------

    def snapshot(self, state: dict[str, Any], time: int) -> None:
        """A fresh full state (another interest matched, or a re-announcement): it supersedes
        every change that came before it on the owner's stream."""
        with self._lock:
            self.unsettled.clear()
            self.state.update(state)
            self.time = time
            names = _dynamic_names(self.meta)
            self._tell({k: v for k, v in state.items() if k in names}, time)

    def logged_change(self, change: bytes | dict[str, Any], time: int) -> None:
        """A commit's changes, encoded or decoded, when a change log (a recorder) wants every
        commit decoded (under the lock)."""
        values, errors = class_codec(self.meta).latest([change])
        refused(self.address, errors)
        names = _dynamic_names(self.meta)
        dynamic = {k: v for k, v in values.items() if k in names}
        self.settle()
        self.state.update(dynamic)
        self._tell(dynamic, time)

    def _tell(self, dynamic: dict[str, Any], time: int) -> None:
        """The proxies and the change logs: a commit's dynamic properties (under the lock)."""
        for proxy in self.proxies:
            proxy._receive_state_(dynamic, time)
        if self.logs and self._recorded is not None:
            record: LogRecord = ("set", time, self._recorded, "", self._recorded.changes(dynamic))
        else:
            record = ("set", time, self, "", dynamic)
        for subscription in self.logs:
            _post(subscription, record)

    def settle(self) -> None:
        """Take the changes held encoded into the state (under the lock)."""
        if self.unsettled:
            unsettled, self.unsettled = self.unsettled, []
            values, _ = class_codec(self.meta).latest(reversed(unsettled))  # proxies warn
            names = _dynamic_names(self.meta)
            self.state.update((k, v) for k, v in values.items() if k in names)

    def emitted(self, name: str, args: tuple[Any, ...], time: int) -> None:
        with self._lock:
            proxies = list(self.proxies)
            logs = list(self.logs)
        for proxy in proxies:
            proxy._receive_event_(name, args, time)
        if logs and self._recorded is not None:
            local = self._recorded.event(name, args)
            for subscription in logs if local is not None else ():
                _post(subscription, ("event", time, self._recorded, name, local))
        elif logs:
            event = self.meta.event(name)
            assert event is not None
            named = {a.stl_name: v for a, v in zip(event.args, args, strict=True)}
            for subscription in logs:
                _post(subscription, ("event", time, self, name, named))

    def gone(self, error: ObjectGone) -> None:
        """Removed by its owner, or its process lost: pending calls fail with ``error``."""
        with self._lock:
            proxies = list(self.proxies)
        for proxy in proxies:
            proxy._receive_removed_(error)


def deliver_changes(
    lock: threading.Lock,
    handles: Iterable[RemoteHandle | None],
    changes: Iterable[bytes],
    time: int,
) -> None:
    """One remote commit: each object's changes, encoded (``ClassCodec.encode_properties``), to
    its handle (None: an object this process does not hold), under the lock the handles of
    their owner share. Held encoded until a proxy's drain, unless a change log wants every
    commit decoded. The hot path of remote traffic, so the handles' part is inlined here."""
    with lock:
        for handle, change in zip(handles, changes, strict=True):
            if handle is None:
                continue
            handle.time = time
            if handle.logs:
                handle.logged_change(change, time)
                continue
            unsettled = handle.unsettled
            unsettled.append(change)
            if len(unsettled) >= _SETTLE_AT:
                handle.settle()
            entry = (change, time)
            for proxy in handle.proxies:  # ``proxy._receive_state_``, inlined
                arrived = proxy._arrived_
                queue = arrived[3]
                if queue is None:
                    queue = arrived[3] = deque()
                if arrived[1]:  # decoded changes, older than this one
                    queue.append((arrived[1], arrived[0]))
                    arrived[1] = {}
                queue.append(entry)
                proxy._ctx_.touch(proxy)


def deliver_column(
    lock: threading.Lock,
    handles: Sequence[RemoteHandle | None],
    member: int,
    width: int,
    data: bytes,
    time: int,
) -> None:
    """One remote commit that changed one fixed-size property of many objects
    (``wire.Column``): the values decoded at once, by the codec of the objects' class, into
    each handle's state and each proxy's latest values, under the lock the handles of their
    owner share. The hot path of remote traffic, so the handles' and proxies' parts are inlined
    here. An unknown property or a wrong size is :class:`Invalid` (the message is dropped)."""
    first = next((handle for handle in handles if handle is not None), None)
    if first is None:
        return
    meta = first.meta  # the class of the objects (of them all, but in a rare commit)
    name, values, errors = class_codec(meta).decode_column(member, width, data)
    others: dict[ClassMeta, tuple[str, Sequence[Any], list[Invalid]]] = {}
    with lock:
        for index, handle in enumerate(handles):
            if handle is None:
                continue
            if handle.meta is meta:
                value = values[index]
            else:  # another class with the same property: decoded with its own codec
                own = handle.meta
                if own not in others:
                    others[own] = class_codec(own).decode_column(member, width, data)
                value = others[own][1][index]
            if value is SKIPPED:
                refused(handle.address, errors if handle.meta is meta else others[own][2])
                continue
            handle.time = time
            if handle.logs:
                handle.logged_change({name: value}, time)
                continue
            if handle.unsettled:  # older than this value
                handle.settle()
            handle.state[name] = value
            for proxy in handle.proxies:  # ``proxy._receive_state_``, inlined
                arrived = proxy._arrived_
                arrived[0] = time
                arrived[1][name] = value
                context = proxy._ctx_
                if proxy not in context.queued:  # ``context.touch(proxy)``, inlined
                    context.queued.add(proxy)
                    context.stale.append(proxy)


def _post(subscription: Subscription, record: LogRecord) -> None:
    if not subscription.closed and subscription.log is not None:
        subscription.discovery.context.post(subscription.log, [record])


@functools.cache
def _dynamic_names(meta: ClassMeta) -> frozenset[str]:
    return frozenset(p.stl_name for p in meta.all_properties if p.dynamic)
