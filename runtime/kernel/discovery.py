"""Subscriptions and their producer-side evaluation (runtime.md §4, §3.3, §3.11).

A subscription's query becomes an :class:`Interest` on its bus, shared by every subscription
with the same text. Owners evaluate interests on their own objects, on their own thread and with
committed values: when an object is published or an interest arrives, and again at each commit
that changed a dynamic property the condition references (:class:`Publisher`). What starts or
stops matching travels to the subscribing component as a delivery, applied in its drain (its
own objects at its own commit), where the subscriber's proxies are created and dropped
(:class:`Discovery`). No lock is ever held while user code runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from sengen.runtime.kernel.query import Evaluator, Query, QueryError, parse_query
from sengen.runtime.objects.meta import ClassMeta
from sengen.runtime.objects.objects import NativeObject, Object
from sengen.runtime.objects.registry import registry

if TYPE_CHECKING:
    from sengen.runtime.objects.context import Context

_log = logging.getLogger("sengen.kernel")

Batch = Callable[[list[Object]], None]


def build_query(cls: object, bus: str, where: str | None = None) -> Query:
    """The query of ``select_all_from`` / ``select_from``: ``cls`` is a generated class, a
    qualified name or ``"*"``."""
    meta = getattr(cls, "META", None)
    if isinstance(meta, ClassMeta):
        name = meta.qualified_name
    elif isinstance(cls, str):
        name = cls
    else:
        raise TypeError(f"expected a generated class, a qualified class name or '*', got {cls!r}")
    text = f"SELECT {name} FROM {bus}"
    return parse_query(text if where is None else f"{text} WHERE {where}")


class RemoteOwner(Protocol):
    """An object of another process as the transport holds it (``remote.RemoteHandle``)."""

    name: str
    bus: str

    @property
    def META(self) -> ClassMeta: ...

    def view_for(self, context: Context) -> Object:
        """A new proxy of the object for the component of ``context``."""
        ...


Owner = NativeObject | RemoteOwner
# A change-log record for a recorder: (kind, producer time, object, class or event name,
# values by STL name): "add" (full state), "set" (changed properties), "event" (arguments),
# "remove". Remote objects' records come from the transport.
LogRecord = tuple[str, int, Owner, str, dict[str, Any]]
# A change-log subscription receives the records of one owner's commit (or of one piece of its
# kernel work) together, in order: a consumer that forwards them (the transport) sends one
# message for the whole commit.
Log = Callable[[list[LogRecord]], None]


class ChangeSink(Protocol):
    """Where a change-log subscription's property changes and events go instead of records:
    the transport's outbox of one remote process, which writes them straight into the message
    of the commit. Called on the owner's thread, at its commit, before the commit's other
    records (additions, removals) reach the subscription's log."""

    def changes(
        self, owner: Context, time: int, changed: list[tuple[NativeObject, Sequence[Any]]]
    ) -> bool:
        """The properties each object changed in one commit of ``owner`` (every object of the
        commit: the sink keeps those it holds). False: it holds none of ``owner``'s objects,
        so the owner stops telling it until it holds one again."""
        ...

    def events(
        self, owner: Context, time: int, emitted: list[tuple[NativeObject, Any, tuple[Any, ...]]]
    ) -> None:
        """The events of one commit of ``owner``, in emission order."""
        ...

    def flush(self) -> None:
        """The end of the owner's commit: what the commit wrote may leave."""
        ...


class Interest:
    """One query on one bus; the subscriptions made with it share its evaluation."""

    __slots__ = ("bus", "conditional", "query", "subscriptions", "text")

    def __init__(self, query: Query) -> None:
        assert query.bus is not None
        self.query = query
        self.bus = query.bus
        self.text = str(query)
        self.conditional = bool(query.properties)  # reads properties: changes may matter
        self.subscriptions: list[Subscription] = []  # guarded by the bus space's lock

    def evaluator(self, obj: NativeObject) -> Evaluator:
        return self.query.evaluator(obj.META)


