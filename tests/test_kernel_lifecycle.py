"""Component lifecycle, the kernel component, monitoring, self-driven components, the tracer and
the recorder (runtime.md §2, §5.3, §7, §9.2; acceptance L1-L9 of §11).

Runs are bounded by ``until``; probes stop the kernel as soon as what they wait for happened.
"""

from __future__ import annotations

import itertools
import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kernel_support import Probe, make_package, producer, run_kernel
from recording_support import read_recording

from sengen.runtime import Duration, TimeStamp
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component, Retry
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel, PreloadError
from sengen.runtime.sen.kernel.monitoring import ComponentMonitoringInfo


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_life")


class Recorded(Component):
    """Logs each hook call as (name, hook) into a shared list."""

    def __init__(self, log: list[tuple[str, str]], name: str, retries: int = 0) -> None:
        self.log = log
        self.name = name
        self.retries = retries

    def preload(self, api: RunApi) -> None:
        self.log.append((self.name, "preload"))

    def load(self, api: RunApi) -> None:
        self.log.append((self.name, "load"))

    def init(self, api: RunApi) -> Retry | None:
        self.log.append((self.name, "init"))
        if self.retries:
            self.retries -= 1
            return Retry(Duration.parse("50 ms"))
        return None

    def run(self, api: RunApi) -> None:
        self.log.append((self.name, "run"))
        api.wait_for_stop()
        self.log.append((self.name, "stopped"))

    def unload(self, api: RunApi) -> None:
        self.log.append((self.name, "unload"))


def test_groups_start_in_layers_ascending_and_stop_highest_first(impls: ModuleType) -> None:
    log: list[tuple[str, str]] = []
    parts = [
        ("a", Recorded(log, "a"), 1),
        ("b", Recorded(log, "b"), 2),
        ("c", Recorded(log, "c"), 1),
    ]
    kernel = Kernel(load_config_text(""), parts)
    assert kernel.run(Duration.parse("300 ms")) == 0
    hooks = [entry for entry in log if entry[1] != "run"]
    assert hooks[:3] == [("a", "preload"), ("b", "preload"), ("c", "preload")]
    assert hooks[3:7] == [("a", "load"), ("c", "load"), ("a", "init"), ("c", "init")]
    # group 2's first load comes after every group-1 thread started
    assert log.index(("b", "load")) > max(log.index(("a", "run")), log.index(("c", "run")))
    # shutdown: group 2 stopped and unloaded before group 1 is stopped
    assert log.index(("b", "unload")) < min(
        log.index(("a", "stopped")), log.index(("c", "stopped"))
    )
    assert log[-2:] in ([("a", "unload"), ("c", "unload")], [("c", "unload"), ("a", "unload")])


def test_init_retry_is_called_again_no_sooner_than_its_wait_hint(impls: ModuleType) -> None:
    log: list[tuple[str, str]] = []
    times: list[float] = []

    class Timed(Recorded):
        def init(self, api: RunApi) -> Retry | None:
            times.append(time.monotonic())
            return super().init(api)

    kernel = Kernel(load_config_text(""), [("slow", Timed(log, "slow", retries=1), 1)])
    assert kernel.run(Duration.parse("100 ms")) == 0
    assert len(times) == 2 and times[1] - times[0] >= 0.05
    assert log.index(("slow", "run")) > log.index(("slow", "init"))


def test_an_exception_in_load_stops_what_started_and_exits_1(
    impls: ModuleType,
    caplog: pytest.LogCaptureFixture,
) -> None:
    log: list[tuple[str, str]] = []

    class Failing(Recorded):
        def load(self, api: RunApi) -> None:
            raise RuntimeError("no licence")

    parts = [
        ("a", Recorded(log, "a"), 1),
        ("f", Failing(log, "f"), 2),
        ("z", Recorded(log, "z"), 3),
    ]
    with caplog.at_level(logging.ERROR):
        code = Kernel(load_config_text(""), parts).run(Duration.parse("5 s"))
    assert code == 1
    assert "error while loading component f: no licence" in caplog.text
    assert "Traceback" in caplog.text
    assert ("a", "unload") in log and ("z", "load") not in log


