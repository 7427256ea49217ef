"""The test kernel for pytest (runtime.md §10.1): a kernel that is always stepped, for testing
components and their objects one cycle at a time.

    with TestKernel.from_yaml(CONFIG) as tk:
        tk.step()                                  # every component due at t = 0 runs once
        assert tk.object("local.demo.counter").count == 1

It starts every group at construction and stops at :meth:`TestKernel.close` (or the end of the
``with`` block). Between steps the components are parked, so test code may read their objects
and call ``set_next_*`` and methods on them; what it writes is committed at the owner's next
step. An exception raised in a component during a step is raised again by :meth:`step`. The
pytest plugin :mod:`sengen.testing.pytest_plugin` adds a ``test_kernel`` fixture.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import Config, load_config, load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.kernel.processes import ProcessInfo
from sengen.runtime.objects.calls import Call
from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.objects.objects import NativeObject
from sengen.runtime.sen.kernel.monitoring import KernelMonitoringInfo
from sengen.stl.project import config_import_path

__all__ = ["TestKernel"]

_log = logging.getLogger("sengen.kernel")


class TestKernel:
    """A kernel under ``virtualTime`` driven by the test (runtime.md §10.1)."""

    __test__ = False  # not a test class, whatever pytest's collection rules say

    def __init__(
        self,
        components: Sequence[tuple[str, Component] | tuple[str, Component, int]] = (),
        config: Config | None = None,
    ) -> None:
        """``components`` are (name, component[, group]); ``config`` a loaded configuration."""
        config = config if config is not None else load_config_text("")
        # Only a runMode the configuration wrote is worth a warning: the model's default
        # (realTime) is what nearly every test configuration leaves unset.
        kernel = config.kernel
        if "run_mode" in kernel.model_fields_set and kernel.run_mode != "virtualTime":
            _log.warning(
                "%s: kernel.runMode: '%s' is run as 'virtualTime' by the test kernel",
                config.source,
                kernel.run_mode,
            )
        kernel.run_mode = "virtualTime"
        parts = [(c[0], c[1], c[2] if len(c) == 3 else 1) for c in components]
        self.kernel = Kernel(config, parts)
        self.kernel.parked_writes = True
        self._stepper = self.kernel.stepper()
        self._closed = False
        if not self.kernel.start():
            self.close()
            raise RuntimeError("the test kernel did not start: see the log for the error")
        self.kernel.wait_ready()
        self._raise_failures()

    @classmethod
    def from_yaml(cls, text: str, components: Sequence[Any] = ()) -> TestKernel:
        """A configuration given as YAML text (never a path)."""
        return cls(components, load_config_text(text))

    @classmethod
    def from_file(cls, path: str | Path, components: Sequence[Any] = ()) -> TestKernel:
        """A configuration file; its folder (and the project's) goes on ``sys.path``."""
        config_import_path(Path(path))
        return cls(components, load_config(Path(path)))

    # -- stepping --------------------------------------------------------------------------------

    def step(self, n: int = 1) -> None:
        """Exactly ``n`` master steps, synchronously."""
        for _ in range(n):
            self._stepper.step()
            self._raise_failures()

    async def astep(self, n: int = 1) -> None:
        """:meth:`step` for asyncio tests: the steps run on a worker thread."""
        import asyncio

        await asyncio.to_thread(self.step, n)

    def advance(self, duration: Duration | str) -> None:
        """As the master's ``advanceTime``: every step due in ``[time, time + duration)``."""
        span = Duration.parse(duration) if isinstance(duration, str) else duration
        self._stepper.advance_time(span.ns, cancel=self._failed)
        self._raise_failures()

    def get_time(self) -> TimeStamp:
        """The master's time: when the next cycle runs (after step k of a 1 Hz component, k s)."""
        return TimeStamp(self._stepper.time)

    def run_until(self, predicate: Callable[[], bool], max_steps: int = 1000) -> int:
        """Step until ``predicate()`` holds; the number of steps taken. Raises TimeoutError when
        it still does not after ``max_steps``."""
        for taken in range(max_steps + 1):
            if predicate():
                return taken
            if taken < max_steps:
                self.step()
        raise TimeoutError(f"condition not met within {max_steps} steps")

    def call(self, obj: Any, method: str, *args: Any, max_steps: int = 100) -> Any:
        """Call ``method`` on ``obj`` and step until its result arrives; the result (or the
        call's error, raised)."""
        handle: Call[Any] = getattr(obj, method)(*args)
        self.run_until(handle.done, max_steps)
        return handle.result()

    # -- inspection ------------------------------------------------------------------------------

    def object(self, address: str) -> NativeObject:
        """The native object at ``session.bus.name`` (its committed values)."""
        session, _, rest = address.partition(".")
        bus, _, name = rest.partition(".")
        for obj in self.kernel.objects(f"{session}.{bus}"):
            if obj.name == name:
                return obj
        raise LookupError(f"no object '{name}' on bus '{session}.{bus}'")

    def objects(self, bus: str) -> list[NativeObject]:
        return self.kernel.objects(bus)

    def monitoring(self) -> KernelMonitoringInfo:
        return self.kernel.monitoring()

    def wait_for(
        self,
        process: str | None = None,
        component: str | None = None,
        object: str | None = None,  # as Kernel.wait_for
        timeout: float = 10.0,
    ) -> ProcessInfo:
        """:meth:`Kernel.wait_for`: until the transport sees another process, one of its
        components or an object it owns (raises ``NotSeen`` naming what was not seen)."""
        return self.kernel.wait_for(process, component, object, timeout)

    # -- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every component (idempotent)."""
        if not self._closed:
            self._closed = True
            self.kernel.shutdown()

    def __enter__(self) -> TestKernel:
        return self

    def __exit__(self, *_: Any) -> None:  # (`object` is a method name here)
        self.close()

    def _failed(self) -> bool:
        return any(r.failure is not None for r in self.kernel.runners)

    def _raise_failures(self) -> None:
        for runner in self.kernel.runners:
            failure = runner.failure
            if failure is not None:
                runner.failure = None
                raise failure
