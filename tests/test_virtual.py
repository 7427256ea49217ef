"""Virtual time: the kernel clock, the master's stepping and the test kernel (runtime.md §6,
§10.1; acceptance VT and K of §11). Nothing here waits on the wall clock except VT7, which
checks that a real-time-only component keeps it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from kernel_support import make_package

from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.testing import TestKernel


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_virtual")


class Ticker(Component):
    """Records the time of each of its cycles."""

    def __init__(self, period: int, work: Callable[[RunApi], None] | None = None) -> None:
        self.period = period
        self.times: list[int] = []
        self.work = work

    def run(self, api: RunApi) -> None:
        def cycle() -> None:
            self.times.append(api.get_time().ns)
            if self.work is not None:
                self.work(api)

        api.exec_loop(self.period, cycle)


class WallTicker(Ticker):
    def is_real_time_only(self) -> bool:
        return True


P30 = 33_333_333


def test_vt1_a_30_ms_component_and_advance_time_100_ms() -> None:
    ticker = Ticker(30_000_000)
    with TestKernel([("t", ticker)]) as tk:
        tk.advance("100 ms")
        assert ticker.times == [0, 30_000_000, 60_000_000, 90_000_000]
        assert tk.get_time().ns == 120_000_000
        assert tk.kernel.clock is not None and tk.kernel.clock.time == 90_000_000
        tk.advance("100 ms")
        assert ticker.times[4:] == [120_000_000, 150_000_000, 180_000_000, 210_000_000]
        assert tk.get_time().ns == 240_000_000


def test_vt2_30_hz_advance_time_and_steps() -> None:
    ticker = Ticker(P30)
    with TestKernel([("t", ticker)]) as tk:
        tk.advance(Duration.parse("100 ms"))
        assert ticker.times == [0, P30, 2 * P30, 3 * P30]
        assert tk.get_time().ns == 133_333_332
    again = Ticker(P30)
    with TestKernel([("t", again)]) as tk:
        tk.step(30)
        assert again.times == [k * P30 for k in range(30)]
        assert tk.get_time().ns == 999_999_990
    whole = Ticker(P30)
    with TestKernel([("t", whole)]) as tk:
        tk.advance("1 s")
        assert whole.times == [k * P30 for k in range(31)]
        assert tk.get_time().ns == 1_033_333_323


def test_vt3_30_hz_and_10_hz_step_six_times() -> None:
    a, b = Ticker(P30), Ticker(100_000_000)
    with TestKernel([("a", a), ("b", b)]) as tk:
        pendings = []
        for _ in range(6):
            tk.step()
            pendings.append(tk._stepper.pending)
    assert a.times == [0, P30, 2 * P30, 3 * P30, 133_333_332]
    assert b.times == [0, 100_000_000]
    assert pendings == [P30, P30, P30, 1, 33_333_332, P30]


def test_vt4_vt6_a_2_khz_component_steps_without_a_gap_from_zero() -> None:
    fast = Ticker(500_000)
    with TestKernel([("fast", fast)]) as tk:
        tk.step(1000)
    assert fast.times == [k * 500_000 for k in range(1000)]


def test_vt5_a_slow_update_only_makes_the_step_longer() -> None:
    slow = Ticker(10_000_000, lambda api: time.sleep(0.2))
    with TestKernel([("slow", slow)]) as tk:
        tk.step(3)
    assert slow.times == [0, 10_000_000, 20_000_000]


def test_k3_k4_k5_writes_and_events_of_step_n_are_seen_after_n_and_heard_after_n_plus_1(
    impls: ModuleType, test_kernel: Callable[..., TestKernel]
) -> None:
    owner = Owner(impls)
    tk = test_kernel(components=[("owner", owner)])
    sensor = tk.object("local.v.s")
    assert sensor is owner.sensor and sensor.reading == 0.0
    tk.step()  # cycle 1 writes 1 and emits ticked(1)
    assert sensor.reading == 1.0
    assert owner.changes == [] and owner.ticks == []
    tk.step()  # the owner's callbacks run in cycle 2's drain, once each
    assert owner.changes == [1.0] and owner.ticks == [1]
    tk.step()
    assert owner.changes == [1.0, 2.0] and owner.ticks == [1, 2]


def test_test_code_writes_between_steps_and_it_is_committed_at_the_next_step(
    impls: ModuleType,
) -> None:
    owner = Owner(impls, counting=False)
    with TestKernel([("owner", owner)]) as tk:
        tk.step()
        sensor: Any = tk.object("local.v.s")
        sensor.set_next_setpoint(4.5)  # the owner is parked: allowed (runtime.md §3.4)
        assert sensor.setpoint == 0.0
        tk.step()
        assert sensor.setpoint == 4.5
        assert tk.call(sensor, "add", 2, 3) == 5
        assert [o.name for o in tk.objects("local.v")] == ["s"]
        with pytest.raises(LookupError):
            tk.object("local.v.nothing")


class Owner(Component):
    """Owns one sensor on ``local.v`` and hears its own changes and events."""

    def __init__(self, impls: ModuleType, counting: bool = True) -> None:
        self.sensor = (impls.Counting if counting else impls.Still)("s", serial=1)
        self.changes: list[float] = []
        self.ticks: list[int] = []

    def run(self, api: RunApi) -> None:
        api.get_source("local.v").add(self.sensor)
        self.sensor.on_reading_changed(self.changes.append)
        self.sensor.events.ticked.connect(self.ticks.append)
        api.exec_loop(1_000_000_000)


def test_k1_k2_an_empty_kernel_and_a_1_hz_component() -> None:
    with TestKernel.from_yaml("") as empty:
        empty.step()
        assert empty.get_time().ns == 0
    one = Ticker(1_000_000_000)
    with TestKernel([("one", one)]) as tk:
        for k in range(1, 4):
            tk.step()
            assert one.times[-1] == (k - 1) * 1_000_000_000
            assert tk.get_time().ns == k * 1_000_000_000


def test_k7_a_real_time_configuration_runs_stepped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        caplog.at_level(logging.WARNING),
        TestKernel.from_yaml("kernel: {runMode: realTime}\n") as tk,
    ):
        assert tk.kernel.config.kernel.run_mode == "virtualTime"
    assert "<yaml text>: kernel.runMode: 'realTime' is run as 'virtualTime'" in caplog.text


@pytest.mark.parametrize(
    "config", ["", "kernel: {appName: quiet}\n", "kernel: {runMode: virtualTime}\n"]
)
def test_no_run_mode_warning_unless_the_configuration_sets_another(
    config: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), TestKernel.from_yaml(config) as tk:
        assert tk.kernel.config.kernel.run_mode == "virtualTime"
    assert "runMode" not in caplog.text


def test_an_exception_in_a_step_is_raised_by_step() -> None:
    def boom(api: RunApi) -> None:
        raise RuntimeError("model diverged")

    with (
        TestKernel([("bad", Ticker(10_000_000, boom))]) as tk,
        pytest.raises(RuntimeError, match="model diverged"),
    ):
        tk.step()


def test_vt7_a_real_time_only_component_keeps_the_wall_clock_while_nobody_steps() -> None:
    wall, stepped = WallTicker(20_000_000), Ticker(20_000_000)
    infos: dict[str, Any] = {}

    def look(api: RunApi) -> None:
        if len(wall.times) == 8:
            infos["all"] = api.fetch_monitoring_info()

    wall.work = look
    kernel = Kernel(
        load_config_text("kernel: {runMode: virtualTime}\n"), [("wall", wall, 1), ("s", stepped, 1)]
    )
    assert kernel.start()
    try:
        deadline = time.monotonic() + 10
        while len(wall.times) < 10 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        kernel.shutdown()
    assert stepped.times == []
    gaps = [b - a for a, b in zip(wall.times, wall.times[1:], strict=False)]
    assert all(gap > 0 and gap % 20_000_000 == 0 for gap in gaps)
    assert wall.times[0] > 10**18  # wall-clock nanoseconds, not virtual time
    by_name = {c.name: c for c in infos["all"].components}
    assert by_name["wall"].missed_frame_count is not None
    assert by_name["s"].missed_frame_count is None and by_name["s"].last_cycle_start_delay is None


def test_m4_a_stepped_component_reports_cpu_fields_and_no_deadlines() -> None:
    ticker = Ticker(10_000_000)
    with TestKernel([("t", ticker)]) as tk:
        tk.step(3)
        info = next(c for c in tk.monitoring().components if c.name == "t")
    assert info.cycle_time == Duration(10_000_000)
    assert info.last_cycle_execution_cpu_time is not None
    assert info.worst_cycle_execution_cpu_time is not None
    assert info.overrun_count is None and info.missed_frame_count is None
    assert info.last_cycle_start_delay is None and info.worst_start_delay is None


def test_vt9_vt10_outputs_stay_invisible_until_flush_and_negative_deltas_fail(
    impls: ModuleType,
) -> None:
    owner = Owner(impls)
    with TestKernel([("owner", owner)]) as tk:
        clock = tk.kernel.clock
        assert clock is not None
        clock.process_no_flush(0)
        assert owner.sensor.reading == 0.0  # cycled, not committed
        assert clock.flush_outputs() == 1_000_000_000
        assert owner.sensor.reading == 1.0
        with pytest.raises(ValueError, match="time cannot go backwards"):
            clock.process_no_flush(-1)
    with TestKernel() as empty:
        assert empty.kernel.clock is not None and empty.kernel.clock.flush_outputs() is None


def test_vt15_an_oversized_delta_makes_a_component_lag_and_catch_up() -> None:
    ticker = Ticker(10_000_000)
    with TestKernel([("t", ticker)]) as tk:
        clock = tk.kernel.clock
        assert clock is not None
        clock.process_no_flush(35_000_000)
        assert clock.flush_outputs() == 0
        nexts = []
        for _ in range(3):
            clock.process_no_flush(0)
            nexts.append(clock.flush_outputs())
    assert ticker.times == [0, 10_000_000, 20_000_000, 30_000_000]
    assert nexts == [0, 0, 5_000_000]


def test_vt17_master_time_moves_by_virtual_time_and_methods_return_wall_time() -> None:
    from sengen.runtime.time.stepping import Stepper

    none = Stepper(list)
    before = time.perf_counter_ns()
    took = none.step()
    assert 0 < took <= time.perf_counter_ns() - before and none.time == 0
    none.advance_time(250)
    assert none.time == 250
    ticker = Ticker(P30)
    with TestKernel([("t", ticker)]) as tk:
        before = time.perf_counter_ns()
        took = tk._stepper.steps(30)
        # The wall time of the 30 steps: positive, and within what the test measured around it.
        assert 0 < took <= time.perf_counter_ns() - before
        assert tk.get_time().ns == 999_999_990


def test_vt11_virtual_time_running_steps_by_itself_and_stops_cleanly() -> None:
    ticker = Ticker(P30)
    kernel = Kernel(load_config_text("kernel: {runMode: virtualTimeRunning}\n"), [("t", ticker, 1)])
    begin = time.monotonic()
    assert kernel.run(Duration.parse("10 s")) == 0
    assert time.monotonic() - begin < 10  # much faster than real time
    # Every cycle due in [0, 10 s), as advanceTime(10 s) would run them: k·P for k = 0…300.
    assert ticker.times == [k * P30 for k in range(301)]


def test_the_master_object_steps_its_own_kernel_through_a_call() -> None:
    ticker = Ticker(P30)
    config = load_config_text("kernel: {runMode: virtualTime, clockMaster: true}\n")
    kernel = Kernel(config, [("t", ticker, 1)])
    assert kernel.start()
    try:
        assert kernel.wait_ready()
        master = kernel.kernel_component.master
        assert master is not None
        call = master.advance_time(Duration.parse("100 ms"))
        assert call.result(timeout=10).ns >= 0
        assert ticker.times == [0, P30, 2 * P30, 3 * P30]
        deadline = time.monotonic() + 5
        while master.time.ns != 133_333_332 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert master.time.ns == 133_333_332  # published at the kernel component's commit
    finally:
        kernel.shutdown()


@pytest.mark.parametrize(
    "kernel_yaml",
    [
        "kernel: {runMode: virtualTime}\n",
        "kernel: {runMode: virtualTime, clockMaster: true}\n",
        "kernel: {runMode: virtualTimeRunning}\n",
    ],
    ids=["direct", "master", "running"],
)
def test_c15_until_under_virtual_time_reaches_it_without_waiting(kernel_yaml: str) -> None:
    ticker = Ticker(100_000_000)
    kernel = Kernel(load_config_text(kernel_yaml), [("t", ticker, 1)])
    begin = time.monotonic()
    assert kernel.run(Duration.parse("20 s")) == 0
    assert time.monotonic() - begin < 15  # 20 s of virtual time, far less of wall time
    assert ticker.times[:2] == [0, 100_000_000]
    # Every cycle due in [0, 20 s), in every mode: exactly 200.
    assert ticker.times == [k * 100_000_000 for k in range(200)]


class SelfDriven(Component):
    """Drives its own cycles, as a bridge to an outside clock would."""

    def __init__(self) -> None:
        self.times: list[int] = []

    def run(self, api: RunApi) -> None:
        while not api.stop_requested():
            api.drain_inputs()
            self.times.append(api.get_time().ns)
            api.update()
            api.commit()
            api.wait_for_stop(0.005)


def test_a_self_driven_component_sees_the_kernel_clock_and_never_holds_up_a_step() -> None:
    bridge, ticker = SelfDriven(), Ticker(P30)
    begin = time.monotonic()
    with TestKernel([("bridge", bridge), ("t", ticker)]) as tk:
        tk.advance("100 ms")
        # The bridge runs on its own thread: wait (bounded) until it has seen the last step's
        # time, not merely any later one, which raced with the assertion below.
        deadline = time.monotonic() + 5
        while 3 * P30 not in bridge.times and time.monotonic() < deadline:
            time.sleep(0.005)
    assert time.monotonic() - begin < 4  # the first step did not wait the 5 s for it
    assert ticker.times == [0, P30, 2 * P30, 3 * P30]
    # Virtual times, never the wall clock: from 0 up to the last step's.
    assert bridge.times and all(0 <= t <= 3 * P30 for t in bridge.times)
    assert 3 * P30 in bridge.times


class Watching(Component):
    """Collects the buses detected and, each cycle, the sessions detected."""

    def __init__(self) -> None:
        self.detected: list[str] = []
        self.names: list[str] = []

    def run(self, api: RunApi) -> None:
        sessions = api.sessions()
        sessions.on_detected(self.detected.extend)
        api.exec_loop(P30, lambda: self.names.extend(sessions.names))


def test_sessions_tell_each_bus_detected_once() -> None:
    watching = Watching()
    config = "kernel: {runMode: virtualTime, bus: kern.bus, clockBus: clocks.bus}\n"
    with TestKernel.from_yaml(config, components=[("w", watching)]) as tk:
        tk.step(3)
    assert sorted(watching.detected) == ["clocks.bus", "kern.bus"]  # each once
    assert set(watching.names) == {"clocks", "kern"}