class Subscription:
    """What ``api.select*`` return: the current matches in arrival order, with added/removed
    callbacks run in the subscriber's drain (or commit, for its own objects)."""

    def __init__(
        self,
        discovery: Discovery,
        interest: Interest,
        on_added: Batch | None,
        on_removed: Batch | None,
        log: Log | None = None,
        sink: ChangeSink | None = None,
    ) -> None:
        self._discovery = discovery
        self.interest = interest
        self._on_added = on_added
        self._on_removed = on_removed
        self.log = log  # change-log mode (the recorder, the transport)
        self.sink = sink  # with ``log``: changes and events go to it, not in records
        self._objects: list[Object] = []
        self._by_owner: dict[Owner, Object] = {}
        self.closed = False
        self._waiters: list[tuple[int, Callable[[], None]]] = []

    @property
    def query(self) -> Query:
        return self.interest.query

    @property
    def objects(self) -> list[Object]:
        """The current matches, in arrival order (a copy)."""
        return list(self._objects)

    def __iter__(self) -> Iterator[Object]:
        return iter(list(self._objects))

    def __len__(self) -> int:
        return len(self._objects)

    def __repr__(self) -> str:
        return f"<Subscription {self.interest.text!r}: {len(self._objects)} objects>"

    def on_added(self, callback: Batch | None) -> None:
        """Replace the added handler; the objects already matched are reported to it at the
        next drain."""
        self._on_added = callback
        if callback is not None:
            self._discovery.context.post(self._report, callback)

    def on_removed(self, callback: Batch | None) -> None:
        self._on_removed = callback

    def close(self) -> None:
        """Stop the subscription and release its proxies; no removal callbacks run."""
        if self.closed:
            return
        self.closed = True
        self._discovery.closed(self)
        for owner in list(self._by_owner):
            self._discovery.release(owner)
        self._objects.clear()
        self._by_owner.clear()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- asyncio conveniences (runtime.md §10.2) ---------------------------------------------------

    async def wait_for(self, count: int = 1, timeout: float | None = None) -> list[Object]:
        """Wait until at least ``count`` objects match; their list."""
        loop = asyncio.get_running_loop()
        ready = asyncio.Event()

        def wake() -> None:
            loop.call_soon_threadsafe(ready.set)

        if len(self._objects) < count:
            self._waiters.append((count, wake))
            try:
                await asyncio.wait_for(ready.wait(), timeout)
            finally:
                self._waiters = [w for w in self._waiters if w[1] is not wake]
        return self.objects

    async def first(self, timeout: float | None = None) -> Object:
        return (await self.wait_for(1, timeout))[0]

    # -- the subscriber's side (its own thread) --------------------------------------------------

    def _report(self, callback: Batch) -> None:
        if not self.closed and self._objects and callback is self._on_added:
            callback(list(self._objects))

    def _apply(self, added: list[Object], removed: list[Object]) -> None:
        if removed and self._on_removed is not None:
            self._on_removed(removed)
        if added and self._on_added is not None:
            self._on_added(added)
        if self._waiters:
            for count, wake in list(self._waiters):
                if len(self._objects) >= count:
                    wake()


class Delivery(NamedTuple):
    """An object starting (``adding``) or stopping to match a subscription."""

    adding: bool
    subscription: Subscription
    obj: Owner
    order: tuple[int, int]  # (owner runner index, registration sequence): the canonical order


