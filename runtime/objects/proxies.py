"""Proxies: another component's view of an object (codegen.md §3.4, runtime.md §3.11).

A proxy never changes during its subscriber's cycle: its values change only in the subscriber's
drain (:meth:`_refresh_`), where change callbacks run for the properties whose value differs from
what the proxy held.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from time import monotonic
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from sengen.runtime.objects.calls import Call, completed
from sengen.runtime.objects.codec import class_codec
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.events import Connection, Events
from sengen.runtime.objects.meta import EventMeta, MethodMeta, PropertyMeta
from sengen.runtime.objects.objects import NativeObject, Object, Prop, gone, route_call
from sengen.runtime.objects.values import Invalid

_warned_at = [0.0]  # the last warning about a refused remote change (at most one a second)


def refused(address: str, errors: list[Invalid]) -> None:
    """Changes of a remote object that could not be decoded are left out, with a warning."""
    now = monotonic()
    if errors and now - _warned_at[0] >= 1.0:
        _warned_at[0] = now
        import logging  # loaded by the first warning: a process may never need it

        logging.getLogger("sengen.transport").warning(
            "dropped %d malformed change(s) of '%s': %s", len(errors), address, errors[0]
        )


class _Subscribers:
    """Change callbacks held by a proxy, fired directly in its subscriber's drain."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[str, list[Connection]] = {}

    def add(self, key: str, subscription: Connection) -> Connection:
        self.table.setdefault(key, []).append(subscription)
        return subscription

    def remove(self, subscription: Connection) -> None:
        for subscriptions in self.table.values():
            if subscription in subscriptions:
                subscriptions.remove(subscription)
                return

    def fire(self, key: str, value: Any) -> None:
        for subscription in tuple(self.table.get(key, ())):
            if not subscription.closed:
                subscription.callback(value)


def _apply(
    proxy: Object, props: tuple[Prop, ...], fresh: tuple[Any, ...], subs: _Subscribers | None
) -> None:
    """Take a whole commit first, then run the callbacks: a callback that reads another
    property sees the same commit (runtime.md §3.6)."""
    if subs is None:  # no callback: nothing to compare
        for prop, value in zip(props, fresh, strict=True):
            prop.set(proxy, value)
        return
    changed = []
    for prop, value in zip(props, fresh, strict=True):
        if not prop.eq(value, prop.get(proxy)):
            prop.set(proxy, value)
            changed.append((prop.key, value))
    for key, value in changed:
        subs.fire(key, value)


