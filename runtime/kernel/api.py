"""The run API: what a component, its hooks and its objects' ``update(api)`` see (runtime.md
§5.3), a view of the kernel's :class:`~sengen.runtime.kernel.runner.Runner` of that component."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from sengen.runtime.kernel.buses import BusSpace, Source
from sengen.runtime.kernel.host import Host
from sengen.runtime.kernel.query import Query
from sengen.runtime.kernel.sessions import Sessions
from sengen.runtime.kernel.subscriptions import Batch, Discovery, Log, Subscription, build_query
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.time.stepping import KernelClock
from sengen.runtime.time.tracing import Tracer

if TYPE_CHECKING:
    from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo, KernelMonitoringInfo


class _Clocked(Protocol):
    def is_real_time_only(self) -> bool: ...


class Driver(Protocol):
    """What the run API works with: the kernel's driver of its component
    (:class:`~sengen.runtime.kernel.runner.Runner`, which creates the API: by its class, the
    reference back would close an import cycle)."""

    name: str
    kernel: Host
    context: Context
    discovery: Discovery
    config: dict[str, object]
    state: str
    thread: threading.Thread | None
    stop: threading.Event
    cycle_time: int
    start_time: int
    period: int | None
    in_loop: bool
    parked: bool
    self_driven: bool
    watches: list[Sessions]

    @property
    def component(self) -> _Clocked: ...

    def exec_loop(
        self, period: int, work: Callable[[], None] | None, log_overruns: bool
    ) -> None: ...

    def drain(self, cycle_time: int) -> int: ...

    def update(self, cycle_time: int = 0) -> None: ...

    def commit(self, cycle_time: int) -> None: ...

    def source(self, bus: str) -> Source: ...

    def monitoring(self) -> ComponentMonitoringInfo: ...


class RunApi:
    """What a component, its hooks and its objects' ``update(api)`` see (runtime.md §5.3)."""

    def __init__(self, runner: Driver) -> None:
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
