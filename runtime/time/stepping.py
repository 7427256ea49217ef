"""Virtual time: the kernel clock, stepped components and the master's stepping (runtime.md §6).

A stepped component's thread parks between commands of its kernel's :class:`KernelClock`:
``process_no_flush(delta)`` advances the kernel time and has every due component drain and
update in parallel (outputs stay buffered); ``flush_outputs()`` has them commit and reports the
time to the next due component. :class:`Stepper` is the master's algorithm over any set of
clocks (§6.3): the ``master`` object, the test kernel and ``sengen run --until`` all use it.
Times are integer nanoseconds; no cycle is ever skipped.
"""

from __future__ import annotations

import _thread
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sengen.runtime.time.realtime import CycleCost, LoopMonitoring

_log = logging.getLogger("sengen.kernel")

CYCLE, COMMIT = "cycle", "commit"


class Countdown:
    """The clock's wait for N components: the last one to arrive opens it. Raw locks, not
    ``threading.Semaphore``: a step is two rendezvous per component, on the hot path."""

    __slots__ = ("_count", "_counter", "_open")

    def __init__(self) -> None:
        self._counter = _thread.allocate_lock()
        self._open = _thread.allocate_lock()
        self._open.acquire()
        self._count = 0

    def expect(self, count: int) -> None:
        self._count = count

    def arrive(self) -> None:
        with self._counter:
            self._count -= 1
            last = self._count == 0
        if last:
            self._open.release()

    def wait(self) -> None:
        self._open.acquire()


class SteppedLoop:
    """One stepped component: parked until its kernel clock orders a cycle or a commit."""

    def __init__(
        self,
        name: str,
        index: int,
        period: int,
        drain: Callable[[int], int],
        update: Callable[[int], None],
        commit: Callable[[int], None],
        stop: threading.Event,
        fail: Callable[[BaseException], None],
    ) -> None:
        self.name = name
        self.index = index
        self.period = period
        self.due = 0
        self.ran = False
        self._drain, self._update, self._commit = drain, update, commit
        self.stop = stop
        self._fail = fail
        self.on_park: Callable[[bool], None] | None = None  # told when it parks and resumes
        self._go = _thread.allocate_lock()  # held while parked; released to wake the thread
        self._go.acquire()
        self._lock = threading.Lock()
        self._command: str | None = None
        self._exited = False
        self._done: Countdown | None = None
        self._cpu = 0  # thread CPU of the cycle so far (drain + update)
        self._component = 0
        self._queued = 0
        self._first = True
        self.monitoring = LoopMonitoring(cycle_time=period)
        self._monitor_lock = threading.Lock()

    def order(self, command: str, done: Countdown) -> bool:
        """Have the component run ``command``; False when it has already left."""
        with self._lock:
            if self._exited:
                return False
            self._command = command
            self._done = done
            if self._go.locked():
                self._go.release()
        return True

    def wake(self) -> None:
        """A stop request: the parked thread returns from :meth:`run`."""
        with self._lock:
            if self._go.locked():
                self._go.release()

    def run(self) -> None:
        """The component's thread until stop."""
        park = self.on_park
        try:
            while True:
                # A stop that came while a command ran found the lock already released: look
                # before parking (a stop after this look releases the lock and wakes us).
                if self.stop.is_set():
                    return
                if park is not None:
                    park(True)
                self._go.acquire()
                if park is not None:
                    park(False)
                with self._lock:
                    command, self._command = self._command, None
                    done = self._done
                    if command is None and self.stop.is_set():
                        return
                if command is None:
                    continue
                assert done is not None
                try:
                    self._execute(command)
                except Exception as error:
                    # Reported before the clock is released, so that whoever stepped sees it.
                    self._fail(error)
                    return
                finally:
                    done.arrive()
        finally:
            with self._lock:
                self._exited = True
                if self._command is not None and self._done is not None:
                    self._command = None
                    self._done.arrive()  # never leave a clock waiting

    def _execute(self, command: str) -> None:
        cpu = time.thread_time_ns
        due = self.due
        if command == CYCLE:
            c0 = cpu()
            self._queued = self._drain(due)
            c1 = cpu()
            self._update(due)
            c2 = cpu()
            self._cpu, self._component = c2 - c0, c2 - c1
            return
        c0 = cpu()
        self._commit(due)
        cost = CycleCost(self._cpu + cpu() - c0, self._component, self._queued)
        with self._monitor_lock:
            m = self.monitoring
            m.last = cost
            if not self._first and (m.worst is None or cost.execution > m.worst.execution):
                m.worst = cost
        self._first = False

    def snapshot(self) -> LoopMonitoring:
        with self._monitor_lock:
            m = self.monitoring
            return LoopMonitoring(m.cycle_time, m.last, m.worst)


@dataclass(frozen=True, slots=True)
class StepPlan:
    """What a master tells each kernel clock with the ``processNoFlush`` opening step ``step``
    (runtime.md §6.8): the members of the clock set (by transport id, where END markers go)
    and those whose END(step - 1) the kernel awaits before handing deliveries over."""

    step: int
    members: tuple[str, ...]
    awaited: tuple[str, ...]


