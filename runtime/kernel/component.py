"""The component interface (runtime.md §2.1): what a user writes to run code in the kernel.

A component overrides ``run`` and any of the other hooks. Every hook receives the component's
:class:`~sengen.runtime.kernel.runner.RunApi`; ``run`` executes on the component's own thread and
usually publishes objects, subscribes, then calls ``api.exec_loop(period, work)`` until stop.
A pydantic model in ``config_model`` validates the component's own configuration keys at
preload, with errors in the usual ``<file>: <key path>: <message>`` form; the component is then
constructed with the validated model, otherwise without arguments (``api.get_config()`` gives
the raw entry either way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel

from sengen.runtime.objects.duration import Duration

if TYPE_CHECKING:
    from sengen.runtime.kernel.api import RunApi


_RETRY_HINT = Duration(10**8)


@dataclass(frozen=True)
class Retry:
    """Returned by ``init``: call it again after about ``wait_hint``."""

    wait_hint: Duration = _RETRY_HINT


class Component:
    """Base class of user and shipped components; every hook but ``run`` is optional."""

    config_model: ClassVar[type[BaseModel] | None] = None
    # Keep the work queue and subscriptions after stopping, for one last drain once every
    # other component has stopped (the recorder, runtime.md §2.3).
    drains_last: ClassVar[bool] = False

    def preload(self, api: RunApi) -> None:
        """Main thread, before anything loads: register types, install a tracer."""

    def load(self, api: RunApi) -> None:
        """Main thread: read and check the configuration."""

    def init(self, api: RunApi) -> Retry | None:
        """Main thread: acquire resources; return :class:`Retry` to be called again."""
        return None

    def run(self, api: RunApi) -> None:
        """The component's own thread: publish, subscribe, then usually ``api.exec_loop``."""
        raise NotImplementedError(f"component {type(self).__name__} does not implement run()")

    def unload(self, api: RunApi) -> None:
        """Main thread, after the component stopped: release resources."""

    def is_real_time_only(self) -> bool:
        """``True`` keeps the component on the wall clock under virtual time."""
        return False
