"""Push to WebSocket and server-sent-event clients, on the server's event loop.

The explorer's frames arrive once per cycle of the component. Each client keeps what it has not
been sent yet: the paths that changed (a set: a path changed twice is sent once, with its latest
snapshot), the additions and removals of its interests, and its events in a bounded queue (the
oldest dropped and counted). At its own rate a client's sender takes all of it as one batch, so
a client that cannot keep up gets coalesced states and never an unbounded queue.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import ApiError
from .explorer import CallRecord, EventRecord, Explorer, Frame, Snapshot

MAX_EVENTS = 1000  # events waiting for one client
MAX_HZ = 60.0
DEFAULT_HZ = 30.0

Send = Callable[[dict[str, Any]], Awaitable[None]]


class Client:
    """One connection: the interests it follows, the objects whose values it wants (None: all
    of its interests'), and what waits to be sent."""

    def __init__(self, explorer: Explorer) -> None:
        self._explorer = explorer
        self.interests: set[int] = set()
        self.watch: set[str] | None = None
        self.period = 1 / DEFAULT_HZ
        self.owned: set[int] = set()  # interests opened through this connection
        self._changed: set[str] = set()
        self._added: list[tuple[int, Snapshot]] = []
        self._removed: list[tuple[int, str]] = []
        self._events: deque[EventRecord] = deque(maxlen=MAX_EVENTS)
        self._dropped = 0
        self._results: list[CallRecord] = []
        self._replies: list[dict[str, Any]] = []
        self.wake = asyncio.Event()

    def reply(self, message: dict[str, Any]) -> None:
        """An answer to one of the client's requests, sent with the next batch."""
        self._replies.append(message)
        self.wake.set()

    def watch_paths(self, paths: list[str] | None) -> None:
        """Values of ``paths`` only (None: all); the newly watched ones are sent at once."""
        before = self.watch
        self.watch = set(paths) if paths is not None else None
        fresh = self.watch if before is None or self.watch is None else self.watch - before
        view = self._explorer.interests
        followed = set().union(*(view[i].paths for i in self.interests if i in view))
        self._changed.update(followed if fresh is None else fresh & followed)
        self.wake.set()

    def follows(self, path: str) -> bool:
        if self.watch is not None and path not in self.watch:
            return False
        view = self._explorer.interests
        return any(path in view[i].paths for i in self.interests if i in view)

    def follow(self, interest: int) -> None:
        """Also the interest's objects as they are now."""
        self.interests.add(interest)
        view = self._explorer.interests.get(interest)
        if view is not None:
            snapshots = self._explorer.view
            self._added += [(interest, snapshots[p]) for p in view.paths if p in snapshots]
            self._changed.update(view.paths)
            self.wake.set()

    def take(self, frame: Frame) -> None:
        interests = self.interests
        self._added += [(i, s) for i, s in frame.added if i in interests]
        self._removed += [(i, p) for i, p in frame.removed if i in interests]
        self._changed.update(p for p in frame.changed if self.follows(p))
        for event in frame.events:
            if self.follows(event.path):
                if len(self._events) == MAX_EVENTS:
                    self._dropped += 1
                self._events.append(event)
        self._results += frame.results
        if self._changed or self._added or self._removed or self._events or self._results:
            self.wake.set()

    def batch(self) -> list[dict[str, Any]]:
        """Everything waiting, as messages; the values as they are now."""
        messages, self._replies = self._replies, []
        if self._added:
            by_interest: dict[int, list[dict[str, Any]]] = {}
            for interest, snapshot in self._added:
                by_interest.setdefault(interest, []).append(snapshot.summary())
            messages += [
                {"type": "added", "interest": i, "objects": objects}
                for i, objects in by_interest.items()
            ]
            self._added = []
        if self._removed:
            gone: dict[int, list[str]] = {}
            for interest, path in self._removed:
                gone.setdefault(interest, []).append(path)
            messages += [{"type": "removed", "interest": i, "paths": p} for i, p in gone.items()]
            self._removed = []
        if self._changed:
            view = self._explorer.view
            states = [
                {"path": p, "time": s.time, "values": s.state()}
                for p in sorted(self._changed)
                if (s := view.get(p)) is not None
            ]
            self._changed = set()
            if states:
                messages.append({"type": "changes", "objects": states})
        if self._dropped:
            messages.append({"type": "dropped", "events": self._dropped})
            self._dropped = 0
        while self._events:
            event = self._events.popleft()
            messages.append(
                {
                    "type": "event",
                    "path": event.path,
                    "event": event.event,
                    "time": event.time,
                    "args": event.args,
                }
            )
        messages += [{"type": "result", **r.as_json()} for r in self._results]
        self._results = []
        return messages


class Hub:
    def __init__(self, explorer: Explorer, max_clients: int) -> None:
        self.explorer = explorer
        self.max_clients = max_clients
        self.clients: set[Client] = set()
        self._results: dict[str, list[asyncio.Future[CallRecord]]] = {}
        self._frames: list[asyncio.Future[None]] = []

    def publish(self, frame: Frame) -> None:
        for client in self.clients:
            client.take(frame)
        for record in frame.results:
            for waiter in self._results.pop(record.id, []):
                if not waiter.done():
                    waiter.set_result(record)
        frames, self._frames = self._frames, []
        for pending in frames:
            if not pending.done():
                pending.set_result(None)

    async def result(self, call: str, timeout: float) -> CallRecord:
        """The finished invocation ``call``."""
        record = self.explorer.calls.get(call)
        if record is not None and record.status != "pending":
            return record
        waiter: asyncio.Future[CallRecord] = asyncio.get_running_loop().create_future()
        self._results.setdefault(call, []).append(waiter)
        try:
            return await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            raise ApiError(504, f"no answer to {call} within {timeout:g} s") from None
        finally:
            waiters = self._results.get(call, [])
            if waiter in waiters:
                waiters.remove(waiter)
            if not waiters:
                self._results.pop(call, None)

    async def next_frame(self) -> None:
        """Until the explorer's next cycle has been published."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._frames.append(waiter)
        await waiter

    async def serve(self, client: Client, send: Send) -> None:
        """Send ``client``'s batches at its rate until cancelled or the send fails."""
        loop = asyncio.get_running_loop()
        while True:
            await client.wake.wait()
            client.wake.clear()
            started = loop.time()
            for message in client.batch():
                await send(message)
            # The rate bounds the cost of a client: what arrives meanwhile is coalesced.
            rest = client.period - (loop.time() - started)
            if rest > 0:
                await asyncio.sleep(rest)

    def attach(self, client: Client) -> None:
        self.clients.add(client)

    def detach(self, client: Client) -> None:
        self.clients.discard(client)


async def cancel(task: asyncio.Task[Any]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
