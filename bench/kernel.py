"""Kernel benchmarks under real time: ``python bench/kernel.py`` prints a table of figures.

Four parts (runtime.md §5.5, §7.1, §10.6), each measured against a bare-Python floor in the same
run and printed with the ratio (the benchmark reports; it never asserts a timing):

1. idle CPU: one 100 Hz component with 10 objects whose ``update()`` does nothing, as a share of
   one core (process CPU over wall time, and the component thread alone); the floor is a bare
   thread sleeping to absolute 100 Hz deadlines with ``time.sleep`` and doing nothing else;
2. start delay: ``lastCycleStartDelay`` of every cycle of a 100 Hz component, p50/p99; the floor
   is ``wake - deadline`` of the same bare loop over the same number of cycles (also shown: the
   same loop waiting on ``threading.Event.wait``, the wait the real-time loop uses);
3. a property change seen through a local proxy in another component: a producer whose N objects
   each change one property per cycle, a consumer with local proxies and one ``on_i0_changed``
   callback each; thread CPU per change on both sides (set_next → commit → drain → callback),
   with value checks on and off; the floor does the same hops in bare Python: a read and a dict
   write per change, a dirty list, a dict swap at commit and one callback call per change;
4. sustained load: 10 components x 100 objects x 10 changing properties at 30 Hz; the share of
   cycles lost (``missedFrameCount + oversleptCount`` over cycles run) and the process CPU.

The objects are ``bench_types.Probe`` (``bench/stl/bench_types``, shared with bench/codegen.py),
generated at the start of the run into a temporary folder and imported from there. Every kernel
run is bounded by ``until`` and stopped by its components once their window is measured.

``--quick`` shortens every window (1 s idle and delay, 2 s load).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fixture

from sengen.runtime import Duration, set_checks
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATED_ROOT = "sengen_bench_kernel_gen"  # the root package of the generated fixture
PROBE = "bench_types.Probe"

IDLE_CPU_GOAL = 0.02  # of one core
DELAY_GOAL = 2.0  # p99 over the floor's p99
CHANGE_GOAL = 4.0  # per change, over the floor
LOST_GOAL = 0.001  # of the cycles run

HZ_100 = 10_000_000  # ns
HZ_30 = 33_333_333
WARMUP = 20  # cycles before a window opens
NO_CONFIG = ""  # programmatic components only
KERNEL_BOUND_S = 30.0  # a kernel run never lasts longer than its window plus this


# --------------------------------------------------------------------------------------------
# the fixture


def generate_fixture(base: Path) -> Any:
    return fixture.generate_fixture(base, GENERATED_ROOT)


@dataclass
class Classes:
    """Implementations of ``Probe``: idle, one changing property, ten changing properties."""

    idle: Any
    one: Any
    ten: Any


def make_classes(module: Any) -> Classes:
    def idle_update(self: Any, api: Any) -> None:
        pass

    def one_update(self: Any, api: Any) -> None:
        self.set_next_i0(self.i0 + 1)

    def ten_update(self: Any, api: Any) -> None:
        v = self.i0 + 1
        f = float(v)
        self.set_next_i0(v)
        self.set_next_i1(v)
        self.set_next_i2(v)
        self.set_next_i3(v)
        self.set_next_i4(v)
        self.set_next_f0(f)
        self.set_next_f1(f)
        self.set_next_f2(f)
        self.set_next_f3(f)
        self.set_next_f4(f)

    def cls(name: str, update: Callable[[Any, Any], None]) -> Any:
        return type(name, (module.ProbeBase,), {"__slots__": (), "update": update})

    return Classes(
        cls("IdleProbe", idle_update), cls("OneChange", one_update), cls("TenChange", ten_update)
    )


# --------------------------------------------------------------------------------------------
# helpers


def percentile(values: list[int], q: float) -> float:
    """The q-quantile (0..1) of ``values``, linear between ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = q * (len(ordered) - 1)
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def run_kernel(components: list[tuple[str, Component, int]], window_s: float) -> Kernel:
    kernel = Kernel(load_config_text(NO_CONFIG), components)
    code = kernel.run(Duration(int((window_s + KERNEL_BOUND_S) * 1e9)))
    if code != 0:
        raise SystemExit(f"bench: the kernel exited with code {code}")
    return kernel


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:8.2f}x" if floor > 0 else "     n/a"


