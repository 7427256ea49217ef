"""The kernel as the runners it drives see it.

A component's :class:`~sengen.runtime.kernel.runner.Runner` and its run API hold the
:class:`~sengen.runtime.kernel.kernel.Kernel` that created them through :class:`Host` rather than
by its class: the kernel module imports the runner's, and a reference back would close an import
cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from sengen.runtime.kernel.buses import BusSpace
from sengen.runtime.time.stepping import KernelClock
from sengen.runtime.time.tracing import Tracers

if TYPE_CHECKING:
    from sengen.runtime.sen.kernel.monitoring import KernelMonitoringInfo


class Host(Protocol):
    """What a runner and its run API use of their kernel."""

    @property
    def app_name(self) -> str: ...

    @property
    def space(self) -> BusSpace: ...

    @property
    def clock(self) -> KernelClock | None:
        """The kernel clock under virtual time; None on the wall clock."""
        ...

    @property
    def tracers(self) -> Tracers: ...

    @property
    def parked_writes(self) -> bool:
        """Whether the test kernel writes to parked components' objects (runtime.md §3.4)."""
        ...

    def request_stop(self, code: int) -> None: ...

    def monitoring(self) -> KernelMonitoringInfo: ...