class Discovery:
    """The subscriber's side of one component: its subscriptions, the deliveries waiting for its
    drain, and one proxy per (component, object) shared by its subscriptions."""

    forwarded = False  # True for the subscriptions the transport holds for another process

    def __init__(self, context: Context, space: Interests) -> None:
        self.context = context
        self.space = space
        self.subscriptions: list[Subscription] = []
        self._inbox: deque[Delivery] = deque()  # other components append, any thread
        self._own: list[Delivery] = []  # deliveries of this component's own objects
        self._held: dict[Owner, tuple[Object, int]] = {}

    def subscribe(
        self,
        query: Query | str,
        on_added: Batch | None = None,
        on_removed: Batch | None = None,
        log: Log | None = None,
        sink: ChangeSink | None = None,
    ) -> Subscription:
        parsed = parse_query(query) if isinstance(query, str) else query
        if parsed.bus is None:
            raise QueryError("a subscription needs a bus")
        subscription = self.space.subscribe(self, parsed, on_added, on_removed, log, sink)
        self.subscriptions.append(subscription)
        return subscription

    def closed(self, subscription: Subscription) -> None:
        if subscription in self.subscriptions:
            self.subscriptions.remove(subscription)
        self.space.unsubscribe(subscription)

    def close_all(self) -> None:
        for subscription in list(self.subscriptions):
            subscription.close()

    def deliver(self, delivery: Delivery, own: bool) -> None:
        (self._own if own else self._inbox).append(delivery)

    def pending(self) -> bool:
        return bool(self._inbox)

    def apply_arrivals(self) -> None:
        """Drain, step 4: other components' additions and removals, in canonical order."""
        inbox = self._inbox
        if inbox:
            batch = [inbox.popleft() for _ in range(len(inbox))]
            self._apply(batch)

    def apply_own(self) -> None:
        """Commit: this component's own objects."""
        if self._own:
            batch, self._own = self._own, []
            self._apply(batch)

    def _apply(self, batch: list[Delivery]) -> None:
        batch.sort(key=lambda d: d.order)  # stable: one owner's deliveries keep their order
        touched: dict[Subscription, tuple[list[Object], list[Object]]] = {}
        for delivery in batch:
            subscription = delivery.subscription
            if subscription.closed:
                continue
            owner = delivery.obj
            held = subscription._by_owner.get(owner)
            added, removed = touched.setdefault(subscription, ([], []))
            if delivery.adding and held is None:
                view = self._acquire(owner)
                subscription._by_owner[owner] = view
                subscription._objects.append(view)
                added.append(view)
            elif not delivery.adding and held is not None:
                del subscription._by_owner[owner]
                subscription._objects.remove(held)
                if held in added:
                    added.remove(held)
                else:
                    removed.append(held)
                self.release(owner)
        for subscription in self.subscriptions:  # subscription order
            if subscription in touched:
                subscription._apply(*touched[subscription])

    def _acquire(self, owner: Owner) -> Object:
        held = self._held.get(owner)
        if held is not None:
            self._held[owner] = (held[0], held[1] + 1)
            return held[0]
        view: Object
        if not isinstance(owner, NativeObject):
            view = owner.view_for(self.context)
        elif owner._ctx is self.context:
            view = owner
        else:
            local, _ = registry.proxies(owner.META)
            view = local(owner, self.context)
        self._held[owner] = (view, 1)
        return view

    def release(self, owner: Owner) -> None:
        view, count = self._held[owner]
        if count > 1:
            self._held[owner] = (view, count - 1)
            return
        del self._held[owner]
        close = getattr(view, "_close", None)
        if close is not None:
            close()

    @property
    def proxies(self) -> list[Object]:
        return [view for view, _ in self._held.values()]


