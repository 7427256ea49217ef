"""The execution context of one component: its work queue, its objects' pending commits and the
calls and results it sends (runtime.md §3.6 to §3.12, §5.1).

The object layer is driven only through :meth:`Context.drain` and :meth:`Context.commit`, so it
runs the same under a real-time loop, a stepped driver or a unit test. Other threads only ever
append to the work queue; everything else happens on the context's own thread.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sengen.runtime.errors import CallTimeout

if TYPE_CHECKING:
    from sengen.runtime.calls import Call
    from sengen.runtime.objects import NativeObject, Refreshable

_current = threading.local()


class Context:
    """One component's cycle state. ``time`` is the current cycle's time in ns."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.time = 0
        self.thread: int | None = None  # the owning thread while bound; writes are checked
        self.const_member: str | None = None  # the [const] method being executed, if any
        self.running = True
        self._queue: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self._dirty: list[NativeObject] = []
        self._sends: list[Callable[[], None]] = []
        self._proxies: list[Refreshable] = []
        self._deadlines: list[Call[Any]] = []
        self.objects: list[NativeObject] = []

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

    def post(self, function: Callable[..., Any], *args: Any) -> None:
        """Queue work for the next drain; safe from any thread. Dropped once stopped."""
        if self.running:
            self._queue.append((function, args))

    def drain(self) -> None:
        """Refresh proxies, expire timed-out calls, then run the queue as a snapshot: work that
        arrives meanwhile waits for the next drain."""
        for proxy in self._proxies:
            proxy._refresh()
        if self._deadlines:
            self._expire()
        queue = self._queue
        for _ in range(len(queue)):
            function, args = queue.popleft()
            function(*args)

    def _expire(self) -> None:
        keep: list[Call[Any]] = []
        for call in self._deadlines:
            if call.done():
                continue
            if call.deadline is not None and call.deadline <= self.time:
                call._complete(None, CallTimeout(f"call {call.label} timed out"))
            else:
                keep.append(call)
        self._deadlines = keep

    # -- commit ---------------------------------------------------------------------------------

    def send_at_commit(self, send: Callable[[], None]) -> None:
        """Buffer an outgoing call or result; sent at this context's commit, in order."""
        self._sends.append(send)

    def commit(self, time: int | None = None) -> None:
        """Commit every object changed in this cycle (atomically per object), deliver their
        events, then send the buffered calls and results in order."""
        if time is not None:
            self.time = time
        if self._dirty:
            dirty, self._dirty = self._dirty, []
            for obj in dirty:
                obj._commit(self.time)
        if self._sends:
            sends, self._sends = self._sends, []
            for send in sends:
                send()

    def watch_deadline(self, call: Call[Any]) -> None:
        self._deadlines.append(call)

    # -- proxies and objects --------------------------------------------------------------------

    def add_proxy(self, proxy: Refreshable) -> None:
        self._proxies.append(proxy)

    def drop_proxy(self, proxy: Refreshable) -> None:
        if proxy in self._proxies:
            self._proxies.remove(proxy)

    def stop(self) -> None:
        """Stop accepting work: later posts are dropped (runtime.md §3.12)."""
        self.running = False
        self._queue.clear()
