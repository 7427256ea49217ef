"""Shared by the kernel tests: a small generated STL package with implementations, and a probe
component that runs test code inside the kernel's cycle.

The probe is the test's hands inside a running kernel: ``steps`` are called once per cycle, in
the probe's update, with the run API; a step returns True when it is done, and the probe stops
the kernel once every step is done. Every run is bounded by the ``until`` the test gives.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import sengen
from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

STL = """\
package kbus;

enum Mode : u8 { idle, automatic, manual }

struct Limits
{
  low  : f64,
  high : f64
}

class Sensor
{
  var serial   : u32 [static];
  var reading  : f64;
  var setpoint : f64 [writable];
  var mode     : Mode [writable];
  var limits   : Limits [confirmed];
  var a        : i32;
  var b        : i32;

  event ticked(count: u32) [confirmed];
  event noted(text: string);
  event pinged(count: u32) [bestEffort];

  fn add(x: i32, y: i32) -> i64;
  fn peek() -> f64 [const];
  fn fail(message: string) -> string;
  fn twice(x: i32) -> i32 [local];
}

class Probe : extends Sensor
{
  var extra : i32;
}
"""

IMPLEMENTATIONS = """\
from typing import Any

from {root}.kbus import SensorBase


class Counting(SensorBase):
    '''Counts its cycles in ``reading`` and emits ``ticked`` with each count.'''

    def update(self, api: Any) -> None:
        count = int(self.reading) + 1
        self.set_next_reading(float(count))
        self.set_next_a(count)
        self.set_next_b(count)
        self.events.ticked.emit(count)
        self.events.noted.emit(str(count))
        self.events.pinged.emit(count)

    def add_impl(self, x: int, y: int) -> int:
        return x + y

    def peek_impl(self) -> float:
        return self.reading

    def fail_impl(self, message: str) -> str:
        raise ValueError(message)

    def twice_impl(self, x: int) -> int:
        return 2 * x


class Still(Counting):
    '''Changes nothing by itself.'''

    def update(self, api: Any) -> None:
        pass


class Stubborn(Still):
    '''Writes its setpoint back to -1 in every update.'''

    def update(self, api: Any) -> None:
        self.set_next_setpoint(-1.0)
"""

Step = Callable[[RunApi], bool]


def make_package(
    folder: Path,
    root: str,
    package: str = "kbus",
    stl: str = STL,
    implementations: str = IMPLEMENTATIONS,
) -> Iterator[ModuleType]:
    """Generate STL ``package`` (``kbus`` by default) into ``folder/<root>`` with
    ``<root>_impls.py`` beside it, on sys.path; yields the implementation module. Each test
    module uses its own ``root``: one registry scope per generated tree, so trees never clash."""
    (folder / "stl" / package).mkdir(parents=True)
    (folder / "stl" / package / f"{package}.stl").write_text(stl)
    assert sengen.generate([folder / "stl"], output=folder / root).ok
    (folder / f"{root}_impls.py").write_text(implementations.replace("{root}", root))
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(f"{root}_impls")
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == f"{root}_impls" or n.startswith(root)]:
            del sys.modules[name]


class Probe(Component):
    """Runs ``setup`` once on its thread, then ``steps`` in order, one call per cycle."""

    def __init__(
        self,
        steps: list[Step],
        setup: Callable[[RunApi], None] | None = None,
        freq_hz: float = 200,
        stop_when_done: bool = True,
    ) -> None:
        self.steps = list(steps)
        self.setup = setup
        self.period = round(1e9 / freq_hz)
        self.stop_when_done = stop_when_done
        self.done = False
        self.in_update = False  # True while the steps run: discovery must never see it
        self.api: RunApi | None = None

    def run(self, api: RunApi) -> None:
        self.api = api
        if self.setup is not None:
            self.setup(api)
        api.exec_loop(self.period, lambda: self._work(api))

    def _work(self, api: RunApi) -> None:
        self.in_update = True
        try:
            while self.steps and self.steps[0](api):
                self.steps.pop(0)
        finally:
            self.in_update = False
        if not self.steps and not self.done:
            self.done = True
            if self.stop_when_done:
                api.request_kernel_stop(0)


def run_kernel(
    yaml_text: str,
    components: Sequence[tuple[str, Component, int]],
    until: str = "10 s",
) -> tuple[Kernel, int]:
    kernel = Kernel(load_config_text(yaml_text), components)
    code = kernel.run(Duration.parse(until))
    return kernel, code


def producer(
    impls: ModuleType, objects: str, freq_hz: float = 100, name: str = "producer", group: int = 1
) -> str:
    """A ``build:`` entry of ``Counting``/``Still`` sensors (from ``impls``) on ``local.b``."""
    root = impls.__name__.removesuffix("_impls")
    return (
        f"  - name: {name}\n"
        f"    group: {group}\n"
        f"    freqHz: {freq_hz}\n"
        f"    imports: [{root}.kbus, {impls.__name__}]\n"
        "    objects:\n" + "".join(f"      - {line}\n" for line in objects.splitlines())
    )


def values_of(objects: Any) -> list[str]:
    return sorted(o.name for o in objects)
