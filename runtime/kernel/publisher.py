"""Interests: the owner's side of discovery (runtime.md §4, §3.3, §3.11).

Owners evaluate interests on their own objects, on their own thread and with committed values:
when an object is published or an interest arrives, and again at each commit that changed a
dynamic property the condition references (:class:`Publisher`). :class:`Interests` holds the
interests of every bus of the process. No lock is ever held while user code runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from sengen.runtime.kernel.query import Query
from sengen.runtime.kernel.subscriptions import (
    Batch,
    ChangeSink,
    Delivery,
    Discovery,
    Interest,
    Log,
    LogRecord,
    Subscription,
)
from sengen.runtime.objects.meta import ClassMeta
from sengen.runtime.objects.objects import NativeObject

if TYPE_CHECKING:
    from sengen.runtime.objects.context import Context


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
        self._classes: dict[ClassMeta, None] = {}  # of what it published, for _track

    # -- the owner's objects ---------------------------------------------------------------------

    def added(self, obj: NativeObject) -> None:
        self._sequence += 1
        self._order[obj] = self._sequence
        self._fresh.append(obj)

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
        discovery = subscription.discovery
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
            state = {p.stl_name: getattr(obj, p.py_name) for p in obj.META.all_properties}
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
                subscription.discovery.context.post(subscription.log, records)
        # What the commit or work wrote into sinks leaves now, in one piece (the transport
        # applies a remote commit whole).
        for sink in self._sinks:
            sink.flush()
        self._track()

    def _track(self) -> None:
        """Change tracking costs every commit a record per changed object: on only while a
        change log, a sink or an interest's condition reads the changes (never for local
        proxies, which their owners' commits touch directly)."""
        self.context.track_changes = bool(self._logs or self._sinks) or any(
            i.conditional and any(i.query.evaluator(c).dynamic_properties for c in self._classes)
            for i in self._matches
        )

    # -- the owner's commit ----------------------------------------------------------------------

    def commit(self) -> None:
        """After the flip: change-log records, re-evaluation of the interests a change affects,
        publication of this cycle's additions, then of its removals."""
        context = self.context
        if context.changed:
            # The context lists them by what a commit uses of them; a component's objects are
            # native objects.
            objects = cast("list[NativeObject]", context.changed)
            props = context.changed_props
            context.changed, context.changed_props = [], []
            if self._sinks:
                time = context.time
                idle = [s for s in self._sinks if not s.changes(context, time, objects, props)]
                for sink in idle:
                    del self._sinks[sink]
            self._changed(objects, props)
        if context.emitted:
            emitted = cast("list[tuple[NativeObject, Any, tuple[Any, ...]]]", context.emitted)
            context.emitted = []
            if self._logs:
                self._log_events(emitted)
            for sink in self._sinks:
                sink.events(context, context.time, emitted)
        if self._fresh:
            fresh, self._fresh = self._fresh, []
            self.published.extend(fresh)
            self._classes.update(dict.fromkeys(o.META for o in fresh))
            for interest in self.space.interests_on({o.bus for o in fresh}):
                self._evaluate(interest, [o for o in fresh if o.bus == interest.bus])
                self._sync(interest)
        if self._gone:
            gone, self._gone = self._gone, []
            self._withdraw(gone)
        self._post_logs()

    def _changed(self, objects: list[NativeObject], changed: list[Sequence[Any]]) -> None:
        logs = self._logs
        conditional = [i for i in self._matches if i.conditional]
        if not logs and not conditional:
            return  # nobody records and no condition reads a property: nothing to redo
        time = self.context.time
        logged = self._logged
        affected: dict[Interest, list[NativeObject]] = {}
        for obj, props in zip(objects, changed, strict=True):
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
        self._track()

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
        # Taken by each drain around its arrivals and proxy refresh, and by the transport while
        # it applies one remote commit: a drain sees all of a commit or none of it.
        self.arrivals = threading.RLock()
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