def test_a_component_ignoring_stop_is_named_and_the_exit_code_is_3(
    impls: ModuleType,
    caplog: pytest.LogCaptureFixture,
) -> None:
    release: list[bool] = []

    class Stubborn(Component):
        def run(self, api: RunApi) -> None:
            deadline = time.monotonic() + 5
            while not release and time.monotonic() < deadline:
                time.sleep(0.01)

    text = "kernel: {shutdownTimeout: 300 ms}\n"
    kernel = Kernel(load_config_text(text), [("stubborn", Stubborn(), 1)])
    begin = time.monotonic()
    with caplog.at_level(logging.ERROR):
        code = kernel.run(Duration.parse("50 ms"))
    release.append(True)
    assert code == 3
    assert time.monotonic() - begin < 0.3 + 0.05 + 1
    assert "component 'stubborn' did not stop within 300 ms" in caplog.text
    kernel.runner("stubborn").thread.join(5)  # type: ignore[union-attr]


def test_request_kernel_stop_sets_the_exit_code(impls: ModuleType) -> None:
    def stop(api: RunApi) -> bool:
        api.request_kernel_stop(7)
        return True

    probe = Probe([stop], stop_when_done=False)
    _, code = run_kernel("", [("probe", probe, 1)])
    assert code == 7


def test_kernel_api_shutdown_through_a_proxy_stops_with_code_0(impls: ModuleType) -> None:
    holder: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select("SELECT sen.kernel.KernelApi FROM local.kernel")

    def shut(api: RunApi) -> bool:
        if not len(holder["sub"]):
            return False
        holder["sub"].objects[0].shutdown()
        return True

    begin = time.monotonic()
    _, code = run_kernel("", [("probe", Probe([shut], setup, stop_when_done=False), 1)], "20 s")
    assert code == 0 and time.monotonic() - begin < 10


def test_monitoring_fields_for_looped_self_driven_and_kernel_components(impls: ModuleType) -> None:
    infos: dict[str, Any] = {}

    class SelfDriven(Component):
        def run(self, api: RunApi) -> None:
            while not api.stop_requested():
                api.drain_inputs()
                api.update()
                api.commit()
                infos["self"] = api.fetch_component_monitoring_info()
                api.wait_for_stop(0.01)

    def fetch(api: RunApi) -> bool:
        own = api.fetch_component_monitoring_info()
        if own.last_cycle_execution_cpu_time is None or own.worst_cycle_execution_cpu_time is None:
            return False
        if "self" not in infos:
            return False
        infos["own"] = own
        infos["all"] = api.fetch_monitoring_info()
        return True

    parts = [("probe", Probe([fetch], freq_hz=100), 1), ("selfish", SelfDriven(), 2)]
    _, code = run_kernel("", parts)
    assert code == 0
    own: ComponentMonitoringInfo = infos["own"]
    assert own.name == "probe" and own.group == 1 and own.requires_real_time is False
    assert own.cycle_time == Duration(10_000_000)
    # Counted on a real-time loop (None where there is none, as for the self-driven one below).
    assert isinstance(own.overrun_count, int) and own.overrun_count >= 0
    assert own.missed_frame_count is not None and own.overslept_count is not None
    assert own.last_cycle_start_delay is not None and own.worst_start_delay is not None
    assert own.worst_start_delay >= own.last_cycle_start_delay
    last = own.last_cycle_execution_cpu_time
    assert last is not None and own.last_cycle_component_cpu_time is not None
    assert own.last_cycle_queued_work_cpu_time is not None
    assert own.last_cycle_component_cpu_time + own.last_cycle_queued_work_cpu_time <= last
    names = [c.name for c in infos["all"].components]
    assert names == ["probe", "selfish", "kernel"]  # runner order, the kernel last
    for info in (infos["self"], infos["all"].components[2]):
        assert info.cycle_time is None and info.overrun_count is None
        assert info.last_cycle_execution_cpu_time is None and info.last_cycle_start_delay is None
    assert infos["all"].components[2].requires_real_time is True
    assert infos["all"].components[2].object_count == 1  # the api object
    assert infos["all"].transport_stats is None