class LocalProxy(Object):
    """A view, in another component of the same process, of a native object."""

    _ROLE_ = "local"

    __slots__ = (
        "__weakref__",
        "_changes",
        "_ctx_",
        "_last_commit",
        "_owner",
        "_seq",
        "_state",
        "events",
    )
    _changes: _Subscribers
    _ctx_: Context
    _last_commit: int
    _owner: NativeObject
    _seq: int
    _state: tuple[Any, ...]  # the owner's state as last copied

    def __init__(self, owner: NativeObject, context: Context) -> None:
        setter = object.__setattr__
        setter(self, "_owner", owner)
        setter(self, "_ctx_", context)
        setter(self, "_changes", _Subscribers())
        # Watched before the first read: a commit after it touches this proxy, so an idle
        # owner costs this proxy's drains nothing.
        owner_context = owner._ctx_
        if owner_context is not None:
            owner_context.watch(owner, context, self)
        seq, time, state = owner._snapshot_()
        setter(self, "_seq", seq)
        setter(self, "_last_commit", time)
        setter(self, "_state", state)
        for key, prop in self._PROPS.items():
            prop.set(self, getattr(owner, key))
        for prop, value in zip(self._DYNAMIC, state, strict=True):
            prop.set(self, value)
        setter(self, "events", self._EVENTS(self, self.META.all_events))
        context.add_proxy(self)

    @property
    def name(self) -> str:
        return self._owner.name

    @property
    def bus(self) -> str | None:
        return self._owner.bus

    @property
    def local_name(self) -> str:
        return f"{self._ctx_.name}.{self._address_}"

    @property
    def last_commit_time(self) -> int:
        return self._last_commit

    @property
    def owner(self) -> NativeObject:
        return self._owner

    def _refresh_(self) -> None:
        """The hot path of every observed change, so the seqlock read of
        :meth:`NativeObject._snapshot_` and :func:`_apply` are inlined here."""
        owner = self._owner
        version = owner._version_
        seq = version[0]
        if seq == self._seq:
            return
        state = type(owner)._STATE_(owner)
        time = version[1]
        if seq & 1 or version[0] != seq:  # a commit is writing: take the careful path
            seq, time, state = owner._snapshot_()
        setter = object.__setattr__
        setter(self, "_seq", seq)
        setter(self, "_last_commit", time)
        old = self._state
        setter(self, "_state", state)
        # A property the owner did not change holds the very same value object: only the
        # others need the STL comparison (most commits change few of many properties).
        dynamic = self._DYNAMIC
        changed = []
        for i, value, before in zip(range(len(state)), state, old, strict=True):
            if value is not before:
                prop = dynamic[i]
                if not prop.eq(value, before):
                    prop.set(self, value)
                    changed.append((prop.key, value))
        if changed:  # the whole commit is in place before any callback runs (§3.6)
            table = self._changes.table
            for key, value in changed:
                for connection in tuple(table.get(key, ())):
                    if not connection.closed:
                        connection.callback(value)

    def _close_(self) -> None:
        """Stop refreshing (the subscriber dropped its last subscription, or stopped)."""
        self._ctx_.drop_proxy(self)
        owner_context = self._owner._ctx_
        if owner_context is not None:
            owner_context.unwatch(self._owner, self)

    def _on_changed_(self, key: str, callback: Callable[[Any], None]) -> Connection:
        return self._changes.add(key, Connection(self._ctx_, callback, self._changes.remove))

    def _connect_event_(
        self, meta: EventMeta, callback: Callable[..., None], with_info: bool
    ) -> Connection:
        return self._owner._connect_event_from_(self._ctx_, meta, callback, with_info)

    def _send_call_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        route_call(self._owner, member, args, call, caller)


@functools.cache
def _initial(cls: type[Object]) -> tuple[tuple[Callable[[Any, Any], None], str], ...]:
    """How a proxy class's constructor stores each property's first value: its slot's setter
    and its STL name (the key of the publication's state)."""
    return tuple((prop.set, prop.meta.stl_name) for prop in cls._PROPS.values())


def _dynamic_by_name(cls: type[Object]) -> dict[str, Prop]:
    """A proxy class's dynamic properties by STL name (remote updates carry names)."""
    found = _BY_NAME.get(cls)
    if found is None:
        found = _BY_NAME[cls] = {p.meta.stl_name: p for p in cls._DYNAMIC}
    return found


_BY_NAME: dict[type[Object], dict[str, Prop]] = {}  # ``_dynamic_by_name``, made once a class


class RemoteEndpoint(Protocol):
    """What a remote proxy needs from the transport. Values are Python values; the transport
    encodes them with the class codec. Replies come back through the proxy's ``_receive_*_``."""

    def send_call(
        self,
        proxy: RemoteProxy,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call_id: int,
    ) -> None: ...

    def subscribe_event(self, proxy: RemoteProxy, event: EventMeta) -> None: ...

    def unsubscribe_event(self, proxy: RemoteProxy, event: EventMeta) -> None: ...

    def release(self, proxy: RemoteProxy) -> None:
        """The proxy's component no longer holds it: stop feeding it."""


