"""The execution context of one component: its work queue, its objects' pending commits and the
calls and results it sends (runtime.md §3.6 to §3.12, §5.1).

The object layer is driven only through :meth:`Context.drain` and :meth:`Context.commit`, so it
runs the same under a real-time loop, a stepped driver or a unit test. Other threads only ever
append to the work queue; everything else happens on the context's own thread.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import repeat
from typing import TYPE_CHECKING, Any, Protocol

from sengen.runtime.errors import CallTimeout

if TYPE_CHECKING:
    from sengen.runtime.objects.meta import EventMeta

_current = threading.local()


def _nothing() -> None:
    pass


def timed_out(label: str) -> CallTimeout:
    """The error of a call ``<object>.<method>`` whose timeout expired, naming both."""
    address, _, member = label.rpartition(".")
    return CallTimeout(f"call to '{member}' of object '{address}' timed out")


# The kinds of work, executed in this order in every drain (runtime.md §5.1, step 6).
CHANGES, CALLS, RESULTS, EVENTS = range(4)
# The lane of work sent from outside any component (a test, a transport thread): after all others.
OUTSIDE = 1 << 62

Lane = deque[tuple[Callable[..., Any], tuple[Any, ...]]]


# What a context uses of the modules above it, which all import this one: by their classes, the
# references back would be import cycles.


class Delivery(Protocol):
    """An event subscription (:class:`~sengen.runtime.objects.events.Connection`)."""

    @property
    def context(self) -> Context | None: ...

    @property
    def closed(self) -> bool: ...

    def deliver(self, args: tuple[Any, ...], created: int | None, /) -> None: ...

    def run(self, args: tuple[Any, ...], created: int | None, /) -> None: ...


class Slot(Protocol):
    """A property as a commit flips it (:class:`~sengen.runtime.objects.objects.Prop`)."""

    @property
    def key(self) -> str: ...

    @property
    def set(self) -> Callable[[Any, Any], None]: ...

    @property
    def deep(self) -> Callable[[Any, Any], bool] | None: ...

    @property
    def nan(self) -> bool: ...

    @property
    def alone(self) -> tuple[Slot]: ...


class Committable(Protocol):
    """An object whose pending writes a commit flips and whose events it delivers
    (:class:`~sengen.runtime.objects.objects.NativeObject`)."""

    @property
    def _next_(self) -> dict[Any, Any]: ...

    @property
    def _version_(self) -> list[int]: ...

    @property
    def _change_subs_(self) -> Mapping[str, Sequence[Delivery]]: ...

    @property
    def _event_subs_(self) -> Mapping[str, Sequence[Delivery]]: ...

    def _commit_(self, time: int, /) -> Sequence[object] | None: ...


class Pending(Protocol):
    """A call that may time out (:class:`~sengen.runtime.objects.calls.Call`)."""

    deadline: int | None

    @property
    def label(self) -> str: ...

    def done(self) -> bool: ...

    def complete(self, value: Any, error: BaseException | None, /) -> None: ...


class Refreshable(Protocol):
    """A proxy: brought up to date at its subscriber's drain."""

    def _refresh_(self) -> None: ...


