"""``examples/timer``: a checked writable property set through a proxy, and a countdown by the
elapsed-time idiom (``now - last``, the first cycle contributing nothing; the requirements'
*The time a component sees*), exact when stepped and when real-time cycles are skipped.
"""

from __future__ import annotations

import importlib
import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from example_projects import clean_log, copy_example, importable, matches, sengen_run

from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.testing import TestKernel

MS = 1_000_000


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("timer", tmp_path_factory.mktemp("timer"), "codegen_settings.json")
    with importable(folder):
        yield folder


@pytest.fixture(scope="module")
def impl(example: Path) -> ModuleType:
    return importlib.import_module("timer_impl")


def test_timer_yaml_runs_for_one_second(example: Path) -> None:
    ran = sengen_run(example, "timer.yaml", "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    (refused,) = matches(r"INFO sengen\.component\.cook: chef: the timer refused (.*)", lines)
    assert refused[1] == "a shorter program: ValueError: invalid value for property program"
    (ready,) = matches(
        r"INFO sengen\.component\.cook: chef: spaghetti is ready after 500 ms"
        r" \(heard at ([0-9.]+) s\)",
        lines,
    )
    # Switched on after the cook's first commit, expired 0.5 s later, heard in a later cycle
    # of the cook, before the run ended.
    assert 0.5 < float(ready[1]) < 2.0
    assert lines.index(refused[0]) < lines.index(ready[0])


def test_stepped_the_timer_expires_exactly_one_program_after_it_was_switched_on(
    example: Path,
) -> None:
    with TestKernel.from_file(example / "timer.yaml") as tk:
        # Typed Any: the generated classes are not there when mypy checks this file.
        timer: Any = tk.object("local.kitchen.oven_timer")
        chef: Any = tk.object("local.cooks.chef")
        # The cook (10 Hz) finds the timer at 0.1 s and sends both setters at its commit; the
        # timer (20 Hz) runs them in its drain at 0.15 s: on from then, for 500 ms.
        tk.advance("200 ms")  # t = 0 … 0.15 s
        assert (timer.state.name, timer.program) == ("on", Duration(500 * MS))
        assert timer.countdown == Duration(0)  # it showed the old program, 0, until then
        tk.step()  # t = 0.2 s: the first cycle that sees it on counts 50 ms from the program
        assert timer.countdown == Duration(450 * MS)
        tk.advance("400 ms")  # t = 0.25 … 0.6 s
        assert (timer.state.name, timer.countdown) == ("on", Duration(50 * MS))
        # The shorter program sent at 0.2 s was refused at 0.25 s, the answer heard at 0.3 s.
        assert (timer.program, chef.refusals, chef.ready) == (Duration(500 * MS), 1, False)
        tk.step()  # t = 0.65 s = 0.15 s + 500 ms: zero, expired, off
        assert (timer.state.name, timer.countdown) == ("off", Duration(0))
        tk.advance("100 ms")  # t = 0.7 s: the cook hears it; the timer shows its program again
        assert chef.ready is True
        assert timer.countdown == Duration(500 * MS)


def test_the_program_is_refused_while_on_and_when_negative(example: Path, impl: ModuleType) -> None:
    with TestKernel.from_yaml(
        "build:\n"
        "  - name: kitchen\n"
        "    freqHz: 10\n"
        "    imports: [gen.timer, timer_impl]\n"
        "    objects:\n"
        "      - {name: t, class: timer.KitchenTimer, bus: local.kitchen, program: 1 s}\n"
    ) as tk:
        timer: Any = tk.object("local.kitchen.t")
        with pytest.raises(ValueError, match="invalid value for property program"):
            timer.set_next_program(Duration(-1))
        timer.set_next_program(Duration.parse("2 s"))  # off: accepted
        timer.set_next_state(impl.Running.on)
        with pytest.raises(ValueError, match="invalid value for property program"):
            timer.set_next_program(Duration.parse("3 s"))  # a switch-on is pending
        tk.step()
        assert (timer.state.name, timer.program) == ("on", Duration.parse("2 s"))
        with pytest.raises(ValueError, match="invalid value for property program"):
            timer.set_next_program(Duration.parse("3 s"))  # on


class StallingKitchen(Component):
    """A real-time component at 20 Hz owning one timer, on from the start: every third cycle
    stalls for 120 ms, so the two or three cycles after it are skipped. Records every cycle's
    time, countdown and state, and stops the kernel once the timer is off."""

    PERIOD = 50 * MS

    def __init__(self, timer: Any) -> None:
        self.timer = timer
        self.cycles: list[tuple[int, int, str]] = []
        self.expired = False

    def run(self, api: RunApi) -> None:
        api.get_source("local.kitchen").add(self.timer)
        api.exec_loop(self.PERIOD, lambda: self._work(api), log_overruns=False)

    def _work(self, api: RunApi) -> None:
        if self.expired:  # cycles may still run while the kernel stops
            return
        timer = self.timer
        state = timer.get_next_state().name
        self.cycles.append((api.get_time().ns, timer.get_next_countdown().ns, state))
        if state == "off":
            self.expired = True
            api.request_kernel_stop(0)
        elif len(self.cycles) % 3 == 1:
            time.sleep(0.12)


def test_under_real_time_skipped_cycles_count_in_full(impl: ModuleType) -> None:
    program = 600 * MS
    timer = impl.KitchenTimer.from_config("t", {"program": "600 ms", "state": "on"})
    kitchen = StallingKitchen(timer)
    kernel = Kernel(load_config_text(""), [("kitchen", kitchen, 1)])
    assert kernel.run(Duration.parse("5 s")) == 0
    times = [t for t, _, _ in kitchen.cycles]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # Cycles were skipped (the schedule keeps whole periods)...
    assert all(gap % StallingKitchen.PERIOD == 0 for gap in gaps)
    assert max(gaps) >= 3 * StallingKitchen.PERIOD
    # ...and yet every cycle's countdown is the program minus the time since the first cycle
    # (which counted nothing), exactly, until the first cycle at or past the program's end.
    start = times[0]
    for at, countdown, state in kitchen.cycles:
        expected = max(program - (at - start), 0)
        assert (countdown, state) == (expected, "on" if expected else "off"), kitchen.cycles
    assert kitchen.cycles[-1][0] - start >= program > kitchen.cycles[-2][0] - start
