"""Virtual-time benchmarks: ``python bench/virtual.py`` prints a table of figures.

Two parts (runtime.md §6.2, §6.3, §10.6); the benchmark reports, it never asserts a timing:

1. master stepping: steps per second of ``TestKernel.step`` with N = 1, 2, 4, 8 stepped
   components whose work does nothing, all at the same period so that every step cycles and
   commits all N. The floor, measured in the same run, is a bare loop of N threads on a
   ``threading.Barrier(N + 1)`` (the main thread being the +1) with two waits per step, one for
   ``processNoFlush`` and one for ``flushOutputs``; the goal is at least 50 % of its step rate.
   Each side is measured ``REPEAT`` times, interleaved, and the best run of each is kept (the
   machine is noisy: the best run is the one least disturbed);
2. ``--until 60 s`` under ``runMode: virtualTime``: one 30 Hz component with 100
   ``bench_types.Probe`` objects, each changing ``i0`` every cycle; the wall time of the whole
   run (start-up and shut-down included) and of the stepping alone, and the speed-up over real
   time (virtual time over wall time).

The objects are generated from ``bench/stl/bench_types`` into a temporary folder at the start
of the run, as bench/kernel.py does. ``--quick`` uses 500 steps and a 10 s run.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fixture

from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.testing import TestKernel

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATED_ROOT = "sengen_bench_virtual_gen"  # the root package of the generated fixture

STEP_GOAL = 0.5  # of the floor's step rate
COUNTS = (1, 2, 4, 8)
REPEAT = 3  # runs of each side per N; the best is kept
WARMUP_STEPS = 20
HZ_100 = 10_000_000  # ns: the period of every stepped component of part 1
HZ_30 = 33_333_333  # ns
UNTIL_OBJECTS = 100
VIRTUAL_TIME = "kernel:\n  runMode: virtualTime\n"
JOIN_TIMEOUT_S = 10.0


# --------------------------------------------------------------------------------------------
# the fixture


def generate_fixture(base: Path) -> Any:
    return fixture.generate_fixture(base, GENERATED_ROOT)


def changing_class(module: Any) -> Any:
    """``Probe`` whose ``update()`` changes ``i0`` by one."""

    def update(self: Any, api: Any) -> None:
        self.set_next_i0(self.i0 + 1)

    return type("OneChange", (module.ProbeBase,), {"__slots__": (), "update": update})


# --------------------------------------------------------------------------------------------
# helpers


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:8.2f}x" if floor > 0 else "     n/a"


def row(label: str, value: str, floor: str, times: str, goal: str) -> None:
    print(f"  {label:<40} {value:>14} {floor:>14} {times:>10}   {goal}")


def header(title: str) -> None:
    print(f"\n{title}")
    row("", "sengen", "floor", "ratio", "goal")


def rate(steps: float) -> str:
    return f"{steps:,.0f}/s"


class Looping(Component):
    """Publishes ``objects`` on ``bus`` (if any) and cycles at ``period``, ``work`` (if any)
    being called in every cycle."""

    def __init__(
        self,
        period: int,
        objects: list[Any] | None = None,
        bus: str = "",
        work: Callable[[], None] | None = None,
    ) -> None:
        self.period = period
        self.objects = objects or []
        self.bus = bus
        self.work = work

    def run(self, api: RunApi) -> None:
        if self.objects:
            source = api.get_source(self.bus)
            for obj in self.objects:
                source.add(obj)
        api.exec_loop(self.period, self.work)


def nothing() -> None:
    pass


# --------------------------------------------------------------------------------------------
# 1. master stepping


def bench_steps(count: int, steps: int) -> float:
    """Steps per second of ``TestKernel.step`` over ``steps`` steps of ``count`` components
    (after WARMUP_STEPS); every step cycles and commits all of them."""
    components = [(f"c{i}", Looping(HZ_100, work=nothing), 1) for i in range(count)]
    tk = TestKernel(components=components, config=load_config_text(VIRTUAL_TIME))
    try:
        stepped = tk.kernel.clock.stepped() if tk.kernel.clock is not None else []
        if len(stepped) != count:
            raise SystemExit(f"bench: {len(stepped)} stepped components, expected {count}")
        tk.step(WARMUP_STEPS)
        begin = time.perf_counter()
        tk.step(steps)
        wall = time.perf_counter() - begin
        if tk.get_time().ns != (WARMUP_STEPS + steps) * HZ_100:
            raise SystemExit(f"bench: the master is at {tk.get_time().ns} ns after the steps")
    finally:
        tk.close()
    return steps / wall


def floor_steps(count: int, steps: int) -> float:
    """Steps per second of ``count`` bare threads and the main thread on one
    ``Barrier(count + 1)``, two waits per step."""
    barrier = threading.Barrier(count + 1)
    total = WARMUP_STEPS + steps

    def body() -> None:
        wait = barrier.wait
        try:
            for _ in range(total):
                wait()  # processNoFlush
                wait()  # flushOutputs
        except threading.BrokenBarrierError:
            pass

    threads = [threading.Thread(target=body, name=f"floor-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    wait = barrier.wait
    try:
        for _ in range(WARMUP_STEPS):
            wait()
            wait()
        begin = time.perf_counter()
        for _ in range(steps):
            wait()
            wait()
        wall = time.perf_counter() - begin
    finally:
        barrier.abort()  # releases the threads should the main thread have failed
        for thread in threads:
            thread.join(JOIN_TIMEOUT_S)
    if any(thread.is_alive() for thread in threads):
        raise SystemExit("bench: a floor thread did not stop")
    return steps / wall


@dataclass
class Stepping:
    count: int
    sengen: float  # steps/s, best of REPEAT
    floor: float  # steps/s, best of REPEAT
    sengen_runs: list[float]
    floor_runs: list[float]


def measure_steps(count: int, steps: int) -> Stepping:
    sengen_runs: list[float] = []
    floor_runs: list[float] = []
    for _ in range(REPEAT):
        floor_runs.append(floor_steps(count, steps))
        sengen_runs.append(bench_steps(count, steps))
    return Stepping(count, max(sengen_runs), max(floor_runs), sengen_runs, floor_runs)


# --------------------------------------------------------------------------------------------
# 2. --until under virtual time


@dataclass
class Until:
    virtual_s: float
    wall: float  # Kernel.run, start-up and shut-down included
    stepping: float  # from the first to the last step's progress report
    steps: int  # progress reports, one per step
    cycles: int  # cycles the objects saw (i0 of every object, the same for all)


def bench_until(cls: Any, virtual_s: int) -> Until:
    objects = [cls(f"o{i}") for i in range(UNTIL_OBJECTS)]
    component = Looping(HZ_30, objects, "local.until")
    kernel = Kernel(load_config_text(VIRTUAL_TIME), [("until", component, 1)])
    reports: list[float] = []

    def progress(at: int) -> None:
        reports.append(time.perf_counter())

    begin = time.perf_counter()
    code = kernel.run(Duration.parse(f"{virtual_s} s"), progress)
    wall = time.perf_counter() - begin
    if code != 0:
        raise SystemExit(f"bench: the kernel exited with code {code}")
    counts = {obj.i0 for obj in objects}
    if len(counts) != 1:
        raise SystemExit(f"bench: the objects ran different numbers of cycles: {counts}")
    stepping = reports[-1] - reports[0] if len(reports) > 1 else float("nan")
    return Until(virtual_s, wall, stepping, len(reports), counts.pop())


# --------------------------------------------------------------------------------------------
# the report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="500 steps and a 10 s run")
    args = parser.parse_args(argv)
    steps = 500 if args.quick else 2000
    virtual_s = 10 if args.quick else 60

    print(
        f"sengen virtual-time benchmarks ({'quick' if args.quick else 'full'}),"
        f" Python {sys.version}"
    )
    header(
        f"1. master steps/s, N stepped components at 100 Hz doing nothing, {steps} steps,"
        f" best of {REPEAT}"
    )
    for count in COUNTS:
        result = measure_steps(count, steps)
        share = result.sengen / result.floor
        verdict = "ok" if share >= STEP_GOAL else "BELOW"
        row(
            f"N = {count}",
            rate(result.sengen),
            rate(result.floor),
            ratio(result.sengen, result.floor),
            f">= {STEP_GOAL:.2f}x floor: {verdict}",
        )
        runs = ", ".join(f"{s:,.0f}" for s in result.sengen_runs)
        floors = ", ".join(f"{s:,.0f}" for s in result.floor_runs)
        print(f"    runs: sengen {runs}; floor {floors}")

    with tempfile.TemporaryDirectory(prefix="sengen-bench-virtual-") as tmp:
        cls = changing_class(generate_fixture(Path(tmp)))
        until = bench_until(cls, virtual_s)
    print(
        f"\n2. --until {virtual_s} s under virtualTime, one 30 Hz component,"
        f" {UNTIL_OBJECTS} objects changing i0 every cycle"
    )
    print(f"  {'':<40} {'wall':>14} {'speed-up':>14}")
    print(
        f"  {'Kernel.run (start-up and shut-down incl.)':<40} {until.wall:>12.3f} s"
        f" {until.virtual_s / until.wall:>13.1f}x"
    )
    print(
        f"  {'stepping alone':<40} {until.stepping:>12.3f} s"
        f" {until.virtual_s / until.stepping:>13.1f}x"
    )
    print(
        f"    {until.steps} steps ({(until.steps - 1) / until.stepping:,.0f} steps/s),"
        f" {until.cycles} cycles per object"
    )
    left = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if left:
        print(f"    threads still alive: {', '.join(left)}")


if __name__ == "__main__":
    main()