class Context:
    """One component's cycle state. ``time`` is the current cycle's time in ns."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.time = 0
        self._thread: int | None = None
        self._const_member: str | None = None
        # The thread whose writes need no further check: the owning thread while no [const]
        # method runs. Writes and emits compare it alone, on their hot path.
        self.writer: int | None = None
        self.running = True
        # Cycles only when a kernel clock orders (virtual time): what it sends to other
        # processes is stamped with the step (runtime.md §6.8).
        self.stepped = False
        # Per kind, one lane per sending component, run in the senders' runner order: items of
        # one sender keep their order, and the order across senders never depends on which
        # thread got there first (the canonical order of runtime.md §5.1).
        self.order = OUTSIDE - 1  # the runner index; what this context sends sorts by it
        self.queues: tuple[dict[int, Lane], ...] = tuple({} for _ in range(4))
        # Every lane in the order a drain runs them (kind, then sender), replaced whole when a
        # lane is added (rarely: once per kind and sender), so a drain never sorts.
        self._lanes: list[Lane] = []
        self._lanes_lock = threading.Lock()
        self.dirty: list[Committable] = []
        self.emissions: list[tuple[Committable, EventMeta, tuple[Any, ...]]] = []
        self._sends: list[Callable[[], None]] = []
        # Proxies are refreshed only once touched (:meth:`touch`): local ones by their owners'
        # commits, remote ones by the transport threads that feed them, so that an idle proxy
        # costs its drain nothing. Any thread appends to ``stale``; ``queued`` keeps a proxy in
        # it once. The drain refreshes them by rank (creation order), whatever the order the
        # owners committed in or the transport delivered.
        self._ranks: dict[Refreshable, int] = {}
        self._next_rank = 0
        self.stale: deque[Refreshable] = deque()
        self.queued: set[Refreshable] = set()
        # The owner's side: the proxies of each of this context's objects, in other contexts,
        # touched when the object commits a change. Replaced per object under the lock (the
        # owner's commit reads it without one).
        self.watchers: dict[Committable, tuple[tuple[Context, Refreshable], ...]] = {}
        self._watch_lock = threading.Lock()
        self._deadlines: list[Pending] = []
        # The timeout in ns of a call this context makes without ``timeout=`` (None: none).
        self.call_timeout: int | None = None
        # The component's registered objects and, below, what its commits changed and emitted:
        # read by the kernel (a component's objects are all native objects). Changed only by
        # :meth:`own` and :meth:`disown`, which drop ``_roster``.
        self.objects: list[Committable] = []
        self._roster: tuple[Committable, ...] | None = ()
        self.track_changes = False
        self.wakeup: threading.Event | None = None  # set by work-driven components
        # The objects a commit changed, and what each changed (its Props, in the same order):
        # two lists, not a pair per object, so that tracking allocates nothing per change.
        self.changed: list[Committable] = []
        self.changed_props: list[Sequence[object]] = []
        self.emitted: list[tuple[Committable, EventMeta, tuple[Any, ...]]] = []
        # The bound of runtime.md §1.8 (0: unbounded). Droppable items are tracked by the
        # identity of their queue entry, with what to do when one is dropped.
        self.limit = 0
        self.drop_oldest = False
        self._droppable: dict[int, Callable[[], None] | None] = {}
        self._bound_lock = threading.Lock()
        self._drops = 0
        self._warned_at = -1.0

    @property
    def thread(self) -> int | None:
        """The owning thread while bound (writes from another are refused), None while not."""
        return self._thread

    @thread.setter
    def thread(self, thread: int | None) -> None:
        self._thread = thread
        self.writer = thread if self._const_member is None else None

    @property
    def const_member(self) -> str | None:
        """The [const] method being executed, if any (it may not write)."""
        return self._const_member

    @const_member.setter
    def const_member(self, member: str | None) -> None:
        self._const_member = member
        self.writer = self._thread if member is None else None

    @staticmethod
    def current() -> Context | None:
        """The context whose cycle runs on this thread, if any."""
        context: Context | None = getattr(_current, "context", None)
        return context

    @contextmanager
    def active(self) -> Iterator[Context]:
        """Run the block as this context's thread: calls are sent from it, writes are allowed."""
        previous = getattr(_current, "context", None)
        _current.context = self
        self.thread = threading.get_ident()
        try:
            yield self
        finally:
            _current.context = previous
            self.thread = None

    # -- the work queue ---------------------------------------------------------------------------

    def lane(self, kind: int) -> Lane:
        """The lane of ``kind`` that work sent from the calling thread's component goes to."""
        sender = getattr(_current, "context", None)
        return self.lane_of(kind, OUTSIDE if sender is None else sender.order)

    def lane_of(self, kind: int, key: int) -> Lane:
        """The lane of ``kind`` for work sent by the component of runner order ``key``."""
        found = self.queues[kind].get(key)
        if found is None:
            found = self._add_lane(kind, key)
        return found

    def _add_lane(self, kind: int, key: int) -> Lane:
        # Under a lock: two senders adding lanes at once must not each leave out the other's.
        with self._lanes_lock:
            lanes = self.queues[kind]
            found = lanes.get(key)
            if found is None:
                found = lanes[key] = deque()
                self._lanes = [queue[k] for queue in self.queues for k in sorted(queue)]
            return found

    def post(self, function: Callable[..., Any], *args: Any) -> None:
        """Queue a call (or kernel work) for the next drain; safe from any thread. Dropped
        once stopped."""
        self.post_kind(CALLS, function, *args)

    def post_kind(self, kind: int, function: Callable[..., Any], *args: Any) -> None:
        """Queue work of ``kind`` (CHANGES, CALLS, RESULTS or EVENTS)."""
        if self.running:
            self.lane(kind).append((function, args))
            if self.wakeup is not None:
                self.wakeup.set()

    def bound(self, max_size: int, policy: str) -> None:
        """Bound the work queue to ``max_size`` items (0: unbounded) with eviction ``policy``."""
        self.limit = max_size
        self.drop_oldest = policy == "dropOldest"

    def push(
        self,
        kind: int,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        droppable: bool,
        on_drop: Callable[[], None] | None = None,
    ) -> None:
        """Queue work of ``kind``, subject to the bound: a droppable (best-effort) item may be
        discarded when the queue is full, the others are queued past the bound."""
        if not self.running:
            return
        entry = (function, args)
        if self.limit and droppable:
            with self._bound_lock:
                if self.pending() >= self.limit:
                    victim = self._oldest_droppable() if self.drop_oldest else None
                    if victim is None:  # dropNewest, or nothing older may go
                        self._dropped(on_drop)
                        return
                    self._dropped(victim)
                self._droppable[id(entry)] = on_drop
                self.lane(kind).append(entry)
        else:
            self.lane(kind).append(entry)
        if self.wakeup is not None:
            self.wakeup.set()

    def _oldest_droppable(self) -> Callable[[], None] | None:
        """Remove the oldest droppable entry; returns its drop action (a no-op if it has
        none), or None when every queued item must be kept."""
        for queue in self._lanes:
            entry = next((e for e in queue if id(e) in self._droppable), None)
            if entry is not None:
                queue.remove(entry)
                action = self._droppable.pop(id(entry))
                return action if action is not None else _nothing
        return None

    def _dropped(self, action: Callable[[], None] | None) -> None:
        self._drops += 1
        if action is not None:
            action()
        now = time.monotonic()
        if now - self._warned_at >= 1.0:
            import logging  # loaded by the first warning: a process may never need it

            logging.getLogger("sengen.kernel").warning(
                "%s work queue overflow (%d items dropped)", self.name, self._drops
            )
            self._warned_at = now
            self._drops = 0

    def wake(self) -> None:
        """Wake a work-driven component's wait (new work, or a stop request)."""
        if self.wakeup is not None:
            self.wakeup.set()

    def pending(self) -> int:
        """How many items wait for the next drain."""
        return sum(map(len, self._lanes))

    def drain(self, *, refresh: bool = True) -> None:
        """Refresh proxies (:meth:`refresh`, unless ``refresh`` is false), then run the work
        queue as a snapshot, kind by kind: work that arrives meanwhile waits for the next
        drain. One frame: this is the hot path of every cycle."""
        if refresh and (self.stale or self._deadlines):
            self.refresh()  # most drains have nothing to refresh
        # The snapshot: each lane's length now. Most contexts have one lane (one sender, one
        # kind of work), whose length is the whole snapshot: no list to build.
        lanes = self._lanes
        plan: Iterable[tuple[Lane, int]]
        if len(lanes) == 1:
            plan = ((lanes[0], len(lanes[0])),)
        else:
            plan = zip(lanes, list(map(len, lanes)))  # noqa: B905 (of one length)
        bounded = self._droppable
        for queue, count in plan:
            for _ in repeat(None, count):
                if not queue:  # an eviction shrank it meanwhile
                    break
                entry = queue.popleft()
                if bounded:
                    bounded.pop(id(entry), None)
                entry[0](*entry[1])

    def refresh(self) -> None:
        """Proxies copy their owners' committed state; timed-out calls expire."""
        stale = self.stale
        if stale:
            batch = [stale.popleft() for _ in range(len(stale))]
            # Unqueued before being read: a commit from now on touches them again.
            self.queued.difference_update(batch)
            ranks = self._ranks
            batch = [proxy for proxy in batch if proxy in ranks]  # not dropped meanwhile
            batch.sort(key=ranks.__getitem__)
            for proxy in batch:
                proxy._refresh_()
        if self._deadlines:
            self._expire()

    def run_queue(self) -> None:
        """Run the work queue (:meth:`drain` without the refresh)."""
        self.drain(refresh=False)

    def _expire(self) -> None:
        keep: list[Pending] = []
        for call in self._deadlines:
            if call.done():
                continue
            if call.deadline is not None and call.deadline <= self.time:
                call.complete(None, timed_out(call.label))
            else:
                keep.append(call)
        self._deadlines = keep

    # -- commit ---------------------------------------------------------------------------------

    def send_at_commit(self, send: Callable[[], None]) -> None:
        """Buffer an outgoing call or result; sent at this context's commit, in order."""
        self._sends.append(send)

    def flip(self) -> None:
        """:meth:`commit` without sending: the kernel sends after its own commit work."""
        self.commit(sends=False)

    def commit(self, time: int | None = None, *, sends: bool = True) -> None:
        """Commit every object changed in this cycle, atomically per object, and deliver their
        events; then (``sends``) send the buffered calls and results in order (:meth:`send`).
        With ``track_changes`` set, the objects whose properties changed are listed in
        ``changed`` and their changed properties in ``changed_props``, for the kernel's
        interests. One frame: this is the hot path of every cycle."""
        if time is not None:
            self.time = time
        if self.dirty:
            dirty, self.dirty = self.dirty, []
            time = self.time
            watchers = self.watchers
            changed = self.changed if self.track_changes else None
            changed_props = self.changed_props
            props: Sequence[object] | None
            for obj in dirty:
                pending = obj._next_
                if len(pending) == 1:
                    # NativeObject._commit_ of one pending write (most of them), inlined.
                    prop: Slot
                    prop, value = pending.popitem()
                    old = getattr(obj, prop.key)  # in C: faster than the slot's bound __get__
                    deep = prop.deep
                    # STL equality: ``==``, except that two NaNs are equal (where ``nan``),
                    # without a call unless the type needs one (``deep``).
                    if (
                        (value == old or (prop.nan and value != value and old != old))
                        if deep is None
                        else deep(value, old)
                    ):
                        continue
                    version = obj._version_
                    sequence = version[0] + 1
                    version[0] = sequence  # odd: readers in other threads retry (a seqlock)
                    prop.set(obj, value)
                    version[1] = time
                    version[0] = sequence + 1
                    subscriptions = obj._change_subs_
                    if subscriptions:
                        for subscription in subscriptions.get(prop.key, ()):
                            subscription.deliver((value,), None)
                    props = prop.alone
                else:
                    props = obj._commit_(time)
                    if not props:
                        continue
                if changed is not None:
                    changed.append(obj)
                    changed_props.append(props)
                if watchers:
                    seen = watchers.get(obj)
                    if seen:
                        for context, proxy in seen:  # context.touch(proxy), inlined
                            if proxy not in context.queued:
                                context.queued.add(proxy)
                                context.stale.append(proxy)
        if self.emissions:
            # After every flip, in emission order; stamped with the commit's time, so a
            # self-driven commit(time=t) carries t (runtime.md §5.3).
            emissions, self.emissions = self.emissions, []
            if self.track_changes:
                self.emitted.extend(emissions)
            time = self.time
            # The lane key of this thread's component, found once for every delivery.
            sender = getattr(_current, "context", None)
            key = OUTSIDE if sender is None else sender.order
            for obj, meta, args in emissions:
                for connection in obj._event_subs_.get(meta.stl_name, ()):
                    # Connection.deliver, inlined for a running unbounded subscriber.
                    target = connection.context
                    if connection.closed:
                        continue
                    if target is None or target.limit or not target.running:
                        connection.deliver(args, time)
                        continue
                    lane = target.queues[EVENTS].get(key)
                    if lane is None:
                        lane = target.lane_of(EVENTS, key)
                    lane.append((connection.run, (args, time)))
        if sends and self._sends:
            self.send()

    def send(self) -> None:
        """Send the calls and results buffered in this cycle, in order."""
        if self._sends:
            sends, self._sends = self._sends, []
            for send in sends:
                send()

    def watch_deadline(self, call: Pending) -> None:
        self._deadlines.append(call)

    # -- proxies and objects --------------------------------------------------------------------

    def add_proxy(self, proxy: Refreshable) -> None:
        """Refresh ``proxy`` at the drains after a :meth:`touch`, in creation order."""
        self._ranks[proxy] = self._next_rank
        self._next_rank += 1

    def drop_proxy(self, proxy: Refreshable) -> None:
        self._ranks.pop(proxy, None)

    def touch(self, proxy: Refreshable) -> None:
        """Refresh ``proxy`` at the next drain; any thread."""
        if proxy not in self.queued:
            self.queued.add(proxy)
            self.stale.append(proxy)

    def watch(self, obj: Committable, context: Context, proxy: Refreshable) -> None:
        """Touch ``proxy`` (of ``context``) whenever this context commits a change of ``obj``;
        any thread. Before the proxy first reads ``obj``: no commit falls in between."""
        with self._watch_lock:
            self.watchers[obj] = (*self.watchers.get(obj, ()), (context, proxy))

    def unwatch(self, obj: Committable, proxy: Refreshable) -> None:
        with self._watch_lock:
            kept = tuple(w for w in self.watchers.get(obj, ()) if w[1] is not proxy)
            if kept:
                self.watchers[obj] = kept
            else:
                self.watchers.pop(obj, None)

    def own(self, obj: Committable) -> None:
        """Register ``obj`` as one of this context's objects (updated and withdrawn with it)."""
        self.objects.append(obj)
        self._roster = None

    def disown(self, obj: Committable) -> None:
        """No longer one of this context's objects (removed from its bus)."""
        if obj in self.objects:
            self.objects.remove(obj)
            self._roster = None

    def roster(self) -> tuple[Committable, ...]:
        """``objects`` as a tuple: what a cycle's updates iterate, which they may change (an
        update may add or remove objects) without changing the iteration. Made again only after
        such a change, not every cycle."""
        roster = self._roster
        if roster is None:
            roster = self._roster = tuple(self.objects)
        return roster

    def stop(self) -> None:
        """Stop accepting work: later posts are dropped (runtime.md §3.12)."""
        self.running = False
        for lane in self._lanes:
            lane.clear()
