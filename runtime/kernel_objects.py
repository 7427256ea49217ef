"""The internal ``kernel`` component and its ``api`` object (runtime.md §2.6).

The component is work-driven: it cycles whenever work reaches its queue (so calls on its objects
are served at once) and at least every 500 ms. With no schedule to measure against it reports
every cycle field as None (§7.2).
"""

from __future__ import annotations

import platform
import threading
from typing import TYPE_CHECKING

from sengen.runtime.component import Component
from sengen.runtime.context import Context
from sengen.runtime.meta import QuantityMeta
from sengen.runtime.registry import registry
from sengen.runtime.sen.kernel.basic_types import BuildInfo, KernelParams, Names, RunMode
from sengen.runtime.sen.kernel.kernel_objects import KernelApiBase
from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo, KernelMonitoringInfo

if TYPE_CHECKING:
    from sengen.runtime.kernel import Kernel
    from sengen.runtime.runner import RunApi

IDLE_CYCLE = 0.5  # seconds between cycles without work


class KernelApiObject(KernelApiBase):
    """``sen.kernel.KernelApi`` as the kernel publishes it."""

    __slots__ = ("_kernel",)
    _kernel: Kernel

    def __init__(self, name: str, kernel: Kernel) -> None:
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


class KernelComponent(Component):
    """Publishes ``api`` on ``kernel.bus`` and serves calls as they arrive."""

    def __init__(self, kernel: Kernel) -> None:
        self._kernel = kernel

    def is_real_time_only(self) -> bool:
        return True

    def run(self, api: RunApi) -> None:
        context = Context.current()
        assert context is not None
        wakeup = context.wakeup = threading.Event()
        api.get_source(self._kernel.config.kernel.bus).add(KernelApiObject("api", self._kernel))
        while not api.stop_requested():
            wakeup.clear()
            api.drain_inputs()
            api.update()
            api.commit()
            wakeup.wait(IDLE_CYCLE)
