"""The real-time loop of one component, exactly as runtime.md §5.5 states it.

The schedule is anchored when the component's thread starts and advances by whole periods; work
that spills past its slot skips whole cycles (missed frames, interruption), a wake-up more than
one period late skips the slots that ended meanwhile (overslept) plus, after that, a slot with
under half its length left; the wait never asks for more than one period, so a backward clock
correction keeps the rate with the schedule ahead of the clock. Every lost cycle is counted and
each run of losses logs one line. The clocks and the wait are injected, so tests drive the loop
with a fake clock and assert exact patterns.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from sengen.runtime.time.tracing import Tracers

_log = logging.getLogger("sengen.kernel")


@dataclass(frozen=True, slots=True)
class CycleCost:
    """Thread CPU of one cycle: all of it, the component's own code, the queued work."""

    execution: int
    component: int
    queued: int


@dataclass(slots=True)
class LoopMonitoring:
    """The real-time fields of ComponentMonitoringInfo (runtime.md §7.1); None: not measured.
    ``last`` and ``worst`` are records of one cycle each, replaced as a whole."""

    cycle_time: int
    last: CycleCost | None = None
    worst: CycleCost | None = None
    last_start_delay: int | None = None
    worst_start_delay: int | None = None
    overrun_count: int = 0
    missed_frame_count: int = 0
    overslept_count: int = 0


def ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


class RealTimeLoop:
    """``drain(cycle_time) -> queued CPU ns``, ``update(cycle_time)`` and ``commit(cycle_time)``
    run once per cycle until ``stop`` is set. ``wait(seconds)`` is an interruptible wait (by
    default the stop event's); ``clock`` is the wall clock and ``cpu`` the thread's CPU time."""

    def __init__(
        self,
        name: str,
        period: int,
        *,
        stop: threading.Event | None = None,
        clock: Callable[[], int] = time.time_ns,
        cpu: Callable[[], int] = time.thread_time_ns,
        wait: Callable[[float], object] | None = None,
        log_overruns: bool = True,
        tracers: Tracers | None = None,
        perf: Callable[[], int] = time.perf_counter_ns,
    ) -> None:
        if period < 1:
            raise ValueError(f"invalid period {period} ns for component '{name}'")
        self.name = name
        self.period = period
        self.stop = stop or threading.Event()
        self.clock = clock
        self.cpu = cpu
        self.wait = wait or self.stop.wait
        self.log_overruns = log_overruns
        self.tracers = tracers if tracers is not None else Tracers()
        self.perf = perf
        self.monitoring = LoopMonitoring(cycle_time=period)
        self._lock = threading.Lock()  # readers of the monitoring record are other threads

    def snapshot(self) -> LoopMonitoring:
        """A consistent copy of the monitoring fields, safe from any thread."""
        with self._lock:
            m = self.monitoring
            return LoopMonitoring(
                m.cycle_time,
                m.last,
                m.worst,
                m.last_start_delay,
                m.worst_start_delay,
                m.overrun_count,
                m.missed_frame_count,
                m.overslept_count,
            )

    def _warn(self, text: str, cycle_time: int, lost: int) -> None:
        line = f"{self.name} {text}"
        if self.tracers:
            self.tracers.message(self.name, line, cycle_time, lost)
        if self.log_overruns:
            extra = {"component": self.name, "cycle_time": cycle_time, "lost": lost}
            _log.warning(line, extra=extra)

    def run(
        self,
        drain: Callable[[int], int],
        update: Callable[[int], None],
        commit: Callable[[int], None],
        anchor: int | None = None,
    ) -> None:
        """The loop of runtime.md §5.5; returns when ``stop`` is set."""
        period, clock, cpu, m = self.period, self.clock, self.cpu, self.monitoring
        slot = clock() if anchor is None else anchor
        first = True
        while not self.stop.is_set():
            cycle_time = slot
            c0, t0 = cpu(), self.perf()
            queued = drain(cycle_time)
            c1, t1 = cpu(), self.perf()
            update(cycle_time)
            c2, t2 = cpu(), self.perf()
            commit(cycle_time)
            c3, t3 = cpu(), self.perf()
            done = clock()
            if self.tracers:
                for zone, begin, end in (("drain", t0, t1), ("update", t1, t2), ("commit", t2, t3)):
                    self.tracers.zone(self.name, zone, begin, end, cycle_time)
            cost = CycleCost(c3 - c0, c2 - c1, queued)
            with self._lock:
                m.last = cost
                if not first and (m.worst is None or cost.execution > m.worst.execution):
                    m.worst = cost
                if cost.execution > period:
                    m.overrun_count += 1
            if cost.execution > period:
                self._warn("execution time overrun", cycle_time, 0)

            following = slot + period
            if done > following:  # work spilled into later slots: skip them all at once
                lost = ceil_div(done - following, period)
                following += lost * period
                if not first:
                    with self._lock:
                        m.missed_frame_count += lost
                    self._warn("missed frame (interruption)", cycle_time, lost)
            woken = self._sleep_until(following)
            if woken is None:
                return
            slot = woken
            first = False

    def _sleep_until(self, slot: int) -> int | None:
        """Wait for ``slot``; returns the slot to run (later after an oversleep), or None when
        stopped."""
        period, m = self.period, self.monitoring
        warned = False
        while True:
            if self.stop.is_set():
                return None
            remaining = min(max(slot - self.clock(), 0), period)  # never more than one period
            self.wait(remaining / 1e9)
            if self.stop.is_set():
                return None
            wake = self.clock()
            late = wake - slot
            lost = 0
            with self._lock:
                m.last_start_delay = late
                if m.worst_start_delay is None or late > m.worst_start_delay:
                    m.worst_start_delay = late
                if late > period:
                    lost = ceil_div(late - period, period)  # slots that ended while asleep
                    slot += lost * period
                    m.overslept_count += lost
            if late <= period:  # early, on time, or at most one period late: run this slot
                break
            if not warned:
                self._warn("missed frame (overslept)", slot, lost)
                warned = True
            if 2 * (wake - slot) > period:  # under half of the slot remains: drop it too
                slot += period
                with self._lock:
                    m.overslept_count += 1
                continue
            break
        return slot