def test_a_self_driven_commit_stamps_its_own_time(impls: ModuleType) -> None:
    Still = impls.Still
    stamp = TimeStamp(123_456_789)
    seen: dict[str, Any] = {}

    class Bridge(Component):
        def run(self, api: RunApi) -> None:
            sensor = Still("bridged", serial=1)
            api.get_source("local.bridge").add(sensor)
            while not api.stop_requested():
                api.drain_inputs()
                sensor.set_next_reading(sensor.reading + 1)
                api.update()
                api.commit(stamp)
                seen["time"] = api.get_time()
                api.wait_for_stop(0.01)

    holder: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select("SELECT * FROM local.bridge")

    def look(api: RunApi) -> bool:
        if not len(holder["sub"]) or holder["sub"].objects[0].reading < 2:
            return False
        seen["commit"] = holder["sub"].objects[0].last_commit_time
        return True

    _, code = run_kernel("", [("bridge", Bridge(), 1), ("probe", Probe([look], setup), 1)])
    assert code == 0
    assert seen["commit"] == stamp.ns
    assert seen["time"].ns != stamp.ns  # get_time() stays the kernel's


def test_install_tracer_only_from_preload_and_the_tracer_component_writes_chrome_json(
    impls: ModuleType,
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.json"
    errors: list[str] = []

    def late(api: RunApi) -> bool:
        try:
            api.install_tracer(object())  # type: ignore[arg-type]
        except RuntimeError as error:
            errors.append(str(error))
        return True

    text = f"load:\n  - {{name: tracer, file: '{trace}'}}\n"
    _, code = run_kernel(text, [("probe", Probe([late]), 1)])
    assert code == 0
    assert errors == ["tracers can only be installed from a component's preload()"]
    document = json.loads(trace.read_text())
    zones = [e for e in document["traceEvents"] if e.get("ph") == "X"]
    assert {"drain", "update", "commit"} <= {e["name"] for e in zones}
    tracks = {e["args"]["name"] for e in document["traceEvents"] if e.get("ph") == "M"}
    assert "probe" in tracks and "kernel" in tracks


def test_a_load_component_with_a_bad_own_key_is_refused_before_start(impls: ModuleType) -> None:
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text("load:\n  - {name: tracer, fiel: x.json}\n  - {name: nosuch}\n"))
    assert caught.value.problems[0].startswith("<yaml text>: load[0].fiel: ")
    assert caught.value.problems[1] == "<yaml text>: load[1].name: unknown component 'nosuch'"