class StepSync(Protocol):
    """The transport's part in a step across processes (runtime.md §6.8)."""

    def begin(self, plan: StepPlan) -> None:
        """Before time advances: await the END markers, hand the held deliveries over."""

    def end(self, plan: StepPlan) -> None:
        """After the commits: END(step) to every other member."""


class KernelClock:
    """One kernel's virtual time and its stepped components (runtime.md §6.2)."""

    def __init__(self, ident: int = 0, name: str = "") -> None:
        self.ident = ident  # the id of the kernel clock object: the kernel's id in a clock set
        self.name = name  # the kernel clock object's name (clockName)
        self.remote = False
        self.member = ""  # the transport's id of this process, when one is loaded
        self.plan: StepPlan | None = None  # the current step's plan, from a master
        self.sync: StepSync | None = None
        self._processed = False
        self.time = 0
        self._lock = threading.Lock()
        self._stepped: list[SteppedLoop] = []  # in runner order
        self._done = Countdown()
        self.self_stepping = False  # virtualTimeRunning: nobody else may drive it
        self.limit: int | None = None  # self-stepping: no step to this time or later
        self.reached = threading.Event()  # self-stepping came to the limit
        self.stepped_changed = threading.Event()
        self.after_flush: Callable[[], None] | None = None  # the kernel clock object publishes

    def join(self, loop: SteppedLoop) -> None:
        """A component entering ``exec_loop``: first due at the next multiple of its period."""
        with self._lock:
            loop.due = -(-self.time // loop.period) * loop.period
            self._stepped.append(loop)
            self._stepped.sort(key=lambda s: s.index)
        self.stepped_changed.set()

    def leave(self, loop: SteppedLoop) -> None:
        with self._lock:
            if loop in self._stepped:
                self._stepped.remove(loop)
        self.stepped_changed.set()

    def stepped(self) -> list[SteppedLoop]:
        with self._lock:
            return list(self._stepped)

    def process_no_flush(self, delta: int) -> int:
        """Advance by ``delta`` ns and cycle every due component (outputs stay buffered);
        returns the wall time it took in ns."""
        if delta < 0:
            raise ValueError("time cannot go backwards")
        begin = time.perf_counter_ns()
        plan, sync = self.plan, self.sync
        if plan is not None and sync is not None:
            sync.begin(plan)
        self._processed = True
        with self._lock:
            self.time += delta
            due = [s for s in self._stepped if not s.ran and s.due <= self.time]
        self._all(due, CYCLE)
        for loop in due:
            loop.ran = True
        return time.perf_counter_ns() - begin

    def flush_outputs(self) -> int | None:
        """Commit what the last ``process_no_flush`` ran; the time to the next due component,
        or None when nothing is stepped."""
        with self._lock:
            ran = [s for s in self._stepped if s.ran]
        self._all(ran, COMMIT)
        for loop in ran:
            loop.ran = False
            loop.due += loop.period
        processed, self._processed = self._processed, False
        plan, sync = self.plan, self.sync
        if processed and plan is not None:
            self.plan = None  # a plan is good for one step
            if sync is not None:
                sync.end(plan)
        if self.after_flush is not None:
            self.after_flush()
        with self._lock:
            if not self._stepped:
                return None
            return max(0, min(s.due for s in self._stepped) - self.time)

    def issue_process_no_flush(self, delta: int) -> Callable[[], int]:
        """:meth:`process_no_flush`, at once: the local clock needs no waiting."""
        took = self.process_no_flush(delta)
        return lambda: took

    def issue_flush_outputs(self) -> Callable[[], int | None]:
        found = self.flush_outputs()
        return lambda: found

    def _all(self, loops: list[SteppedLoop], command: str) -> None:
        if not loops:
            return
        done = self._done
        # One more than the components: the clock's own arrival, after ordering them all,
        # opens the wait when every ordered component has already answered (or none could).
        done.expect(len(loops) + 1)
        for loop in loops:
            if not loop.order(command, done):
                done.arrive()
        done.arrive()
        done.wait()


class Clock(Protocol):
    """What the master steps: a kernel clock, local or remote. ``issue_*`` start a command and
    return its wait, so that one command reaches every clock before any is awaited."""

    name: str
    member: str
    plan: StepPlan | None
    remote: bool

    def process_no_flush(self, delta: int) -> int: ...

    def flush_outputs(self) -> int | None: ...

    def issue_process_no_flush(self, delta: int) -> Callable[[], int]: ...

    def issue_flush_outputs(self) -> Callable[[], int | None]: ...

    @property
    def time(self) -> int: ...


class ClockLink(Protocol):
    """How a master reaches the kernel clock of another process (the transport)."""

    def remote_clock(self, proxy: Any) -> Clock:
        """The clock behind a remote proxy of ``sen.kernel.VirtualKernelClock``."""
        ...


class Stepper:
    """The master clock's algorithm (runtime.md §6.3) over the clocks ``clocks()`` returns."""

    def __init__(self, clocks: Callable[[], Sequence[Clock]]) -> None:
        self._clocks = clocks
        self.kernel_time = 0
        self.pending: int | None = 0
        self.time = 0
        self.step_count = 0
        self._members: frozenset[str] = frozenset()
        self._joined: frozenset[str] = frozenset()  # brought in since the last step
        self._lock = threading.Lock()  # one driver at a time

    def _single_step(self, clocks: Sequence[Clock]) -> None:
        if self.step_count:
            joiners = [c for c in clocks if c.member and c.member not in self._members]
            if joiners:
                self._join(joiners)
        delta = self.pending or 0
        target = self.kernel_time + delta
        self._plan(clocks)
        waits = [c.issue_process_no_flush(max(0, target - c.time)) for c in clocks]
        for wait in waits:
            wait()
        found = self._flush(clocks)
        self.kernel_time = target
        nexts = [n for n in found if n is not None]
        self.pending = min(nexts) if nexts else None
        self.time = self.kernel_time + (self.pending or 0)

    def _join(self, joiners: list[Clock]) -> None:
        """Kernel clocks found after stepping began, brought to the common time by one
        ``processNoFlush(difference)`` + ``flushOutputs()`` pair between steps k and k + 1
        (runtime.md §6.8). The pair is their step k: what they send in it is stamped k and
        followed by END(k) to every kernel of step k, which awaits it at step k + 1."""
        step = self.step_count
        members = tuple(sorted(self._members | {c.member for c in joiners}))
        for clock in joiners:
            _log.warning("kernel clock '%s' joined at t=%d", clock.name, self.kernel_time)
            clock.plan = StepPlan(step, members, ())
        waits = [c.issue_process_no_flush(max(0, self.kernel_time - c.time)) for c in joiners]
        for wait in waits:
            wait()
        self._flush(joiners)  # their next due times count from the next step's flush
        self._members = frozenset(members)
        self._joined = frozenset(c.member for c in joiners)

    def _plan(self, clocks: Sequence[Clock]) -> None:
        """The plan of the next step for every clock (runtime.md §6.8): everyone at the first
        step, and later every member of the last step's clock set, awaits every other
        member's END of the previous step; a clock that joined since, to which no END of that
        step was addressed, awaits none."""
        step = self.step_count + 1
        members = tuple(sorted(c.member for c in clocks if c.member))
        for clock in clocks:
            if not clock.member:
                clock.plan = None
                continue
            known = step == 1 or (
                clock.member in self._members and clock.member not in self._joined
            )
            awaited = tuple(m for m in members if m != clock.member) if known else ()
            clock.plan = StepPlan(step, members, awaited)
        self._members = frozenset(members)
        self._joined = frozenset()
        self.step_count = step

    @staticmethod
    def _flush(clocks: Sequence[Clock]) -> list[int | None]:
        waits = [clock.issue_flush_outputs() for clock in clocks]
        return [wait() for wait in waits]

    def _refresh(self, clocks: Sequence[Clock]) -> None:
        nexts = [n for n in self._flush(clocks) if n is not None]
        self.pending = min(nexts) if nexts else None
        if self.pending is not None:
            self.time = self.kernel_time + self.pending

    def step(self) -> int:
        """One step; the wall time it took in ns."""
        begin = time.perf_counter_ns()
        with self._lock:
            self._step()
        return time.perf_counter_ns() - begin

    def _ordered(self) -> list[Clock]:
        """Remote clocks first: their commands go out before the local one runs."""
        return sorted(self._clocks(), key=lambda c: not c.remote)

    def _step(self) -> None:
        clocks = self._ordered()
        if not clocks or self.pending is None:
            self._refresh(clocks)
            if not clocks or self.pending is None:
                _log.warning("step: nothing to step (no kernel clock with a stepped component)")
                return
        self._single_step(clocks)

    def steps(self, count: int) -> int:
        begin = time.perf_counter_ns()
        with self._lock:
            for _ in range(count):
                self._step()
        return time.perf_counter_ns() - begin

    def advance_time(
        self,
        duration: int,
        progress: Callable[[int], None] | None = None,
        cancel: Callable[[], bool] | None = None,
    ) -> int:
        """Every step whose time lies in ``[time, time + duration)``; the wall time in ns.
        ``progress`` hears the time after each step; ``cancel`` can end it early."""
        begin = time.perf_counter_ns()
        with self._lock:
            target = self.time + duration
            while self.time < target and not (cancel is not None and cancel()):
                clocks = self._ordered()
                if not clocks or self.pending is None:
                    self._refresh(clocks)
                if not clocks or self.pending is None:
                    self.kernel_time = self.time = target
                    waits = [c.issue_process_no_flush(max(0, target - c.time)) for c in clocks]
                    for wait in waits:
                        wait()
                    break
                self._single_step(clocks)
                if progress is not None:
                    progress(self.time)
        return time.perf_counter_ns() - begin
