"""The tracing hook (runtime.md §7.4) and the built-in Chrome-trace tracer.

Tracers receive every cycle's drain, update and commit zones and every overrun and missed-frame
message, also from components that silenced their warning lines. They are called on the
component's own thread and must not block; one that raises is logged once and removed.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any, Protocol

_log = logging.getLogger("sengen.kernel")


class Tracer(Protocol):
    def zone(self, component: str, zone: str, begin_ns: int, end_ns: int, cycle_time: int) -> None:
        """A ``"drain"``, ``"update"`` or ``"commit"`` zone; times from ``perf_counter_ns``."""

    def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
        """An overrun or missed-frame report, with its exact text."""


class Tracers:
    """The tracers installed in a kernel. Without any, a zone costs one check."""

    def __init__(self) -> None:
        self._tracers: list[Tracer] = []
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        return bool(self._tracers)

    def install(self, tracer: Tracer) -> None:
        with self._lock:
            self._tracers = [*self._tracers, tracer]

    def _failed(self, tracer: Tracer, error: Exception) -> None:
        with self._lock:
            if tracer not in self._tracers:
                return
            self._tracers = [t for t in self._tracers if t is not tracer]
        _log.error("tracer %r failed and was removed: %s", tracer, error, exc_info=error)

    def zone(self, component: str, zone: str, begin_ns: int, end_ns: int, cycle_time: int) -> None:
        for tracer in self._tracers:
            try:
                tracer.zone(component, zone, begin_ns, end_ns, cycle_time)
            except Exception as error:
                self._failed(tracer, error)

    def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
        for tracer in self._tracers:
            try:
                tracer.message(component, text, cycle_time, lost)
            except Exception as error:
                self._failed(tracer, error)


class ChromeTracer:
    """Collects zones and messages; :meth:`write` saves Chrome-trace JSON for Perfetto or
    ``chrome://tracing``: a complete event per zone (``ts``, ``dur`` in µs), a track per
    component, an instant event per message."""

    def __init__(self) -> None:
        self._events: list[dict[str, Any]] = []
        self._tracks: dict[str, int] = {}
        self._lock = threading.Lock()

    def _track(self, component: str) -> int:
        track = self._tracks.get(component)
        if track is None:
            track = self._tracks[component] = len(self._tracks) + 1
        return track

    def zone(self, component: str, zone: str, begin_ns: int, end_ns: int, cycle_time: int) -> None:
        with self._lock:
            self._events.append(
                {
                    "name": zone,
                    "ph": "X",
                    "ts": begin_ns / 1000,
                    "dur": (end_ns - begin_ns) / 1000,
                    "pid": 1,
                    "tid": self._track(component),
                    "args": {"cycle_time": cycle_time},
                }
            )

    def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
        with self._lock:
            track = self._track(component)
            last = self._events[-1]["ts"] if self._events else 0
            self._events.append(
                {
                    "name": text,
                    "ph": "i",
                    "s": "t",
                    "ts": last,
                    "pid": 1,
                    "tid": track,
                    "args": {"cycle_time": cycle_time, "lost": lost},
                }
            )

    def document(self) -> dict[str, Any]:
        with self._lock:
            names = [
                {"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}
                for name, tid in self._tracks.items()
            ]
            return {"traceEvents": [*names, *self._events]}

    def write(self, path: Path) -> None:
        """Write the trace atomically (a temporary file, then rename)."""
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(self.document()), encoding="utf-8")
        os.replace(temporary, path)
