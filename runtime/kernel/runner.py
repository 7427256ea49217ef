"""The kernel's side of one component: its thread, its cycle and the run API (runtime.md §5).

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
from typing import TYPE_CHECKING, Any

from sengen.runtime.kernel.buses import BusSpace, Source
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config.models import QueueConfig
from sengen.runtime.kernel.discovery import (
    Batch,
    Discovery,
    Log,
    Publisher,
    Subscription,
    build_query,
)
from sengen.runtime.kernel.query import Query
from sengen.runtime.kernel.sessions import Sessions
from sengen.runtime.objects.calls import completed
from sengen.runtime.objects.context import CALLS, Context
from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.objects.objects import NativeObject, gone
from sengen.runtime.time.realtime import LoopMonitoring, RealTimeLoop
from sengen.runtime.time.stepping import KernelClock, SteppedLoop
from sengen.runtime.time.tracing import Tracer

if TYPE_CHECKING:
    from sengen.runtime.kernel.kernel import Kernel
    from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo, KernelMonitoringInfo

_log = logging.getLogger("sengen.kernel")

EXIT_COMPONENT_FAILED = 3


class Runner:
    """A component inside the kernel: state, thread, cycle, subscriptions and publications."""

    def __init__(
        self,
        kernel: Kernel,
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
        for obj in list(self.context.objects):
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
        lanes = self.context._queues[CALLS]
        for function, args in [entry for key in sorted(lanes) for entry in lanes[key]]:
            target = getattr(function, "__self__", None)
            if isinstance(target, NativeObject) and function.__name__ == "_execute":
                _, _, call, caller = args
                completed(caller, call, None, gone(target._address))

    # -- one cycle -------------------------------------------------------------------------------

    def drain(self, cycle_time: int) -> int:
        """Returns the thread CPU spent executing the work queue."""
        context = self.context
        self.cycle_time = context.time = cycle_time
        self.discovery.apply_arrivals()
        context.refresh()
        before = time.thread_time_ns()
        context.run_queue()
        return time.thread_time_ns() - before

    def update(self, cycle_time: int = 0) -> None:
        api = self.api
        for obj in tuple(self.context.objects):
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


class RunApi:
    """What a component, its hooks and its objects' ``update(api)`` see (runtime.md §5.3)."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self.logger = logging.getLogger(f"sengen.component.{runner.name}")

    @property
    def name(self) -> str:
        return self._runner.name

    # -- time ------------------------------------------------------------------------------------

    def get_time(self) -> TimeStamp:
        """The cycle time: constant during a cycle."""
        return TimeStamp(self._runner.cycle_time)

    def get_start_time(self) -> TimeStamp:
        return TimeStamp(self._runner.start_time)

    def get_target_cycle_time(self) -> Duration | None:
        runner = self._runner
        return Duration(runner.period) if runner.in_loop and runner.period else None

    # -- the cycle -------------------------------------------------------------------------------

    def exec_loop(
        self,
        period: Duration | int,
        work: Callable[[], None] | None = None,
        *,
        log_overruns: bool = True,
    ) -> None:
        """Cycle drain → update (objects, then ``work``) → commit every ``period`` until stop."""
        runner = self._runner
        self._own_thread("exec_loop")
        ns = period.ns if isinstance(period, Duration) else int(period)
        if ns < 1:
            raise ValueError(f"invalid period {ns} ns for component '{runner.name}'")
        runner.exec_loop(ns, work, log_overruns)

    def drain_inputs(self) -> None:
        """Self-driven: the drain of a cycle whose time is the kernel's time now."""
        runner = self._runner
        self._own_thread("drain_inputs")
        runner.self_driven = True  # never stepped: the first step does not wait for it
        clock = runner.kernel.clock
        stepped = clock is not None and not runner.component.is_real_time_only()
        begin = time.perf_counter_ns()
        runner.drain(clock.time if clock is not None and stepped else time.time_ns())
        self._zone("drain", begin)

    def update(self) -> None:
        """Self-driven: the objects' ``update()``."""
        self._own_thread("update")
        begin = time.perf_counter_ns()
        self._runner.update()
        self._zone("update", begin)

    def commit(self, time_ns: TimeStamp | int | None = None) -> None:
        """Self-driven: commit, stamped with ``time_ns`` when given (``get_time()`` stays the
        kernel's)."""
        runner = self._runner
        self._own_thread("commit")
        if runner.in_loop:
            raise RuntimeError("commit() cannot be called inside exec_loop")
        begin = time.perf_counter_ns()
        stamp = (
            runner.cycle_time
            if time_ns is None
            else int(time_ns.ns if isinstance(time_ns, TimeStamp) else time_ns)
        )
        runner.commit(stamp)
        runner.context.time = runner.cycle_time
        self._zone("commit", begin)

    def _zone(self, zone: str, begin: int) -> None:
        tracers = self._runner.kernel.tracers
        if tracers:
            runner = self._runner
            tracers.zone(runner.name, zone, begin, time.perf_counter_ns(), runner.cycle_time)

    def _own_thread(self, what: str) -> None:
        thread = self._runner.thread
        if thread is None or thread.ident != threading.get_ident():
            raise RuntimeError(f"{what}() must be called from the component's own thread")

    def stop_requested(self) -> bool:
        return self._runner.stop.is_set()

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Block the component's thread until it is asked to stop (a component without a loop)."""
        runner = self._runner
        runner.parked = timeout is None
        try:
            return runner.stop.wait(timeout)
        finally:
            runner.parked = False

    def request_kernel_stop(self, code: int = 0) -> None:
        self._runner.kernel.request_stop(code)

    # -- configuration ---------------------------------------------------------------------------

    def get_config(self) -> dict[str, object]:
        return dict(self._runner.config)

    def get_app_name(self) -> str:
        return self._runner.kernel.app_name

    def install_tracer(self, tracer: Tracer) -> None:
        """Only from ``preload``."""
        runner = self._runner
        if runner.state != "preloading":
            raise RuntimeError("tracers can only be installed from a component's preload()")
        runner.kernel.tracers.install(tracer)

    # -- buses and subscriptions -----------------------------------------------------------------

    def get_source(self, bus: str) -> Source:
        return self._runner.source(bus)

    def sessions(self) -> Sessions:
        """The sessions and buses detected, with callbacks for changes (in drain)."""
        watch = Sessions(self._runner.kernel.space.directory, self._runner.context)
        self._runner.watches.append(watch)
        return watch

    @property
    def bus_space(self) -> BusSpace:
        """Every bus of the process: for shipped components that bridge them (the transport)."""
        return self._runner.kernel.space

    @property
    def kernel_clock(self) -> KernelClock | None:
        """The kernel's clock under virtual time: for the transport, which takes part in
        stepping across processes (runtime.md §6.8)."""
        return self._runner.kernel.clock

    def select(
        self,
        query: Query | str,
        on_added: Batch | None = None,
        on_removed: Batch | None = None,
        *,
        log: Log | None = None,
    ) -> Subscription:
        """Subscribe to a full ``SELECT … FROM bus [WHERE …]``."""
        return self._runner.discovery.subscribe(query, on_added, on_removed, log)

    def select_all_from(
        self,
        cls: Any,
        bus: str,
        on_added: Batch | None = None,
        on_removed: Batch | None = None,
    ) -> Subscription:
        return self.select(build_query(cls, bus), on_added, on_removed)

    def select_from(
        self,
        cls: Any,
        bus: str,
        where: str,
        on_added: Batch | None = None,
        on_removed: Batch | None = None,
    ) -> Subscription:
        return self.select(build_query(cls, bus, where), on_added, on_removed)

    # -- monitoring ------------------------------------------------------------------------------

    def fetch_component_monitoring_info(self) -> ComponentMonitoringInfo:
        return self._runner.monitoring()

    def fetch_monitoring_info(self) -> KernelMonitoringInfo:
        return self._runner.kernel.monitoring()
