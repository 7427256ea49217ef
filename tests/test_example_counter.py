"""``examples/counter``: static properties from the configuration, a dynamic property written
every cycle, a const method called asynchronously and an event (runtime.md §3.5-§3.9).

The configuration runs headless for one second with ``sengen run``; the test kernel then steps
it with a listener component of the test's own, where every time and value is exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from example_projects import clean_log, copy_example, importable, matches, sengen_run

from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.objects.calls import Call
from sengen.runtime.objects.events import EventInfo
from sengen.testing import TestKernel

MS = 1_000_000


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("counter", tmp_path_factory.mktemp("counter"))
    with importable(folder):
        yield folder


class Listener(Component):
    """At 10 Hz, as the counters: hears every counter's events and asks each counter, once, to
    describe itself."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, int, int, int]] = []  # (counter, reached, value, emitted at)
        self.described: list[tuple[str, int]] = []  # (description, received at)
        self.api: RunApi | None = None

    def run(self, api: RunApi) -> None:
        self.api = api
        api.select("SELECT counter.Counter FROM local.counters", self._found)
        api.exec_loop(Duration.from_hz(10))

    def _found(self, counters: list[Any]) -> None:
        for counter in counters:
            counter.events.milestone_reached.connect(
                partial(self._heard, counter.name), with_info=True
            )
            counter.describe(on_result=self._answered)

    def _heard(self, name: str, info: EventInfo, reached: int, value: int) -> None:
        self.heard.append((name, reached, value, info.creation_time))

    def _answered(self, call: Call[str]) -> None:
        assert self.api is not None
        self.described.append((call.result(), self.api.get_time().ns))


def test_counter_yaml_runs_for_one_second(example: Path) -> None:
    ran = sengen_run(example, "counter.yaml", "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    summaries = matches(
        r"INFO sengen\.component\.counters: (\w+) counts by (\d+) and is at (\d+)"
        r" after (\d+) cycle\(s\), (\d+) milestone\(s\)",
        clean_log(ran.stderr),
    )
    by_name = {m[1]: m for m in summaries}
    assert sorted(by_name) == ["by_one", "by_three"]
    one, three = by_name["by_one"], by_name["by_three"]
    # Both objects are cycled by one component: the same cycles, each adding its own step to
    # its own start (0 and the configured 100). A second of 10 Hz is 11 cycles from t = 0,
    # a few more when start-up, before the second begins, is slow.
    cycles = int(one[4])
    assert int(three[4]) == cycles and 0 < cycles <= 15
    assert (int(one[2]), int(one[3])) == (1, cycles)
    assert (int(three[2]), int(three[3])) == (3, 100 + 3 * cycles)
    # One event per multiple passed: 5 for by_one, 10 for by_three (from 100).
    assert int(one[5]) == cycles // 5
    assert int(three[5]) == (100 + 3 * cycles) // 10 - 10


def test_each_cycle_commits_one_step_and_the_listener_hears_each_milestone(
    example: Path,
) -> None:
    listener = Listener()
    with TestKernel.from_file(example / "counter.yaml", [("listener", listener)]) as tk:
        # Typed Any: the generated classes are not there when mypy checks this file.
        by_one: Any = tk.object("local.counters.by_one")
        by_three: Any = tk.object("local.counters.by_three")
        assert (by_one.value, by_three.value) == (0, 100)
        tk.step()  # t = 0: the first cycle; its writes are visible once it committed
        assert (by_one.value, by_three.value) == (1, 103)
        tk.advance("1 s")  # t = 0.1 s … 1.0 s
        assert (by_one.value, by_three.value) == (11, 133)
        # Emitted in the cycle that passed the multiple (cycle k runs at (k - 1) · 100 ms),
        # heard in the listener's next drain: everything emitted up to 0.9 s.
        assert listener.heard == [
            ("by_three", 110, 112, 300 * MS),
            ("by_one", 5, 5, 400 * MS),
            ("by_three", 120, 121, 600 * MS),
            ("by_one", 10, 10, 900 * MS),
            ("by_three", 130, 130, 900 * MS),
        ]
        # Called in the listener's drain at 0.1 s where it found the counters, sent at its
        # commit, run in the counters' drain at 0.2 s (reading what 0.1 s committed), answered
        # at their commit, received at the listener's drain at 0.3 s.
        assert listener.described == [
            ("by_one counts by 1 and is at 2", 300 * MS),
            ("by_three counts by 3 and is at 106", 300 * MS),
        ]
        assert tk.call(by_three, "describe") == "by_three counts by 3 and is at 133"
