"""The kernel's side of one component: its thread and its cycle (runtime.md §5); the run API
that the component sees is :mod:`sengen.runtime.kernel.api`.

One cycle is drain → update → commit on the component's thread:
- drain: the cycle time is fixed; additions and removals of other components' objects reach the
  subscriptions; proxies copy their owners' committed state; the work queue runs as a snapshot;
- update: every registered object's ``update()`` in registration order, then the work function;
- commit: the flip, producer-side re-evaluation of interests, publication of additions and
  removals, events, then the calls and results buffered in the cycle; the component's own
  objects reach its own subscriptions last.
The same three steps are driven by the real-time loop (``exec_loop``), by a self-driven component
itself, or (later) by a stepped driver.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.buses import Source
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config.models import QueueConfig
from sengen.runtime.kernel.host import Host
from sengen.runtime.kernel.publisher import Publisher
from sengen.runtime.kernel.sessions import Sessions
from sengen.runtime.kernel.subscriptions import Discovery
from sengen.runtime.objects.calls import completed
from sengen.runtime.objects.context import CALLS, Context
from sengen.runtime.objects.duration import Duration
from sengen.runtime.objects.objects import NativeObject, gone
from sengen.runtime.time.realtime import LoopMonitoring, RealTimeLoop
from sengen.runtime.time.stepping import KernelClock, SteppedLoop

if TYPE_CHECKING:
    from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo

_log = logging.getLogger("sengen.kernel")

EXIT_COMPONENT_FAILED = 3


class Runner:
    """A component inside the kernel: state, thread, cycle, subscriptions and publications."""

    def __init__(
        self,
        kernel: Host,
        index: int,
        name: str,
        group: int,
        component: Component,
        config: dict[str, object],
        queue: QueueConfig | None = None,
    ) -> None:
        self.kernel = kernel
        self.index = index
        self.name = name
        self.group = group
        self.component = component
        self.config = config
        self.state = "unloaded"
        self.context = Context(name)
        self.context.order = index
        self.context.stepped = kernel.clock is not None and not component.is_real_time_only()
        if queue is not None:
            self.context.bound(queue.max_size, queue.eviction_policy)
        interests = kernel.space.interests
        self.discovery = Discovery(self.context, interests)
        self.publisher = Publisher(self.context, interests, index)
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.loop: RealTimeLoop | SteppedLoop | None = None
        self.in_loop = False
        self.period: int | None = None
        self.cycle_time = 0
        self.start_time = 0
        self.work: Callable[[], None] | None = None
        self.keeps_inputs = component.drains_last
        self.failure: BaseException | None = None
        self.parked = False  # waits for stop without a loop (wait_for_stop)
        self.self_driven = False  # drives its own cycles (drain_inputs): never stepped
        self._sources: dict[str, Source] = {}
        self.watches: list[Sessions] = []  # api.sessions(), closed when the component stops
        self.api = RunApi(self)

    # -- the thread --------------------------------------------------------------------------------

    def start(self) -> None:
        self.thread = threading.Thread(target=self._main, name=self.name, daemon=True)
        self.state = "running"
        self.thread.start()

    def _main(self) -> None:
        clock = self.kernel.clock
        stepped = clock is not None and not self.component.is_real_time_only()
        now = clock.time if clock is not None and stepped else time.time_ns()
        self.start_time = self.cycle_time = self.context.time = now
        try:
            with self.context.active():
                self.component.run(self.api)
            if not self.stop.is_set() and self.failure is None:
                _log.info("component '%s' finished", self.name)
        except Exception as error:
            self.fail(error)
        finally:
            self.state = "stopping"
            with self.context.active():
                self._withdraw()
            self.state = "stopped"

    def settled(self, stepped: list[SteppedLoop]) -> bool:
        """Ready for the first step: stepped, parked for good, finished, or on the wall clock."""
        if self.component.is_real_time_only() or self.parked or self.thread is None:
            return True
        if self.self_driven:
            return True
        return not self.thread.is_alive() or self.loop in stepped

    def request_stop(self) -> None:
        """Stop this component: its loop returns at its next check (a parked one at once)."""
        self.stop.set()
        self.context.wake()
        if isinstance(self.loop, SteppedLoop):
            self.loop.wake()

    def fail(self, error: BaseException) -> None:
        """An exception escaped user code on this component's thread (runtime.md §2.4)."""
        text = "".join(traceback.format_exception(error)).rstrip()
        _log.error("component '%s' failed: %s\n%s", self.name, error, text)
        self.failure = error
        self.kernel.request_stop(EXIT_COMPONENT_FAILED)

    def _withdraw(self) -> None:
        """On stop: every object leaves its bus (subscribers are told at their next drain),
        calls waiting in the queue fail with ObjectGone, subscriptions close."""
        # The context holds them as what it commits; a component's objects are native objects.
        for obj in list(cast("list[NativeObject]", self.context.objects)):
            bus = obj.bus
            try:
                if bus is not None:
                    self.source(bus).remove(obj)
            except Exception as error:
                _log.error(
                    "while removing '%s' of component '%s': %s\n%s",
                    obj.name,
                    self.name,
                    error,
                    "".join(traceback.format_exception(error)).rstrip(),
                )
                self.kernel.request_stop(EXIT_COMPONENT_FAILED)
        self.context.changed.clear()  # a cycle cut short by a failure: nothing to re-evaluate
        self.publisher.withdraw_all()
        if not self.keeps_inputs:
            self.close_inputs()

    def close_inputs(self) -> None:
        self._fail_waiting_calls()
        self.context.stop()
        self.discovery.close_all()
        for watch in self.watches:
            watch.close()

    def _fail_waiting_calls(self) -> None:
        """Calls still queued for this component's objects: ``ObjectGone`` for their callers."""
        lanes = self.context.queues[CALLS]
        for function, args in [entry for key in sorted(lanes) for entry in lanes[key]]:
            target = getattr(function, "__self__", None)
            if isinstance(target, NativeObject) and function.__name__ == "_execute_":
                _, _, call, caller = args
                completed(caller, call, None, gone(target._address_))

    # -- one cycle -------------------------------------------------------------------------------

    def drain(self, cycle_time: int) -> int:
        """Returns the thread CPU spent executing the work queue."""
        context = self.context
        self.cycle_time = context.time = cycle_time
        with self.discovery.space.arrivals:  # a remote commit lands whole, between drains
            self.discovery.apply_arrivals()
            context.refresh()
        before = time.thread_time_ns()
        context.run_queue()
        return time.thread_time_ns() - before

    def update(self, cycle_time: int = 0) -> None:
        api = self.api
        # The context holds them as what it commits; a component's objects are native objects.
        for obj in cast("tuple[NativeObject, ...]", self.context.roster()):
            obj.update(api)
        if self.work is not None:
            self.work()

    def commit(self, cycle_time: int) -> None:
        context = self.context
        context.time = cycle_time
        context.flip()
        self.publisher.commit()
        context.send()
        self.discovery.apply_own()

    def exec_loop(self, period: int, work: Callable[[], None] | None, log_overruns: bool) -> None:
        self.work = work
        self.period = period
        self.in_loop = True
        try:
            clock = self.kernel.clock
            if clock is not None and not self.component.is_real_time_only():
                self._stepped(clock, period)
            else:
                self._real_time(period, log_overruns)
        finally:
            self.in_loop = False

    def _real_time(self, period: int, log_overruns: bool) -> None:
        loop = RealTimeLoop(
            self.name,
            period,
            stop=self.stop,
            log_overruns=log_overruns,
            tracers=self.kernel.tracers,
        )
        self.loop = loop
        # The schedule is anchored when the thread started, before run() (runtime.md §5.5):
        # time a component spends before calling exec_loop makes its first cycles late.
        if not self.start_time:
            self.start_time = time.time_ns()
        loop.run(self.drain, self.update, self.commit, anchor=self.start_time)

    def _stepped(self, clock: KernelClock, period: int) -> None:
        """Parked between the kernel clock's commands (runtime.md §6.2)."""
        tracers = self.kernel.tracers

        def traced(zone: str, step: Callable[[int], Any]) -> Callable[[int], Any]:
            def run(cycle_time: int) -> Any:
                begin = time.perf_counter_ns()
                result = step(cycle_time)
                if tracers:
                    tracers.zone(self.name, zone, begin, time.perf_counter_ns(), cycle_time)
                return result

            return run

        loop = SteppedLoop(
            self.name,
            self.index,
            period,
            traced("drain", self.drain),
            traced("update", self.update),
            traced("commit", self.commit),
            self.stop,
            self.fail,
        )
        if self.kernel.parked_writes:  # the test kernel writes between steps (§3.4)
            context = self.context
            owner = context.thread

            def park(parked: bool) -> None:
                context.thread = None if parked else owner

            loop.on_park = park
        self.loop = loop
        self.start_time = 0
        clock.join(loop)
        try:
            loop.run()
        finally:
            clock.leave(loop)

    # -- buses and monitoring --------------------------------------------------------------------

    def source(self, bus: str) -> Source:
        found = self._sources.get(bus)
        if found is None:
            space = self.kernel.space
            found = Source(space, self.context, bus, self.api, self.publisher)
            self._sources[bus] = found
        return found

    def monitoring(self) -> ComponentMonitoringInfo:
        from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo

        loop = self.loop
        m = loop.snapshot() if loop is not None else LoopMonitoring(cycle_time=0)
        looped = loop is not None
        timed = isinstance(loop, RealTimeLoop)  # deadlines exist only on the wall clock

        def ns(value: int | None) -> Duration | None:
            return None if value is None or not looped else Duration(value)

        def delay(value: int | None) -> Duration | None:
            return None if value is None or not timed else Duration(value)

        def count(value: int) -> int | None:
            return value if timed else None

        return ComponentMonitoringInfo(
            name=self.name,
            group=self.group,
            requires_real_time=self.component.is_real_time_only(),
            cycle_time=Duration(m.cycle_time) if looped else None,
            object_count=len(self.context.objects),
            last_cycle_execution_cpu_time=ns(m.last.execution if m.last else None),
            last_cycle_component_cpu_time=ns(m.last.component if m.last else None),
            last_cycle_queued_work_cpu_time=ns(m.last.queued if m.last else None),
            worst_cycle_execution_cpu_time=ns(m.worst.execution if m.worst else None),
            worst_cycle_component_cpu_time=ns(m.worst.component if m.worst else None),
            last_cycle_start_delay=delay(m.last_start_delay),
            worst_start_delay=delay(m.worst_start_delay),
            overrun_count=count(m.overrun_count),
            missed_frame_count=count(m.missed_frame_count),
            overslept_count=count(m.overslept_count),
        )