def row(label: str, value: str, floor: str, times: str, goal: str) -> None:
    print(f"  {label:<40} {value:>14} {floor:>14} {times:>10}   {goal}")


def header(title: str) -> None:
    print(f"\n{title}")
    row("", "sengen", "floor", "ratio", "goal")


@dataclass
class Window:
    """Wall, process CPU and thread CPU at the two ends of a measured window."""

    wall: float = 0.0
    process: float = 0.0
    thread: int = 0
    cycles: int = 0

    @staticmethod
    def now(cycles: int = 0) -> Window:
        return Window(time.perf_counter(), time.process_time(), time.thread_time_ns(), cycles)

    def since(self, start: Window) -> Window:
        return Window(
            self.wall - start.wall,
            self.process - start.process,
            self.thread - start.thread,
            self.cycles - start.cycles,
        )


class Warnings(logging.Handler):
    """Counts the real-time loop's WARNING lines (logger ``sengen.kernel``) instead of printing
    them in the middle of the table; each benchmark reports its own."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        self.lines[text] = self.lines.get(text, 0) + 1

    def take(self) -> str:
        lines, self.lines = self.lines, {}
        return ", ".join(f"{n} x '{text}'" for text, n in sorted(lines.items())) or "none"


WARNINGS = Warnings()


def capture_warnings() -> None:
    log = logging.getLogger("sengen.kernel")
    log.addHandler(WARNINGS)
    log.propagate = False


# --------------------------------------------------------------------------------------------
# the floor of 1 and 2: a bare thread at 100 Hz on absolute deadlines


@dataclass
class FloorLoop:
    cpu_share: float  # process CPU over wall time
    thread_share: float  # the loop thread's CPU over wall time
    delays: list[int]  # wake - deadline per cycle, ns


def floor_loop(cycles: int, wait: str) -> FloorLoop:
    """``cycles`` cycles after WARMUP of a thread sleeping to ``anchor + k·P`` and doing nothing
    but noting its wake-up; ``wait`` is ``sleep`` (time.sleep) or ``event`` (Event.wait)."""
    result: dict[str, Any] = {}
    stop = threading.Event()

    def body() -> None:
        delays: list[int] = []
        clock, sleep, period = time.time_ns, time.sleep, HZ_100
        pause: Callable[[float], object] = sleep if wait == "sleep" else stop.wait
        deadline = clock()
        start = Window.now()
        for k in range(WARMUP + cycles):
            if k == WARMUP:
                start = Window.now()
                delays.clear()
            deadline += period
            pause(max(deadline - clock(), 0) / 1e9)
            delays.append(clock() - deadline)
        result["window"] = Window.now().since(start)
        result["delays"] = delays

    thread = threading.Thread(target=body, name=f"floor-{wait}")
    thread.start()
    thread.join()
    w: Window = result["window"]
    return FloorLoop(w.process / w.wall, w.thread / 1e9 / w.wall, result["delays"])


# --------------------------------------------------------------------------------------------
# 1. idle CPU and 2. start delay: one 100 Hz component with 10 idle objects


class Measured(Component):
    """Publishes ``objects`` on ``bus`` and cycles at ``period``; ``on_cycle(api, k)`` runs in
    the work function of cycle k (k from 0) and returns True to stop the kernel."""

    def __init__(
        self,
        period: int,
        objects: list[Any],
        bus: str,
        on_cycle: Callable[[RunApi, int], bool],
        setup: Callable[[RunApi], None] | None = None,
    ) -> None:
        self.period = period
        self.objects = objects
        self.bus = bus
        self.on_cycle = on_cycle
        self.setup = setup

    def run(self, api: RunApi) -> None:
        source = api.get_source(self.bus)
        for obj in self.objects:
            source.add(obj)
        if self.setup is not None:
            self.setup(api)
        counter = [0]
        stopped = [False]

        def work() -> None:
            k = counter[0]
            counter[0] = k + 1
            if not stopped[0] and self.on_cycle(api, k):
                stopped[0] = True
                api.request_kernel_stop(0)

        api.exec_loop(self.period, work)


@dataclass
class Idle:
    cpu_share: float
    thread_share: float


def bench_idle(classes: Classes, cycles: int) -> Idle:
    ends: list[Window] = []

    def on_cycle(api: RunApi, k: int) -> bool:
        if k == WARMUP or k == WARMUP + cycles:
            ends.append(Window.now(k))
        return k >= WARMUP + cycles

    objects = [classes.idle(f"idle{i}") for i in range(10)]
    run_kernel([("idle", Measured(HZ_100, objects, "local.idle", on_cycle), 1)], cycles / 100)
    w = ends[1].since(ends[0])
    return Idle(w.process / w.wall, w.thread / 1e9 / w.wall)


def bench_delay(classes: Classes, cycles: int) -> list[int]:
    delays: list[int] = []

    def on_cycle(api: RunApi, k: int) -> bool:
        if k > WARMUP:
            delay = api.fetch_component_monitoring_info().last_cycle_start_delay
            assert delay is not None
            delays.append(delay.ns)
        return len(delays) >= cycles

    objects = [classes.idle(f"idle{i}") for i in range(10)]
    run_kernel([("delay", Measured(HZ_100, objects, "local.delay", on_cycle), 1)], cycles / 100)
    return delays


# --------------------------------------------------------------------------------------------
# 3. a property change through a local proxy


@dataclass
class Change:
    producer_ns: float  # producer thread CPU per change made
    consumer_ns: float  # consumer thread CPU per change observed
    observed: int  # changes the consumer's callbacks saw in its window
    made: int  # changes the producer made in its window
    consumer_cycles: int = 0  # cycles of the consumer's window
    lost: str = ""  # cycles lost per component over the whole run

    @property
    def total_ns(self) -> float:
        return self.producer_ns + self.consumer_ns


def bench_change(classes: Classes, objects: int, cycles: int, period: int) -> Change:
    """The producer's window is its cycles WARMUP..WARMUP+cycles; the consumer's opens once it
    holds every proxy and has seen changes for WARMUP cycles, and lasts as many cycles."""
    producer_ends: list[Window] = []
    consumer_ends: list[Window] = []
    counts: list[int] = []
    seen = [0]
    proxies: list[Any] = []

    def changed(value: int) -> None:
        seen[0] += 1

    def added(found: list[Any]) -> None:
        for proxy in found:
            proxies.append(proxy)
            proxy.on_i0_changed(changed)

    def subscribe(api: RunApi) -> None:
        api.select(f"SELECT {PROBE} FROM local.change", added)

    def produce(api: RunApi, k: int) -> bool:
        if k == WARMUP or k == WARMUP + cycles:
            producer_ends.append(Window.now(k))
        return False  # the consumer stops the kernel

    opened = [-1]

    def consume(api: RunApi, k: int) -> bool:
        if opened[0] < 0:
            if len(proxies) == objects and seen[0] > 0:
                opened[0] = k + WARMUP
            return False
        if k == opened[0] or k == opened[0] + cycles:
            consumer_ends.append(Window.now(k))
            counts.append(seen[0])
        # Stop once both windows are closed.
        return len(consumer_ends) == 2 and len(producer_ends) == 2

    made = [classes.one(f"p{i}") for i in range(objects)]
    producer = Measured(period, made, "local.change", produce)
    consumer = Measured(period, [], "local.none", consume, subscribe)
    kernel = run_kernel(
        [("producer", producer, 1), ("consumer", consumer, 1)], 3 * cycles * period / 1e9
    )
    if len(consumer_ends) < 2 or len(producer_ends) < 2:
        raise SystemExit("bench: the change benchmark did not complete its windows")
    p = producer_ends[1].since(producer_ends[0])
    c = consumer_ends[1].since(consumer_ends[0])
    observed = counts[1] - counts[0]
    lost = []
    for runner in kernel.components:
        info = runner.monitoring()
        missed, overslept = info.missed_frame_count, info.overslept_count
        lost.append(f"{runner.name} {missed} missed + {overslept} overslept")
    return Change(
        p.thread / (objects * p.cycles),
        c.thread / observed,
        observed,
        objects * p.cycles,
        c.cycles,
        ", ".join(lost),
    )


class FloorChanging:
    """The floor's object: current and next dicts, and the callbacks of ``i0``."""

    __slots__ = ("callbacks", "current", "next")

    def __init__(self) -> None:
        self.current: dict[str, int] = {"i0": 0}
        self.next: dict[str, int] = {"i0": 0}
        self.callbacks: list[Callable[[int], None]] = []