def test_the_recorder_writes_every_committed_change_and_event_through_shutdown(
    impls: ModuleType,
    tmp_path: Path,
) -> None:
    out = tmp_path / "rec.mcap"
    text = (
        "load:\n"
        "  - name: recorder\n"
        "    group: 1\n"
        "    freqHz: 20\n"
        f"    recordings: [{{name: r, file: '{out}', selections: ['SELECT * FROM local.b']}}]\n"
        "build:\n"
        + producer(impls, "{name: s1, class: kbus.Counting, bus: local.b, serial: 4}", 100, group=2)
    )
    kernel = Kernel(load_config_text(text))
    sensor: Any = kernel.components[1].component.objects[0][0]  # type: ignore[attr-defined]
    assert kernel.run(Duration.parse("400 ms")) == 0
    info, records = read_recording(out)
    assert info.selections == ("SELECT * FROM local.b",)
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "add" and kinds[-1] == "remove"
    sets = [
        r["values"]["reading"] for r in records if r["kind"] == "set" and "reading" in r["values"]
    ]
    ticks = [r["args"]["count"] for r in records if r.get("event") == "ticked"]
    # Every commit, none coalesced, up to the last one before the producer stopped.
    start = records[0]["state"]["reading"]
    assert sets == [float(n) for n in range(int(start) + 1, int(start) + 1 + len(sets))]
    assert sets[-1] == sensor.reading
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks))) and ticks[-1] == int(
        sensor.reading
    )
    shown = subprocess.run(
        [sys.executable, "-m", "sengen", "record", "show", str(out)], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "s1" in shown.stdout and "remove" in shown.stdout
    same = subprocess.run(
        [sys.executable, "-m", "sengen", "record", "compare", str(out), str(out)],
        capture_output=True,
        text=True,
    )
    assert same.returncode == 0


def _spin_cpu(ns: int) -> None:
    end = time.thread_time_ns() + ns
    while time.thread_time_ns() < end:
        pass


@pytest.mark.parametrize("how", ["spin", "sleep"])
def test_on_the_wall_clock_a_long_cycle_loses_frames_and_only_cpu_is_an_overrun(
    impls: ModuleType, how: str
) -> None:
    period = 20_000_000
    infos: list[ComponentMonitoringInfo] = []
    cycles = {"n": 0}

    def long_cycle(api: RunApi) -> bool:
        cycles["n"] += 1
        if cycles["n"] == 3:  # not the first cycle, which is excluded from missed frames
            if how == "spin":
                _spin_cpu(int(2.5 * period))
            else:
                time.sleep(2.5 * period / 1e9)
            return False
        if cycles["n"] < 6:
            return False
        infos.append(api.fetch_component_monitoring_info())
        return True

    _, code = run_kernel("", [("probe", Probe([long_cycle], freq_hz=50), 1)])
    assert code == 0
    info = infos[0]
    assert info.missed_frame_count is not None and info.missed_frame_count >= 2
    assert info.overrun_count is not None
    if how == "spin":
        assert info.overrun_count >= 1
    else:
        assert info.overrun_count == 0  # waiting costs no CPU: missed frames, no overrun


def test_times_at_30_hz_differ_by_positive_whole_periods(impls: ModuleType) -> None:
    times: list[int] = []

    def collect(api: RunApi) -> bool:
        times.append(api.get_time().ns)
        if len(times) == 5:
            time.sleep(0.08)  # lose a couple of cycles on purpose
        return len(times) >= 12

    _, code = run_kernel("", [("probe", Probe([collect], freq_hz=30), 1)])
    assert code == 0
    steps = [b - a for a, b in itertools.pairwise(times)]
    assert all(step > 0 and step % 33_333_333 == 0 for step in steps)
    assert any(step > 33_333_333 for step in steps)  # the skipped cycles show as whole periods


def test_the_recorder_stops_hearing_an_object_that_stops_matching(
    impls: ModuleType, tmp_path: Path
) -> None:
    out = tmp_path / "filtered.mcap"
    selections = (
        "['SELECT * FROM local.b WHERE reading < 40',"
        " 'SELECT kbus.Sensor FROM local.b WHERE a < 40']"
    )
    text = (
        "load:\n"
        "  - name: recorder\n"
        f"    recordings: [{{name: r, file: '{out}', selections: {selections}}}]\n"
        "build:\n"
        + producer(impls, "{name: s1, class: kbus.Counting, bus: local.b, serial: 4}", 50)
    )
    assert Kernel(load_config_text(text)).run(Duration.parse("1500 ms")) == 0
    _, records = read_recording(out)
    kinds = [r["kind"] for r in records]
    assert kinds.count("add") == 1 and kinds.count("remove") == 1  # two selections, one object
    assert kinds[-1] == "remove"
    ticks = [r["args"]["count"] for r in records if r.get("event") == "ticked"]
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks)))  # once each, in order
    assert ticks[-1] <= 40  # none after it stopped matching
