"""Subscriptions: the subscriber's side of discovery (runtime.md §4, §3.3, §3.11).

A subscription's query becomes an :class:`Interest` on its bus, shared by every subscription
with the same text. The owners evaluate interests on their own objects
(:mod:`sengen.runtime.kernel.publisher`); what starts or stops matching travels to the subscribing
component as a delivery, applied in its drain (its own objects at its own commit), where the
subscriber's proxies are created and dropped (:class:`Discovery`). No lock is ever held while
user code runs.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from sengen.runtime.kernel.collector import BULK, bulk
from sengen.runtime.kernel.query import Evaluator, Query, QueryError, parse_query
from sengen.runtime.objects.meta import ClassMeta
from sengen.runtime.objects.objects import NativeObject, Object
from sengen.runtime.objects.registry import registry

if TYPE_CHECKING:
    from sengen.runtime.objects.context import Context

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
        self,
        owner: Context,
        time: int,
        objects: list[NativeObject],
        props: list[Sequence[Any]],
    ) -> bool:
        """The objects that changed in one commit of ``owner`` (every object of the commit: the
        sink keeps those it holds) and the properties each changed. False: it holds none of
        ``owner``'s objects, so the owner stops telling it until it holds one again."""
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
        self.discovery = discovery  # the subscriber side that holds it
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
            self.discovery.context.post(self._report, callback)

    def on_removed(self, callback: Batch | None) -> None:
        self._on_removed = callback

    def close(self) -> None:
        """Stop the subscription and release its proxies; no removal callbacks run."""
        if self.closed:
            return
        self.closed = True
        self.discovery.closed(self)
        for owner in list(self._by_owner):
            self.discovery.release(owner)
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

    # -- kept by its Discovery, on the subscriber's thread -----------------------------------------

    def matched(self, owner: Owner) -> Object | None:
        """The view of ``owner`` while it matches, else None."""
        return self._by_owner.get(owner)

    def add_match(self, owner: Owner, view: Object) -> None:
        """``owner`` starts to match, seen through ``view``."""
        self._by_owner[owner] = view
        self._objects.append(view)

    def remove_match(self, owner: Owner) -> Object:
        """``owner`` stops matching; its view."""
        view = self._by_owner.pop(owner)
        self._objects.remove(view)
        return view

    def notify(self, added: list[Object], removed: list[Object]) -> None:
        """Run the callbacks for one drain's (or commit's) changes of the matches."""
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


class InterestSpace(Protocol):
    """Where a component's subscriptions are opened and closed: the bus space's
    :class:`~sengen.runtime.kernel.publisher.Interests`, which also tells the owners."""

    @property
    def arrivals(self) -> AbstractContextManager[Any]:
        """Taken by drains: remote commits land whole between them."""
        ...

    def subscribe(
        self,
        discovery: Discovery,
        query: Query,
        on_added: Batch | None,
        on_removed: Batch | None,
        log: Log | None,
        sink: ChangeSink | None = None,
    ) -> Subscription: ...

    def unsubscribe(self, subscription: Subscription) -> None: ...


class Discovery:
    """The subscriber's side of one component: its subscriptions, the deliveries waiting for its
    drain, and one proxy per (component, object) shared by its subscriptions."""

    forwarded = False  # True for the subscriptions the transport holds for another process

    def __init__(self, context: Context, space: InterestSpace) -> None:
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
        with bulk(len(batch) >= BULK) as made:  # a publication or a snapshot of many objects
            self._take(batch)
            made[0] += sum(1 for delivery in batch if delivery.adding)

    def _take(self, batch: list[Delivery]) -> None:
        batch.sort(key=lambda d: d.order)  # stable: one owner's deliveries keep their order
        touched: dict[Subscription, tuple[list[Object], list[Object]]] = {}
        for delivery in batch:
            subscription = delivery.subscription
            if subscription.closed:
                continue
            owner = delivery.obj
            held = subscription.matched(owner)
            added, removed = touched.setdefault(subscription, ([], []))
            if delivery.adding and held is None:
                view = self._acquire(owner)
                subscription.add_match(owner, view)
                added.append(view)
            elif not delivery.adding and held is not None:
                subscription.remove_match(owner)
                if held in added:
                    added.remove(held)
                else:
                    removed.append(held)
                self.release(owner)
        for subscription in self.subscriptions:  # subscription order
            if subscription in touched:
                subscription.notify(*touched[subscription])

    def _acquire(self, owner: Owner) -> Object:
        held = self._held.get(owner)
        if held is not None:
            self._held[owner] = (held[0], held[1] + 1)
            return held[0]
        view: Object
        if not isinstance(owner, NativeObject):
            view = owner.view_for(self.context)
        elif owner._ctx_ is self.context:
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
        close = getattr(view, "_close_", None)
        if close is not None:
            close()

    @property
    def proxies(self) -> list[Object]:
        return [view for view, _ in self._held.values()]
