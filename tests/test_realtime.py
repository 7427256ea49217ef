"""The real-time loop under an injected clock: exact schedules, skips and counters (runtime.md §5.5,
§7.1, §7.2), plus one run on the real clock with unambiguous outcomes."""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sengen.runtime.time.realtime import RealTimeLoop
from sengen.runtime.time.tracing import ChromeTracer, Tracers

P30 = 33_333_333  # 30 Hz
ANCHOR = 1_000_000_000_000


@dataclass
class Script:
    """A fake wall clock and thread CPU clock. Each cycle's work costs ``work[i]`` wall ns and
    ``spin[i]`` CPU ns; each wait oversleeps by ``late[i]`` ns; ``jump[i]`` moves the wall clock
    during the wait after cycle i (a clock correction)."""

    cycles: int
    work: dict[int, int] = field(default_factory=dict)
    spin: dict[int, int] = field(default_factory=dict)
    late: dict[int, int] = field(default_factory=dict)
    jump: dict[int, int] = field(default_factory=dict)
    now: int = ANCHOR
    cpu_now: int = 0
    index: int = 0
    times: list[int] = field(default_factory=list)
    waits: list[int] = field(default_factory=list)

    def clock(self) -> int:
        return self.now

    def cpu(self) -> int:
        return self.cpu_now

    def wait(self, seconds: float) -> None:
        asked = round(seconds * 1e9)
        self.waits.append(asked)
        # Each oversleep and jump happens once, on the first wait after its cycle.
        self.now += asked + self.late.pop(self.index - 1, 0) + self.jump.pop(self.index - 1, 0)


def run(
    script: Script, period: int = P30, log_overruns: bool = True, tracers: Tracers | None = None
) -> RealTimeLoop:
    loop = RealTimeLoop(
        "comp",
        period,
        clock=script.clock,
        cpu=script.cpu,
        wait=script.wait,
        log_overruns=log_overruns,
        tracers=tracers,
    )

    def drain(cycle_time: int) -> int:
        script.times.append(cycle_time)
        return 0

    def update(cycle_time: int) -> None:
        i = script.index
        script.now += script.work.get(i, 0) + script.spin.get(i, 0)
        script.cpu_now += script.spin.get(i, 0)
        script.index += 1
        if script.index >= script.cycles:
            loop.stop.set()

    loop.run(drain, update, lambda _: None, anchor=ANCHOR)
    return loop


def gaps(times: list[int]) -> list[int]:
    return [b - a for a, b in itertools.pairwise(times)]


def test_an_idle_component_runs_every_slot_from_its_anchor() -> None:
    script = Script(cycles=31)
    loop = run(script)
    assert script.times == [ANCHOR + k * P30 for k in range(31)]
    m = loop.snapshot()
    assert (m.overrun_count, m.missed_frame_count, m.overslept_count) == (0, 0, 0)
    assert all(wait <= P30 for wait in script.waits)


def test_spinning_past_two_periods_is_an_overrun_and_missed_frames() -> None:
    script = Script(cycles=6, spin={2: 2 * P30 + 5})
    loop = run(script)
    m = loop.snapshot()
    assert m.overrun_count == 1
    assert m.missed_frame_count == 2
    assert gaps(script.times) == [P30, P30, 3 * P30, P30, P30]
    assert m.worst is not None and m.worst.execution == 2 * P30 + 5


def test_sleeping_two_periods_misses_frames_without_an_overrun() -> None:
    script = Script(cycles=6, work={3: 2 * P30 + 5})
    loop = run(script)
    m = loop.snapshot()
    assert (m.overrun_count, m.missed_frame_count, m.overslept_count) == (0, 2, 0)
    assert gaps(script.times) == [P30, P30, P30, 3 * P30, P30]


def test_consecutive_times_differ_by_whole_periods_only() -> None:
    script = Script(cycles=40, work={i: (i * 7_919_993) % (3 * P30) for i in range(40)})
    run(script)
    assert all(gap > 0 and gap % P30 == 0 for gap in gaps(script.times))


def test_the_first_cycle_is_excluded_from_missed_frames_and_the_worst_cycle() -> None:
    script = Script(cycles=3, spin={0: 3 * P30})
    loop = run(script)
    m = loop.snapshot()
    assert m.overrun_count == 1  # its overrun counts
    assert m.missed_frame_count == 0
    assert m.worst is not None and m.worst.execution == 0
    assert gaps(script.times) == [3 * P30, P30]


