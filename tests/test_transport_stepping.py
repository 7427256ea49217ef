"""Processes stepped by one master clock (runtime.md §6.3, §6.8): steps land on the smallest
next-due time over every kernel, and two runs with cross-process calls, events and property
reads give identical recordings. Three kernels, because with two the master's own stream
orders everything anyway: with a third, data between the other two races the master's next
step command, which only the step stamps and END markers settle."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kernel_support import Probe
from recording_support import read_recording
from transport_support import Process, free_port, make_project, session_name

from sengen.runtime.components.transport.transport import Transport
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "xsgen"
pytestmark = pytest.mark.slow

P30, P10, P50, P100 = 33_333_333, 100_000_000, 20_000_000, 10_000_000
STEPS = 400


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    folder = tmp_path_factory.mktemp("stepping")
    for impls in make_project(folder, ROOT):
        yield folder, impls


def kernel_config(
    port: int,
    session: str,
    recording: Path,
    objects: Sequence[tuple[str, str, float]],
    name: str,
    perturbed: bool = False,
    clocks: str = "clocks",
) -> str:
    """A virtual-time kernel with the transport, a recorder of its own objects on
    ``<session>.b`` and one ``build:`` component per (name, class, rate); ``perturbed``: the
    frames its transport receives are randomly delayed. Its clock is on ``<session>.<clocks>``,
    where kernel ``a`` is the master, and any kernel whose clock bus is not the default."""
    master = name == "a" or clocks != "clocks"
    lines = [
        "kernel:",
        f"  appName: {name}",
        "  runMode: virtualTime",
        f"  clockBus: {session}.{clocks}",
        f"  clockName: clock_{name}",
        f"  clockMaster: {'true' if master else 'false'}",
        "load:",
        "  - name: transport",
        f"    rendezvous: tcp/127.0.0.1:{port}",
        "  - name: recorder",
        "    recordings:",
        f"      - {{name: r, file: {recording}, selections: ['SELECT * FROM {session}.b']}}",
    ]
    if perturbed:
        lines += ["  - name: delayer", f'    component: "{ROOT}_impls:Delayer"']
    lines += ["build:"]
    for name, cls, rate in objects:
        serial = ", serial: 1" if cls != "Watching" else ""
        lines += [
            f"  - name: {name}",
            f"    freqHz: {rate}",
            f"    imports: [{ROOT}.xbus, {ROOT}_impls]",
            "    objects:",
            f"      - {{name: {name}, class: xbus.{cls}, bus: {session}.b{serial}}}",
        ]
    return "\n".join(lines) + "\n"


OTHERS: dict[str, list[tuple[str, str, float]]] = {
    "b": [("b1", "Counting", 50), ("wb", "Watching", 10)],
    "c": [("c1", "Counting", 100), ("wc", "Watching", 50)],
}


def run_system(
    project: Path, impls: ModuleType, tag: str, perturbed: bool
) -> tuple[list[int], list[Path]]:
    """One run: the other kernels in child processes, the master here, ``STEPS`` steps; the
    master's time after each step and every kernel's recording."""
    port, session = free_port(), session_name("stepped")  # one session name for both runs
    recordings = {name: project / f"{name}_{tag}.mcap" for name in ("a", *OTHERS)}
    others = [
        Process(
            project,
            f"{name}_{tag}",
            kernel_config(port, session, recordings[name], objects, name, perturbed),
            until=None,  # stepped by the master here, until stopped
        )
        for name, objects in OTHERS.items()
    ]
    mine = [("a1", "Counting", 1e9 / P30), ("wa", "Watching", 10)]
    kernel = Kernel(load_config_text(kernel_config(port, session, recordings["a"], mine, "a")))
    times: list[int] = []
    outputs: list[str] = []
    original = Transport.handle_frame
    if perturbed:
        impls.delay_frames(Transport)
    try:
        assert kernel.start()
        deadline = time.monotonic() + 20
        # The driver waits until the master has found every kernel clock (runtime.md §6.9);
        # the others publish their clocks before their components enter their loops, so they
        # get a moment more.
        while len(kernel.master_clocks()) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(kernel.master_clocks()) == 3, "the master never found the other clocks"
        # Their components register their objects as they enter their loops.
        for name, objects in OTHERS.items():
            for obj, _, _ in objects:
                kernel.wait_for(name, obj, f"{session}.b.{obj}", timeout=20)
        kernel.wait_ready()
        stepper = kernel.stepper()
        for _ in range(STEPS):
            stepper.step()
            times.append(stepper.kernel_time)
    finally:
        Transport.handle_frame = original  # type: ignore[method-assign]
        kernel.shutdown()
        outputs = [other.stop() for other in others]
    for output in outputs:
        assert "Traceback" not in output, output
    return times, list(recordings.values())


def due_times(periods: list[int], count: int) -> list[int]:
    """The first ``count`` distinct cycle times over every period, from 0."""
    times = sorted({k * p for p in periods for k in range(count + 1)})
    return times[:count]


def test_processes_step_together_on_the_nearest_due_time_and_reproducibly(
    project: tuple[Path, ModuleType],
) -> None:
    """The second run is perturbed: every process delays frames it receives at random."""
    folder, impls = project
    first, one = run_system(folder, impls, "one", perturbed=False)
    second, two = run_system(folder, impls, "two", perturbed=True)
    # Every kernel's periods (the recorders run at 30 Hz, like a1).
    assert first == due_times([P30, P10, P50, P100], STEPS)
    assert second == first
    for left, right in zip(one, two, strict=True):
        compare = subprocess.run(
            [sys.executable, "-m", "sengen", "record", "compare", str(left), str(right)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert compare.returncode == 0, compare.stdout + compare.stderr
    # What crossed: each watcher summed the other processes' events, call answers and counts,
    # and set their setpoints.
    recorded = str(read_recording(one[1])[1])
    assert "'heard'" in recorded and "'answers'" in recorded and "'total'" in recorded
    assert "'setpoint'" in recorded
    # A call between processes made in step s ran in step s + 1 (wa and wb at 10 Hz): one
    # period, always, as in one process; the watchers subscription opened mid-run.
    for path, watcher in ((one[0], "wa"), (one[1], "wb")):
        _, records = read_recording(path)
        changes = [r["values"] for r in records if r["object"] == watcher and r["kind"] == "set"]
        delays = {c["delay"] for c in changes if "delay" in c}
        bumped = [c["bumped"] for c in changes if "bumped" in c]
        assert delays == {P10} and bumped[-1] > 10, (watcher, delays, bumped)


def steps_within(stepper: Any, count: int, seconds: float) -> list[int]:
    """``count`` steps on a thread of their own (a step waiting for a marker that never comes
    would hang this test); the master's time after each."""
    times: list[int] = []

    def run() -> None:
        for _ in range(count):
            stepper.step()
            times.append(stepper.kernel_time)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"stepping hung after {len(times)} of {count} steps"
    return times