class Publisher:
    """The owner's side of one component: which of its objects match which interest, and which
    subscriptions were told. Runs only on the owner's thread."""

    def __init__(self, context: Context, space: Interests, index: int) -> None:
        self.context = context
        self.space = space
        self.index = index
        self._sequence = 0
        self._order: dict[NativeObject, int] = {}
        self._fresh: list[NativeObject] = []  # added this cycle, published at commit
        self._gone: list[NativeObject] = []  # removed this cycle, published at commit
        self.published: list[NativeObject] = []
        self._matches: dict[Interest, set[NativeObject]] = {}
        self._sent: dict[Subscription, set[NativeObject]] = {}
        self._logs: dict[NativeObject, list[Subscription]] = {}  # change logs without a sink
        self._logged: dict[Subscription, list[LogRecord]] = {}  # records not yet posted
        self._sinks: dict[ChangeSink, None] = {}  # the sinks holding some of its objects

    # -- the owner's objects ---------------------------------------------------------------------

    def added(self, obj: NativeObject) -> None:
        self._sequence += 1
        self._order[obj] = self._sequence
        self._fresh.append(obj)
        self.context.track_changes = True

    def removed(self, obj: NativeObject) -> None:
        if obj in self._fresh:  # never published: nobody was told
            self._fresh.remove(obj)
            self._order.pop(obj, None)
        else:
            self._gone.append(obj)

    # -- interests -------------------------------------------------------------------------------

    def interest_arrived(self, interest: Interest) -> None:
        """Kernel work in the owner's drain: evaluate a new interest (or tell a new subscription
        of an existing one) on the published objects."""
        if interest not in self._matches:
            self._evaluate(interest, [o for o in self.published if o.bus == interest.bus])
        self._sync(interest)
        self._post_logs()

    def _evaluate(self, interest: Interest, objects: list[NativeObject]) -> None:
        matches = self._matches.setdefault(interest, set())
        for obj in objects:
            if interest.evaluator(obj).matches(obj):
                matches.add(obj)
            else:
                matches.discard(obj)

    def _sync(self, interest: Interest) -> None:
        """Tell every subscription of ``interest`` what started or stopped matching."""
        subscriptions = self.space.subscriptions_of(interest)
        if not subscriptions:
            self._matches.pop(interest, None)
            return
        matches = self._matches.get(interest, set())
        for subscription in subscriptions:
            sent = self._sent.setdefault(subscription, set())
            for obj in sorted(matches - sent, key=self._order.__getitem__):
                sent.add(obj)
                self._tell(True, subscription, obj)
            for obj in sorted(sent - matches, key=self._order.__getitem__):
                sent.discard(obj)
                self._tell(False, subscription, obj)

    def _tell(self, adding: bool, subscription: Subscription, obj: NativeObject) -> None:
        discovery = subscription._discovery
        own = discovery.context is self.context
        discovery.deliver(Delivery(adding, subscription, obj, (self.index, self._order[obj])), own)
        if subscription.log is not None:
            self._change_log(adding, subscription, obj)

    def _change_log(self, adding: bool, subscription: Subscription, obj: NativeObject) -> None:
        sink = subscription.sink
        if adding:
            if sink is None:
                self._logs.setdefault(obj, []).append(subscription)
            else:
                self._sinks[sink] = None
            state = {p.meta.stl_name: p.get(obj) for p in obj._PROPS.values()}
            record: LogRecord = ("add", self.context.time, obj, obj.META.qualified_name, state)
        else:
            logs = self._logs.get(obj)
            if logs is not None and subscription in logs:
                logs.remove(subscription)
                if not logs:
                    del self._logs[obj]
            record = ("remove", self.context.time, obj, "", {})
        self._logged.setdefault(subscription, []).append(record)

    def _post_logs(self) -> None:
        """The end of a commit or of kernel work: each change-log subscription gets its
        records, in one piece."""
        if self._logged:
            logged, self._logged = self._logged, {}
            for subscription, records in logged.items():
                assert subscription.log is not None
                subscription._discovery.context.post(subscription.log, records)

    # -- the owner's commit ----------------------------------------------------------------------

    def commit(self) -> None:
        """After the flip: change-log records, re-evaluation of the interests a change affects,
        publication of this cycle's additions, then of its removals."""
        context = self.context
        changed = context.changed
        if changed:
            context.changed = []
            if self._sinks:
                idle = [s for s in self._sinks if not s.changes(context, context.time, changed)]
                for sink in idle:
                    del self._sinks[sink]
            self._changed(changed)
        if context.emitted:
            emitted, context.emitted = context.emitted, []
            if self._logs:
                self._log_events(emitted)
            for sink in self._sinks:
                sink.events(context, context.time, emitted)
        if self._fresh:
            fresh, self._fresh = self._fresh, []
            self.published.extend(fresh)
            for interest in self.space.interests_on({o.bus for o in fresh}):
                self._evaluate(interest, [o for o in fresh if o.bus == interest.bus])
                self._sync(interest)
        if self._gone:
            gone, self._gone = self._gone, []
            self._withdraw(gone)
        self._post_logs()
        for sink in self._sinks:
            sink.flush()

    def _changed(self, changed: list[tuple[NativeObject, Sequence[Any]]]) -> None:
        logs = self._logs
        conditional = [i for i in self._matches if i.conditional]
        if not logs and not conditional:
            return  # nobody records and no condition reads a property: nothing to redo
        time = self.context.time
        logged = self._logged
        affected: dict[Interest, list[NativeObject]] = {}
        for obj, props in changed:
            subscriptions = logs.get(obj)
            if subscriptions:
                values = {p.meta.stl_name: p.get(obj) for p in props}
                record: LogRecord = ("set", time, obj, "", values)
                for subscription in subscriptions:
                    found = logged.get(subscription)
                    if found is None:
                        logged[subscription] = [record]
                    else:
                        found.append(record)
            if conditional:
                names = {p.meta.stl_name for p in props}
                for interest in conditional:
                    if (
                        interest.bus == obj.bus
                        and names & interest.evaluator(obj).dynamic_properties
                    ):
                        affected.setdefault(interest, []).append(obj)
        for interest, objects in affected.items():
            self._evaluate(interest, objects)
            self._sync(interest)

    def _log_events(self, emitted: list[tuple[NativeObject, Any, tuple[Any, ...]]]) -> None:
        """Change-log mode: every event of a logged object, behind its commit's changes."""
        time = self.context.time
        for obj, meta, args in emitted:
            for subscription in self._logs.get(obj, ()):
                named = {a.stl_name: v for a, v in zip(meta.args, args, strict=True)}
                record: LogRecord = ("event", time, obj, meta.stl_name, named)
                self._logged.setdefault(subscription, []).append(record)

    def _withdraw(self, objects: list[NativeObject]) -> None:
        """Tell every subscription that held them; forget them."""
        doomed = set(objects)
        for subscription, sent in list(self._sent.items()):
            for obj in sorted(sent & doomed, key=self._order.__getitem__):
                sent.discard(obj)
                self._tell(False, subscription, obj)
        for matches in self._matches.values():
            matches -= doomed
        for obj in objects:
            if obj in self.published:
                self.published.remove(obj)
            self._logs.pop(obj, None)
            self._order.pop(obj, None)

    def withdraw_all(self) -> None:
        """The owner stopped: everything it published is gone, nothing new is published."""
        self._fresh.clear()
        gone, self._gone = self._gone, []
        self._withdraw([*gone, *self.published])
        self._post_logs()

    def forget(self, subscription: Subscription) -> None:
        """A closed subscription: drop what was sent to it and, once no subscription holds its
        interest any more, the interest's matches (kernel work, owner's drain)."""
        self._sent.pop(subscription, None)
        for obj, logs in list(self._logs.items()):
            if subscription in logs:
                logs.remove(subscription)
                if not logs:
                    del self._logs[obj]
        interest = subscription.interest
        if interest in self._matches and not self.space.subscriptions_of(interest):
            del self._matches[interest]

    @property
    def engaged(self) -> bool:
        """Whether interests concern this owner: it has published, or is about to, or still
        holds what it told subscriptions. A component that publishes nothing (a consumer, the
        transport) is never handed interest work, so a parked one never piles it up; it
        evaluates the interests that exist when it first publishes (``commit``)."""
        return bool(self.published or self._fresh or self._sent or self._matches)