def floor_change(objects: int, cycles: int, repeat: int = 5) -> Change:
    """Per change, the same hops as the measured path: a read and a dict write (set_next) with
    the object noted dirty, a swap of its dicts (commit), the changed objects handed over, and one
    callback call with the new value (drain). The median of ``repeat`` runs, each side timed on
    its own (thread CPU)."""
    seen = [0]

    def changed(value: int) -> None:
        seen[0] += 1

    items = [FloorChanging() for _ in range(objects)]
    for item in items:
        item.callbacks.append(changed)
    producer: list[int] = []
    consumer: list[int] = []
    for _ in range(repeat):
        spent_p = spent_c = 0
        clock = time.thread_time_ns
        for _ in range(cycles):
            t0 = clock()
            dirty: list[FloorChanging] = []
            for item in items:  # update: set_next
                item.next["i0"] = item.current["i0"] + 1
                dirty.append(item)
            for item in dirty:  # commit: swap
                item.current, item.next = item.next, item.current
            sent = dirty
            t1 = clock()
            for item in sent:  # drain: one callback per change
                value = item.current["i0"]
                for callback in item.callbacks:
                    callback(value)
            t2 = clock()
            spent_p += t1 - t0
            spent_c += t2 - t1
        producer.append(spent_p)
        consumer.append(spent_c)
    made = objects * cycles
    assert seen[0] == made * repeat
    return Change(
        statistics.median(producer) / made, statistics.median(consumer) / made, made, made
    )


