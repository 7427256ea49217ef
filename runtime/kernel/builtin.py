"""The internal ``kernel`` component and its ``api`` object (runtime.md §2.6).

The component is work-driven: it cycles whenever work reaches its queue (so calls on its objects
are served at once) and at least every 500 ms. With no schedule to measure against it reports
every cycle field as None (§7.2).
"""

from __future__ import annotations

import platform
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import Config
from sengen.runtime.kernel.host import Host
from sengen.runtime.objects.calls import Promise
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.objects.meta import QuantityMeta
from sengen.runtime.objects.objects import Object
from sengen.runtime.objects.registry import registry
from sengen.runtime.sen.kernel.basic_types import BuildInfo, KernelParams, Names, RunMode
from sengen.runtime.sen.kernel.kernel_objects import (
    KernelApiBase,
    VirtualKernelClockBase,
    VirtualMasterClockBase,
)
from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo, KernelMonitoringInfo
from sengen.runtime.time.stepping import Clock, KernelClock, Stepper

if TYPE_CHECKING:
    from sengen.runtime.kernel.api import RunApi
    from sengen.runtime.kernel.runner import Runner
    from sengen.runtime.kernel.subscriptions import Subscription

IDLE_CYCLE = 0.5  # seconds between cycles without work
PUBLISH_EVERY = 0.02  # seconds: the clocks' published time follows the steps at most this often


class KernelHost(Host, Protocol):
    """The kernel as its internal component uses it: by this protocol rather than by its class,
    which would close an import cycle (the kernel module imports this one)."""

    @property
    def config(self) -> Config: ...

    def master_clocks(self) -> list[Clock]: ...

    def runner(self, name: str) -> Runner: ...


def _throttled(wake: Callable[[], None]) -> Callable[[], None]:
    """``wake`` at most every PUBLISH_EVERY: a cycle of the kernel component per step would cost
    more than the step itself."""
    last = [0.0]

    def maybe() -> None:
        now = time.monotonic()
        if now - last[0] >= PUBLISH_EVERY:
            last[0] = now
            wake()

    return maybe


class KernelApiObject(KernelApiBase):
    """``sen.kernel.KernelApi`` as the kernel publishes it."""

    __slots__ = ("_kernel",)
    _kernel: KernelHost

    def __init__(self, name: str, kernel: KernelHost) -> None:
        from sengen.version import __version__

        python = f"{platform.python_implementation()} {platform.python_version()}"
        super().__init__(name, BuildInfo(__version__, python))
        object.__setattr__(self, "_kernel", kernel)

    def shutdown_impl(self) -> None:
        self._kernel.request_stop(0)

    def get_types_impl(self) -> Names:
        names: set[str] = set()
        for scope in registry.scopes():
            types, classes = registry.entries(scope)
            names.update(t.qualified_name for t in types)
            names.update(c.meta.qualified_name for c in classes)
        return tuple(sorted(names))

    def get_config_impl(self) -> KernelParams:
        kernel = self._kernel.config.kernel
        return KernelParams(
            RunMode[kernel.run_mode],
            kernel.clock_master,
            kernel.clock_name,
            kernel.effective_clock_bus,
        )

    def get_units_impl(self) -> Names:
        units: set[str] = set()
        for scope in registry.scopes():
            for meta in registry.entries(scope)[0]:
                if isinstance(meta, QuantityMeta) and meta.unit is not None:
                    units.add(meta.unit.name)
        return tuple(sorted(units))

    def fetch_component_monitoring_info_impl(self) -> ComponentMonitoringInfo:
        return self._kernel.runner("kernel").monitoring()

    def fetch_monitoring_info_impl(self) -> KernelMonitoringInfo:
        return self._kernel.monitoring()


class KernelClockObject(VirtualKernelClockBase):
    """``sen.kernel.VirtualKernelClock``: the kernel clock, callable by anyone (runtime.md §6.5);
    its ``time`` follows the clock at each cycle of the kernel component."""

    __slots__ = ("_clock",)
    _clock: KernelClock

    def __init__(self, name: str, clock: KernelClock) -> None:
        super().__init__(name)
        object.__setattr__(self, "_clock", clock)

    def _driven(self) -> KernelClock:
        if self._clock.self_stepping:
            raise RuntimeError("kernel is self-stepping (virtualTimeRunning)")
        return self._clock

    def process_no_flush_impl(self, delta: Duration) -> Duration:
        return Duration(self._driven().process_no_flush(delta.ns))

    def flush_outputs_impl(self) -> Duration | None:
        found = self._driven().flush_outputs()
        return None if found is None else Duration(found)

    def publish(self) -> None:
        now = TimeStamp(self._clock.time)
        if now != self.time:
            self.set_next_time(now)