def test_a_kernel_found_after_stepping_began_is_brought_to_the_common_time_first(
    project: tuple[Path, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    """runtime.md §6.8, a clock that joins: one processNoFlush + flushOutputs pair at the
    master's time, then the joiner steps with the others, its END markers awaited."""
    folder, _ = project
    port, session = free_port(), session_name("join")
    recordings = {name: folder / f"join_{name}.mcap" for name in ("a", "b")}
    mine = [("a1", "Counting", 1e9 / P30)]
    kernel = Kernel(load_config_text(kernel_config(port, session, recordings["a"], mine, "a")))
    late: Process | None = None
    try:
        with caplog.at_level(logging.WARNING, logger="sengen.kernel"):
            assert kernel.start()
            kernel.wait_ready()
            stepper = kernel.stepper()
            before = steps_within(stepper, 10, 20.0)
            joined_at = stepper.kernel_time
            config = kernel_config(port, session, recordings["b"], [("b1", "Counting", 50)], "b")
            late = Process(folder, "join_b", config, until=None)
            deadline = time.monotonic() + 20
            while len(kernel.master_clocks()) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert len(kernel.master_clocks()) == 2, "the master never found the late clock"
            kernel.wait_for("b", "b1", f"{session}.b.b1", timeout=20)  # b1 in its loop
            after = steps_within(stepper, 40, 30.0)
    finally:
        kernel.shutdown()
        output = late.stop() if late is not None else ""
    assert "Traceback" not in output, output
    assert before == due_times([P30], 10)
    joined = [r.getMessage() for r in caplog.records if "joined" in r.getMessage()]
    assert joined == [f"kernel clock 'clock_b' joined at t={joined_at}"]
    # The joiner's components catch up one cycle per step (steps of 0 ns meanwhile), none
    # skipped, each cycle at its own due time; then the steps land on the due times of both
    # kernels (b1 at 50 Hz, b's recorder at 30 Hz, a1 at 30 Hz).
    _, records = read_recording(recordings["b"])
    b1 = sorted({r["t"] for r in records if r["object"] == "b1"})
    assert b1 == [k * P50 for k in range(len(b1))] and b1[-1] > joined_at, b1
    assert after == sorted(after)
    assert after[0] == due_times([P30], 11)[-1]  # the step that was next anyway
    merged = [t for t in due_times([P30, P50], 400) if after[0] <= t <= after[-1]]
    assert sorted(set(after)) == merged
    # b1's cycle at 0 ran in the join pair, so the steps at after[0] (0 ns after the first)
    # run its cycles 1 to after[0] // P50: one step fewer than without the pair.
    assert after.count(after[0]) == after[0] // P50


def test_kernels_of_different_masters_serve_each_others_stepped_interests(
    project: tuple[Path, ModuleType],
) -> None:
    """Outside one clock set (runtime.md §6.8, §6.9): no END marker of the subscriber's kernel
    ever reaches the producer's, so a stepped subscription opens there from its token, at the
    producer's next hand-over; and what the producer sends, stamped with its own master's
    steps, is handed over at the subscriber's next hand-over, not held until its step count
    catches up."""
    folder, _ = project
    port, session = free_port(), session_name("masters")
    seen: dict[str, Any] = {"cycles": 0}

    def subscribe(api: RunApi) -> bool:
        seen["cycles"] += 1
        if seen["cycles"] < 5:
            return False
        seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")
        return True

    def found(api: RunApi) -> bool:
        return any(o.count > 0 for o in seen["sub"].objects)

    probe = Probe([subscribe, found], freq_hz=100, stop_when_done=False)
    recording = folder / "masters_{}.mcap"
    a = Kernel(
        load_config_text(
            kernel_config(port, session, Path(str(recording).format("a")), [], "a", clocks="ca")
        ),
        [("probe", probe, 2)],
    )
    b_objects = [("b1", "Counting", 100)]
    config_b = kernel_config(
        port, session, Path(str(recording).format("b")), b_objects, "b", clocks="cb"
    )
    b = Kernel(load_config_text(config_b))
    steps = 0
    try:
        assert a.start() and b.start()
        a.wait_ready()
        b.wait_ready()
        step_a, step_b = a.stepper(), b.stepper()
        steps_within(step_b, 100, 30.0)  # b's master is far ahead of a's
        deadline = time.monotonic() + 30
        while not probe.done and steps < 200 and time.monotonic() < deadline:
            steps_within(step_a, 1, 10.0)
            steps_within(step_b, 1, 10.0)
            steps += 1
    finally:
        a.shutdown()
        b.shutdown()
    assert probe.done, f"a's subscriber saw nothing of b in {steps} steps"
    assert steps < 5 + 20  # within a few steps of subscribing, not ~100 (b's lead)