# --------------------------------------------------------------------------------------------
# 4. sustained load


@dataclass
class Load:
    cycles: int  # cycles run in the window, all components
    lost: int  # missedFrameCount + oversleptCount in the window, all components
    lost_total: int  # the same over the whole run, start-up included
    overruns: int  # overrunCount in the window, all components
    cpu_share: float  # process CPU over wall time in the window
    wall: float


def bench_load(
    classes: Classes, components: int, objects: int, cycles: int, period: int = HZ_30
) -> Load:
    """Every component publishes ``objects`` TenChange objects on its own bus. The window of
    each opens at its WARMUP cycle and closes when component 0 has run ``cycles`` more (it stops
    the kernel); counters are read from each component's own monitoring at both ends."""
    first: dict[int, tuple[int, int, int]] = {}
    last: dict[int, tuple[int, int, int]] = {}
    ends: list[Window] = []

    def reading(api: RunApi, k: int) -> tuple[int, int, int]:
        info = api.fetch_component_monitoring_info()
        missed, overslept, overrun = (
            info.missed_frame_count,
            info.overslept_count,
            info.overrun_count,
        )
        assert missed is not None and overslept is not None and overrun is not None
        return k, missed + overslept, overrun

    def on_cycle_of(index: int) -> Callable[[RunApi, int], bool]:
        def on_cycle(api: RunApi, k: int) -> bool:
            if k == WARMUP:
                first[index] = reading(api, k)
            elif k > WARMUP:
                last[index] = reading(api, k)
            if index == 0 and (k == WARMUP or k == WARMUP + cycles):
                ends.append(Window.now(k))
                return k == WARMUP + cycles
            return False

        return on_cycle

    entries: list[tuple[str, Component, int]] = []
    for c in range(components):
        made = [classes.ten(f"c{c}o{i}") for i in range(objects)]
        component = Measured(period, made, f"local.load{c}", on_cycle_of(c))
        entries.append((f"load{c}", component, 1))
    kernel = run_kernel(entries, cycles * period / 1e9)
    if len(ends) < 2 or len(last) < components:
        raise SystemExit("bench: the load benchmark did not complete its window")
    run = sum(last[i][0] - first[i][0] for i in range(components))
    lost = sum(last[i][1] - first[i][1] for i in range(components))
    overruns = sum(last[i][2] - first[i][2] for i in range(components))
    total = 0
    for runner in kernel.components:
        info = runner.monitoring()
        total += (info.missed_frame_count or 0) + (info.overslept_count or 0)
    w = ends[1].since(ends[0])
    # Lost cycles were not run: the slots of the window are the cycles run plus those lost.
    return Load(run + lost, lost, total, overruns, w.process / w.wall, w.wall)


# --------------------------------------------------------------------------------------------
# the report


def us(ns: float) -> str:
    return f"{ns / 1e3:.1f} µs"


