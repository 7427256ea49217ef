"""Which sessions and buses exist (runtime.md §3.1): ``api.sessions()``.

A bus is detected while an object is published on it, by a component of this process or, with
a transport, of another process (the transport reports the objects other processes announce).
Components watch detection through :class:`Sessions`, whose callbacks run in their drain.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from sengen.runtime.objects.context import Context

Detected = Callable[[list[str]], None]  # bus addresses ("session.bus")
Changed = Callable[[str, bool], None]  # (bus address, detected): called on any thread


class BusDirectory:
    """The buses detected in the process, with how many objects each holds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._watches: list[Changed] = []

    def add(self, bus: str, count: int = 1) -> None:
        """``count`` more objects on ``bus``."""
        with self._lock:
            fresh = self._counts[bus] == 0
            self._counts[bus] += count
            watches = list(self._watches) if fresh else []
        for watch in watches:
            watch(bus, True)

    def remove(self, bus: str) -> None:
        with self._lock:
            if self._counts[bus] <= 0:
                return
            self._counts[bus] -= 1
            gone = self._counts[bus] == 0
            if gone:
                del self._counts[bus]
            watches = list(self._watches) if gone else []
        for watch in watches:
            watch(bus, False)

    def buses(self) -> list[str]:
        with self._lock:
            return sorted(self._counts)

    def watch(self, watch: Changed) -> None:
        with self._lock:
            self._watches.append(watch)

    def unwatch(self, watch: Changed) -> None:
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)


class Sessions:
    """What ``api.sessions()`` returns: the sessions and buses detected now, and callbacks for
    buses detected and undetected later, run in the component's drain."""

    def __init__(self, directory: BusDirectory, context: Context) -> None:
        self._directory = directory
        self._context = context
        self._on_detected: Detected | None = None
        self._on_undetected: Detected | None = None
        self._told: set[str] = set()  # detected as far as the handler knows: none told twice
        self.closed = False
        directory.watch(self._changed)

    @property
    def names(self) -> list[str]:
        """The sessions detected, sorted."""
        return sorted({bus.partition(".")[0] for bus in self._directory.buses()})

    def buses(self, session: str | None = None) -> list[str]:
        """The buses detected (of ``session``), as sorted addresses."""
        found = self._directory.buses()
        return found if session is None else [b for b in found if b.startswith(session + ".")]

    def on_detected(self, callback: Detected | None) -> None:
        """Replace the handler; like a subscription's ``on_added``, it is told of the buses
        already detected at the next drain."""
        self._on_detected = callback
        if callback is not None:
            self._context.post(self._report, callback)

    def on_undetected(self, callback: Detected | None) -> None:
        self._on_undetected = callback

    def close(self) -> None:
        self.closed = True
        self._directory.unwatch(self._changed)

    def _changed(self, bus: str, detected: bool) -> None:
        """Any thread: queued for the component's next drain."""
        self._context.post(self._tell, bus, detected)

    def _report(self, callback: Detected) -> None:
        if callback is not self._on_detected or self.closed:
            return
        found = [bus for bus in self.buses() if bus not in self._told]
        self._told.update(found)
        if found:
            callback(found)

    def _tell(self, bus: str, detected: bool) -> None:
        if self.closed:
            return
        if detected:  # told once, even when the report at installation found it already
            if self._on_detected is not None and bus not in self._told:
                self._told.add(bus)
                self._on_detected([bus])
            return
        known = bus in self._told
        self._told.discard(bus)
        if self._on_undetected is not None and (known or self._on_detected is None):
            self._on_undetected([bus])