class Interests:
    """The interests of every bus of the process, behind one lock (part of the bus space)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_bus: dict[str, dict[str, Interest]] = {}
        self.publishers: list[Publisher] = []
        # The transport: told of every subscription opened (True) and closed (False), outside
        # the lock, so that it can carry interests to other processes.
        self.listener: Callable[[Subscription, bool], None] | None = None

    def subscribe(
        self,
        discovery: Discovery,
        query: Query,
        on_added: Batch | None,
        on_removed: Batch | None,
        log: Log | None,
        sink: ChangeSink | None = None,
    ) -> Subscription:
        assert query.bus is not None
        with self._lock:
            table = self._by_bus.setdefault(query.bus, {})
            interest = table.get(str(query))
            if interest is None:
                interest = table[str(query)] = Interest(query)
            subscription = Subscription(discovery, interest, on_added, on_removed, log, sink)
            interest.subscriptions.append(subscription)
            publishers = list(self.publishers)
            listener = self.listener
        for publisher in publishers:
            if publisher.engaged:
                publisher.context.post(publisher.interest_arrived, interest)
        if listener is not None:
            listener(subscription, True)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        interest = subscription.interest
        with self._lock:
            if subscription in interest.subscriptions:
                interest.subscriptions.remove(subscription)
            if not interest.subscriptions:
                table = self._by_bus.get(interest.bus, {})
                if table.get(interest.text) is interest:
                    del table[interest.text]
            publishers = list(self.publishers)
            listener = self.listener
        for publisher in publishers:
            if publisher.engaged:
                publisher.context.post(publisher.forget, subscription)
        if listener is not None:
            listener(subscription, False)

    def subscriptions_of(self, interest: Interest) -> list[Subscription]:
        with self._lock:
            return list(interest.subscriptions)

    def subscriptions(self) -> list[Subscription]:
        """Every open subscription of the process, by bus then query text."""
        with self._lock:
            tables = [self._by_bus[bus] for bus in sorted(self._by_bus)]
            return [s for t in tables for text in sorted(t) for s in t[text].subscriptions]

    def interests_on(self, buses: set[str | None]) -> list[Interest]:
        with self._lock:
            found = sorted(b for b in buses if b)
            return [i for bus in found for i in self._by_bus.get(bus, {}).values()]