def pct(share: float) -> str:
    return f"{100 * share:.2f} %"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="shorter windows")
    parser.add_argument("--objects", type=int, default=1000, help="objects of the change bench")
    args = parser.parse_args(argv)
    idle_cycles = 100 if args.quick else 300
    load_cycles = 60 if args.quick else 150
    change_period = 20_000_000  # 50 Hz: room for 1000 changes a cycle on both sides
    change_cycles = 50 if args.quick else 150

    print(f"sengen kernel benchmarks ({'quick' if args.quick else 'full'}), Python {sys.version}")
    with tempfile.TemporaryDirectory(prefix="sengen-bench-kernel-") as tmp:
        module = generate_fixture(Path(tmp))
        capture_warnings()
        classes = make_classes(module)

        sleeping = floor_loop(idle_cycles, "sleep")
        waiting = floor_loop(idle_cycles, "event")
        idle = bench_idle(classes, idle_cycles)
        delays = bench_delay(classes, idle_cycles)

        header(f"1. idle CPU, one 100 Hz component, 10 idle objects, {idle_cycles} cycles")
        row(
            "process CPU, % of one core",
            pct(idle.cpu_share),
            pct(sleeping.cpu_share),
            ratio(idle.cpu_share, sleeping.cpu_share),
            f"<= {pct(IDLE_CPU_GOAL)}",
        )
        row(
            "component thread CPU, % of one core",
            pct(idle.thread_share),
            pct(sleeping.thread_share),
            ratio(idle.thread_share, sleeping.thread_share),
            "",
        )
        print(f"    warnings (idle and delay runs): {WARNINGS.take()}")

        header(f"2. start delay of a 100 Hz component, {len(delays)} cycles")
        for label, q in (("p50", 0.5), ("p99", 0.99)):
            value, floor = percentile(delays, q), percentile(sleeping.delays, q)
            goal = f"<= {DELAY_GOAL:.0f}x floor" if q == 0.99 else ""
            row(f"lastCycleStartDelay {label}", us(value), us(floor), ratio(value, floor), goal)
        for label, q in (("p50", 0.5), ("p99", 0.99)):
            value, floor = percentile(delays, q), percentile(waiting.delays, q)
            row(f"  vs an Event.wait floor, {label}", us(value), us(floor), ratio(value, floor), "")
        row("max", us(max(delays)), us(max(sleeping.delays)), "", "")

        header(
            f"3. property change through a local proxy, {args.objects} objects at 50 Hz,"
            f" {change_cycles} cycles"
        )
        bare = floor_change(args.objects, change_cycles)
        for checks in (True, False):
            set_checks(checks)
            try:
                change = bench_change(classes, args.objects, change_cycles, change_period)
            finally:
                set_checks(True)
            state = "on" if checks else "off"
            row(
                f"producer CPU per change (checks {state})",
                us(change.producer_ns),
                us(bare.producer_ns),
                ratio(change.producer_ns, bare.producer_ns),
                "",
            )
            row(
                f"consumer CPU per change (checks {state})",
                us(change.consumer_ns),
                us(bare.consumer_ns),
                ratio(change.consumer_ns, bare.consumer_ns),
                "",
            )
            row(
                f"both sides per change (checks {state})",
                us(change.total_ns),
                us(bare.total_ns),
                ratio(change.total_ns, bare.total_ns),
                f"<= {CHANGE_GOAL:.0f}x floor",
            )
            print(
                f"    producer window: {change.made} changes made; consumer window:"
                f" {change.observed} observed in {change.consumer_cycles} cycles"
            )
            print(f"    lost over the run: {change.lost}; warnings: {WARNINGS.take()}")

        load = bench_load(classes, 10, 100, load_cycles)
        header("4. sustained load, 10 components x 100 objects x 10 properties at 30 Hz")
        row(
            "cycles lost (missed + overslept)",
            f"{load.lost}/{load.cycles}",
            "",
            "",
            f"share {pct(load.lost / load.cycles)}, goal < {pct(LOST_GOAL)}",
        )
        row("  lost over the whole run, start-up incl.", f"{load.lost_total}", "", "", "")
        row("overruns in the window", f"{load.overruns}", "", "", "")
        row(f"process CPU, % of one core ({load.wall:.1f} s)", pct(load.cpu_share), "", "", "")
        print(f"    warnings: {WARNINGS.take()}")


if __name__ == "__main__":
    main()