class MasterClockObject(VirtualMasterClockBase):
    """``sen.kernel.VirtualMasterClock``: steps every kernel clock found on the clock bus; the
    clocks of this process are called directly (runtime.md §6.3)."""

    __slots__ = ("stepper",)
    stepper: Stepper

    def __init__(self, name: str, clocks: Callable[[], Sequence[Clock]]) -> None:
        super().__init__(name)
        object.__setattr__(self, "stepper", Stepper(clocks))

    def step_impl(self, promise: Promise[Duration]) -> None:
        promise.set_result(Duration(self.stepper.step()))

    def steps_impl(self, count: int, promise: Promise[Duration]) -> None:
        promise.set_result(Duration(self.stepper.steps(count)))

    def advance_time_impl(self, duration: Duration, promise: Promise[Duration]) -> None:
        promise.set_result(Duration(self.stepper.advance_time(duration.ns)))

    def publish(self) -> None:
        now = TimeStamp(self.stepper.time)
        if now != self.time:
            self.set_next_time(now)


class KernelComponent(Component):
    """Publishes ``api`` on ``kernel.bus`` (and the clocks in virtual modes) and serves calls
    as they arrive; under ``virtualTimeRunning`` it steps its own kernel as fast as it can."""

    def __init__(self, kernel: KernelHost) -> None:
        self._kernel = kernel
        self.clock_object: KernelClockObject | None = None
        self.master: MasterClockObject | None = None
        self._clocks: Subscription | None = None

    def is_real_time_only(self) -> bool:
        return True

    def run(self, api: RunApi) -> None:
        context = Context.current()
        assert context is not None
        wakeup = context.wakeup = threading.Event()
        kernel = self._kernel
        settings = kernel.config.kernel
        api.get_source(settings.bus).add(KernelApiObject("api", kernel))
        clock = kernel.clock
        if clock is not None:
            self._publish_clocks(api, clock)
            clock.after_flush = _throttled(wakeup.set)  # publish the new time soon
        running = clock is not None and clock.self_stepping
        pending: int | None = 0
        while not api.stop_requested():
            wakeup.clear()
            api.drain_inputs()
            api.update()
            for published in (self.clock_object, self.master):
                if published is not None:
                    published.publish()
            api.commit()
            if running and clock is not None:
                pending = self._self_step(clock, pending)
                continue
            wakeup.wait(IDLE_CYCLE)

    def _publish_clocks(self, api: RunApi, clock: KernelClock) -> None:
        settings = self._kernel.config.kernel
        bus = settings.effective_clock_bus
        clock_object = KernelClockObject(settings.clock_name, clock)
        api.get_source(bus).add(clock_object)
        if settings.clock_master:
            self._clocks = api.select(f"SELECT sen.kernel.VirtualKernelClock FROM {bus}")
            self.master = MasterClockObject("master", self._kernel.master_clocks)
            api.get_source(bus).add(self.master)
        # Last: ``Kernel.wait_ready`` takes it as the sign that both are there, so that a
        # driver's ``stepper()`` is the master's.
        self.clock_object = clock_object

    def clock_proxies(self) -> list[Object]:
        """The kernel clocks the master's subscription found, this process's own included."""
        return self._clocks.objects if self._clocks is not None else []

    def _self_step(self, clock: KernelClock, pending: int | None) -> int | None:
        """virtualTimeRunning: one step of this kernel; None when nothing is stepped yet."""
        if pending is None:
            pending = clock.flush_outputs()
            if pending is None:
                clock.stepped_changed.wait(IDLE_CYCLE / 10)
                clock.stepped_changed.clear()
                return None
        if clock.limit is not None and clock.time + pending >= clock.limit:
            clock.reached.set()  # the cycles before the limit ran, as advanceTime runs them
            clock.stepped_changed.wait(IDLE_CYCLE / 10)
            clock.stepped_changed.clear()
            return pending
        clock.process_no_flush(pending)
        return clock.flush_outputs()