def test_a_late_wake_up_within_one_period_only_starts_late() -> None:
    script = Script(cycles=4, late={1: P30 // 2})
    loop = run(script)
    m = loop.snapshot()
    assert m.overslept_count == 0 and m.missed_frame_count == 0
    assert gaps(script.times) == [P30, P30, P30]
    assert m.worst_start_delay == P30 // 2


def test_an_oversleep_skips_the_slots_that_ended_and_a_half_empty_one() -> None:
    # Woken 2.7 periods late: the slots that ended while asleep (2) are lost; then 0.7 of a
    # period is gone from the new slot (more than half), so it is dropped as well.
    script = Script(cycles=4, late={1: 2 * P30 + (7 * P30) // 10})
    loop = run(script)
    m = loop.snapshot()
    assert m.overslept_count == 3
    assert m.missed_frame_count == 0
    assert gaps(script.times) == [P30, 4 * P30, P30]


def test_a_backward_clock_correction_keeps_the_rate() -> None:
    script = Script(cycles=8, jump={3: -5 * P30})
    loop = run(script)
    assert gaps(script.times) == [P30] * 7
    m = loop.snapshot()
    assert (m.missed_frame_count, m.overslept_count) == (0, 0)
    assert m.last_start_delay is not None and m.last_start_delay < 0  # ahead of the clock


def test_a_forward_clock_correction_skips_cycles() -> None:
    script = Script(cycles=5, jump={1: 10 * P30})
    loop = run(script)
    m = loop.snapshot()
    assert m.overslept_count >= 10
    assert all(gap % P30 == 0 for gap in gaps(script.times))


def test_warning_lines_once_per_run_of_losses(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sengen.kernel")
    run(Script(cycles=6, spin={2: 3 * P30}, late={4: 3 * P30}))
    lines = [(r.getMessage(), getattr(r, "lost", None)) for r in caplog.records]
    assert lines == [
        ("comp execution time overrun", 0),
        ("comp missed frame (interruption)", 2),
        ("comp missed frame (overslept)", 2),
    ]
    assert all(getattr(r, "component", None) == "comp" for r in caplog.records)


def test_silenced_warnings_still_count_and_reach_the_tracer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    messages: list[tuple[str, int]] = []
    zones: list[str] = []

    class Recorder:
        def zone(self, component: str, zone: str, begin: int, end: int, cycle_time: int) -> None:
            zones.append(zone)

        def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
            messages.append((text, lost))

    caplog.set_level(logging.WARNING, logger="sengen.kernel")
    tracers = Tracers()
    tracers.install(Recorder())
    loop = run(Script(cycles=5, spin={2: 2 * P30}), log_overruns=False, tracers=tracers)
    assert caplog.records == []
    assert messages == [("comp execution time overrun", 0), ("comp missed frame (interruption)", 1)]
    assert zones == ["drain", "update", "commit"] * 5
    assert loop.snapshot().missed_frame_count == 1  # exactly two periods: one slot lost


def test_monitoring_invariants_hold_after_every_cycle() -> None:
    checks: list[bool] = []
    script = Script(cycles=30, spin={i: (i * 3_333_331) % (2 * P30) for i in range(30)})
    loop: RealTimeLoop | None = None
    original = script.wait

    def watching_wait(seconds: float) -> None:
        assert loop is not None
        m = loop.snapshot()
        if m.last is not None:
            checks.append(m.last.component + m.last.queued <= m.last.execution)
        if m.worst is not None and m.last is not None:
            checks.append(m.worst.component <= m.worst.execution)
        original(seconds)

    loop = RealTimeLoop("comp", P30, clock=script.clock, cpu=script.cpu, wait=watching_wait)
    counter = {"n": 0}

    def update(cycle_time: int) -> None:
        i = script.index
        script.now += script.spin.get(i, 0)
        script.cpu_now += script.spin.get(i, 0)
        script.index += 1
        counter["n"] += 1
        if script.index >= script.cycles:
            loop.stop.set()

    loop.run(lambda t: 0, update, lambda t: None, anchor=ANCHOR)
    assert checks and all(checks)
    m = loop.snapshot()
    assert m.worst is not None and m.last is not None and m.worst.execution >= m.last.execution


def test_on_the_real_clock_a_stop_ends_the_wait_at_once() -> None:
    """Real clocks: a 1 Hz loop is stopped from another thread well within its period."""
    loop = RealTimeLoop("slow", 1_000_000_000)
    cycles: list[int] = []

    def drain(cycle_time: int) -> int:
        cycles.append(cycle_time)
        return 0

    thread = threading.Thread(target=loop.run, args=(drain, lambda t: None, lambda t: None))
    started = time.monotonic()
    thread.start()
    time.sleep(0.05)
    loop.stop.set()
    thread.join(timeout=5)
    assert not thread.is_alive()
    assert time.monotonic() - started < 0.9
    assert len(cycles) == 1


def test_a_failing_tracer_is_removed_and_the_chrome_trace_is_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        def zone(self, component: str, zone: str, begin: int, end: int, cycle_time: int) -> None:
            raise OSError("disk full")

        def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
            raise OSError("disk full")

    chrome = ChromeTracer()
    tracers = Tracers()
    tracers.install(Broken())
    tracers.install(chrome)
    run(Script(cycles=3, spin={1: 2 * P30}), tracers=tracers)
    failures = [r for r in caplog.records if "tracer" in r.getMessage()]
    assert len(failures) == 1
    chrome.write(tmp_path / "trace.json")
    document = json.loads((tmp_path / "trace.json").read_text())
    events = document["traceEvents"]
    assert [e["name"] for e in events if e["ph"] == "X"] == ["drain", "update", "commit"] * 3
    assert [e["name"] for e in events if e["ph"] == "i"] == [
        "comp execution time overrun",
        "comp missed frame (interruption)",
    ]
    assert [e["args"]["name"] for e in events if e["ph"] == "M"] == ["comp"]
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