class RemoteProxy(Object):
    """A view of an object owned by another process. Updates, results and events arrive on
    transport threads and are only queued, the proxy touched (``Context.touch``); the
    subscriber's drain applies them, visiting only the proxies touched since the last one."""

    _ROLE_ = "remote"

    __slots__ = (
        "__weakref__",
        "_arrived_",
        "_bus",
        "_changes",
        "_ctx_",
        "_endpoint_",
        "_events_",
        "_name",
        "_pending",
        "_subscribed",
    )
    # What arrived and no drain has shown yet, and the commit time the proxy shows, in one list
    # (the one object a drain reads besides the proxy; items are cheaper to set than slots):
    # [0] the time and [1] the values by STL name of the decoded changes, merged as they arrive
    # (only the latest value of a property is shown, §3.7) and newer than everything in [3];
    # [2] the commit time shown; [3] the encoded changes with their times, oldest first, and
    # [4] the events, each a deque or None until the first.
    _arrived_: list[Any]
    _bus: str
    _changes: _Subscribers | None  # None until a change callback
    _ctx_: Context
    _endpoint_: RemoteEndpoint
    _events_: Events  # made at the first use of ``events``: most proxies never need one
    _name: str
    # The calls sent and not answered yet, under ``_CALLS``; None once the object is gone.
    _pending: dict[int, tuple[Call[Any], Context | None]] | None
    _subscribed: dict[str, list[Connection]] | None  # None until an event subscription
    _CALL_IDS: ClassVar[itertools.count[int]] = itertools.count(1)
    # Every remote proxy's ``_pending``: held only to add, take or fail a call, never for long.
    _CALLS: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        endpoint: RemoteEndpoint,
        context: Context,
        name: str,
        bus: str,
        state: Mapping[str, Any],
        commit_time: int,
    ) -> None:
        """``state`` holds every property by STL name, static ones included (the publication)."""
        # One proxy per discovered object and subscribing component: every step here counts.
        setter = object.__setattr__
        setter(self, "_endpoint_", endpoint)
        setter(self, "_ctx_", context)
        setter(self, "_name", name)
        setter(self, "_bus", bus)
        setter(self, "_arrived_", [commit_time, {}, commit_time, None, None])
        setter(self, "_changes", None)
        setter(self, "_pending", {})
        setter(self, "_subscribed", None)
        for set_value, stl_name in _initial(type(self)):
            set_value(self, state[stl_name])
        context.add_proxy(self)

    if not TYPE_CHECKING:  # typed by each generated interface, as its own Events class

        @property
        def events(self) -> Events:
            try:
                return self._events_
            except AttributeError:
                events = self._EVENTS(self, self.META.all_events)
                object.__setattr__(self, "_events_", events)
                return events

    @property
    def name(self) -> str:
        return self._name

    @property
    def bus(self) -> str | None:
        return self._bus

    @property
    def local_name(self) -> str:
        return f"{self._ctx_.name}.{self._address_}"

    @property
    def last_commit_time(self) -> int:
        time: int = self._arrived_[2]
        return time

    # -- arrivals from the transport (under the arrivals lock the drains take) -----------------

    def _receive_state_(self, changes: bytes | Mapping[str, Any], commit_time: int) -> None:
        """One remote commit: the changed properties, encoded or by STL name, applied
        together. The transport inlines this for the changes of many objects (``handles``)."""
        # Queued before the touch: a drain unqueues a proxy before reading it, so no arrival
        # is left unread until the next one.
        arrived = self._arrived_
        if isinstance(changes, bytes):
            queue = arrived[3]
            if queue is None:
                queue = arrived[3] = deque()
            if arrived[1]:  # older than this one: queued before it
                queue.append((arrived[1], arrived[0]))
                arrived[1] = {}
            queue.append((changes, commit_time))
        else:
            arrived[0] = commit_time
            arrived[1].update(changes)
        self._ctx_.touch(self)

    def _unread_(self) -> bool:
        """Whether something arrived that no drain has shown yet."""
        arrived = self._arrived_
        return bool(arrived[1] or arrived[3])

    def _receive_result_(self, call_id: int, value: Any, error: BaseException | None) -> None:
        with self._CALLS:
            pending = self._pending
            entry = None if pending is None else pending.pop(call_id, None)
        if entry is not None:
            call, caller = entry
            completed(caller, call, value, error)

    def _receive_event_(self, stl_name: str, args: tuple[Any, ...], creation_time: int) -> None:
        self._queue_event_(stl_name, args, creation_time)

    def _queue_event_(self, stl_name: str, args: tuple[Any, ...], creation_time: int) -> None:
        arrived = self._arrived_
        events = arrived[4]
        if events is None:
            events = arrived[4] = deque()
        events.append((stl_name, args, creation_time))
        self._ctx_.touch(self)

    def _receive_removed_(self, error: BaseException | None = None) -> None:
        """The owner withdrew the object or its process was lost: pending calls fail with
        ``error`` (``ObjectGone`` for the object by default)."""
        with self._CALLS:
            pending = self._pending or {}
            object.__setattr__(self, "_pending", None)
        for call, caller in pending.values():
            completed(caller, call, None, error or gone(self._address_))

    def _hold_call_(self, call_id: int, call: Call[Any], caller: Context | None) -> bool:
        """A call about to be sent: kept until its result comes (``_receive_result_``). False,
        the call failed with ``ObjectGone``, when the object is gone already."""
        with self._CALLS:
            pending = self._pending
            if pending is not None:
                pending[call_id] = (call, caller)
                return True
        completed(caller, call, None, gone(self._address_))
        return False

    # -- the subscriber's drain -------------------------------------------------------------------

    def _refresh_(self) -> None:
        arrived = self._arrived_
        queue = arrived[3]
        if queue:
            if arrived[1]:  # the newest: after the encoded ones
                queue.append((arrived[1], arrived[0]))
                arrived[1] = {}
            # Newest first: only the latest value of each property is decoded (§3.7).
            changes = [queue.popleft() for _ in range(len(queue))]
            arrived[2] = changes[-1][1]
            changes.reverse()
            self._take_(self._latest_(c for c, _ in changes))
        elif arrived[1]:  # the common case: decoded as it arrived (columns of one property)
            values = arrived[1]
            arrived[1] = {}
            arrived[2] = arrived[0]
            if self._changes is not None:
                self._take_(values)
            else:  # no callback wants to know what differs: nothing to compare
                by_name = _BY_NAME.get(type(self)) or _dynamic_by_name(type(self))
                for name, value in values.items():
                    prop = by_name.get(name)
                    if prop is not None:
                        prop.set(self, value)
        events = arrived[4]
        if events:
            subscribed = self._subscribed or {}
            for _ in range(len(events)):
                stl_name, args, created = events.popleft()
                for subscription in tuple(subscribed.get(stl_name, ())):
                    subscription.run(args, created)

    def _latest_(self, changes: Iterable[bytes | Mapping[str, Any]]) -> dict[str, Any]:
        """The latest value of each property in ``changes`` (newest first); those that do not
        decode are left out with a warning. Type evolution's adapted proxy converts them."""
        values, errors = class_codec(self.META).latest(changes)
        if errors:
            refused(self._address_, errors)
        return values

    def _take_(self, values: Mapping[str, Any]) -> None:
        """A commit's latest values by STL name, applied together."""
        props = tuple(p for n, p in _dynamic_by_name(type(self)).items() if n in values)
        _apply(self, props, tuple(values[p.meta.stl_name] for p in props), self._changes)

    def _close_(self) -> None:
        """Stop refreshing (the subscriber dropped its last subscription, or stopped)."""
        self._ctx_.drop_proxy(self)
        self._endpoint_.release(self)

    def _on_changed_(self, key: str, callback: Callable[[Any], None]) -> Connection:
        changes = self._changes
        if changes is None:
            changes = _Subscribers()
            object.__setattr__(self, "_changes", changes)
        return changes.add(key, Connection(self._ctx_, callback, changes.remove))

    def _connect_event_(
        self, meta: EventMeta, callback: Callable[..., None], with_info: bool
    ) -> Connection:
        subscribed = self._subscribed
        if subscribed is None:
            subscribed = {}
            object.__setattr__(self, "_subscribed", subscribed)
        subscriptions = subscribed.setdefault(meta.stl_name, [])
        if not subscriptions:
            self._endpoint_.subscribe_event(self, meta)

        def close(subscription: Connection) -> None:
            subscriptions.remove(subscription)
            if not subscriptions:
                self._endpoint_.unsubscribe_event(self, meta)

        subscription = Connection(self._ctx_, callback, close, with_info)
        subscriptions.append(subscription)
        return subscription

    def _send_call_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        self._send_at_commit_(self, member, args, call, caller)

    def _send_at_commit_(
        self,
        receiver: Any,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        """Send the call at the caller's commit (at once from outside any component), kept
        until ``receiver`` (``_receive_result_``) gets its result."""
        call_id = next(self._CALL_IDS)

        def send() -> None:
            if self._hold_call_(call_id, call, caller):
                self._endpoint_.send_call(receiver, member, args, call_id)

        if caller is None:
            send()
        else:
            caller.send_at_commit(send)
