"""Code-generator and runtime benchmarks: ``python bench/codegen.py`` prints a table of figures.

Two parts (codegen.md §10, runtime.md §10.6):

* the generator: ``sengen build`` of every resolvable corpus file into one tree (the stl.md §11.3
  main run without the four HLA FOM files, the §11.2 include roots, cwd the corpus root), cold in
  a fresh interpreter, a no-op rebuild of the same tree (the ``sengen build`` command as a user
  runs it, a whole process), and the import of the built tree (every module, in a fresh
  interpreter: the cost of creating the declared classes);
* the hot paths of generated code, each as a ratio to a bare-Python floor measured in the same
  run: a property read, ``set_next`` plus the commit of one and of ten changed properties, an
  event emitted and delivered to one subscriber, the construction of a 5-field struct.

The hot paths use the fixture ``bench/stl/bench_types``, generated at the start of the run into a
temporary folder and imported from there. Each figure is the minimum over several repeats of a
timed loop (timeit-style, in the measuring thread's CPU time; the sengen path and its floor
alternate, so that both see the same machine), with value checks on (their default) and off
(``sengen.runtime.set_checks(False)``).

A floor performs the same hops as the operation it stands for, and nothing else; each floor is a
small explicit function below, next to its sengen counterpart, with the same loop around it.

``--quick`` shortens every repeat (still at least 7 of them) and builds the corpus once fewer;
``--no-build`` skips the generator part; ``--profile`` prints a cProfile of the sengen paths.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import io
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import fixture

REPO_ROOT = Path(__file__).resolve().parent.parent
GENERATED_ROOT = "sengen_bench_gen"  # the root package of the generated fixture
# The corpus layout (include roots, FOM files) is shared with the tests.
sys.path.insert(0, str(REPO_ROOT / "tests"))
from corpus_layout import DEFAULT_INCLUDES, FOM_FILES, corpus_path, main_run  # noqa: E402

CORPUS = corpus_path()
BUILD_COLD_GOAL_S = 2.0  # the whole process
BUILD_NOOP_GOAL_S = 0.3  # the whole process

perf_counter = time.perf_counter
# The hot paths are timed in CPU time of the measuring thread: on a shared, loaded machine the
# time other processes take the core is then in neither side of a ratio.
cpu_clock = time.thread_time

# A loop function runs its body ``loops`` times and returns the elapsed seconds.
Loop = Callable[[int], float]


# --------------------------------------------------------------------------------------------
# the generator


def corpus_build_files() -> list[str]:
    """The resolvable corpus in one tree: the main run without the FOM files (corpus-relative)."""
    if not CORPUS.is_dir():
        sys.exit(f"bench: the Sen STL corpus is missing: expected {CORPUS}")
    every = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.stl"))
    return [f for f in main_run(every) if f not in FOM_FILES]


def build_child(output: str) -> None:
    """Runs in a fresh interpreter: times ``import sengen`` and one ``sengen.generate`` of the
    corpus into ``output``, prints JSON."""
    files = corpus_build_files()
    start = perf_counter()
    import sengen

    imported = perf_counter()
    with contextlib.chdir(CORPUS):
        result = sengen.generate(
            [CORPUS / f for f in files],
            output=Path(output).resolve(),
            include_paths=[CORPUS / i for i in DEFAULT_INCLUDES],
        )
    end = perf_counter()
    errors = [d.format_header() for d in result.diagnostics if d.is_error]
    lines = sum(len(p.read_bytes().splitlines()) for p in result.written if p.suffix == ".py")
    figures = {
        "import": imported - start,
        "generate": end - imported,
        "total": end - start,
        "inputs": len(files),
        "written": len(result.written),
        "unchanged": len(result.unchanged),
        "up_to_date": result.up_to_date,
        "lines": lines,
        "errors": errors[:3],
    }
    print(json.dumps(figures))


def build_once(output: Path) -> dict[str, Any]:
    """One build in a fresh interpreter; adds ``wall``, the whole process as a user sees it."""
    args = [sys.executable, str(Path(__file__).resolve()), "--build-child", str(output)]
    start = perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, timeout=900, check=False)
    wall = perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bench: a corpus build failed:\n{result.stderr}")
    figures: dict[str, Any] = json.loads(result.stdout)
    if figures["errors"]:
        raise SystemExit(f"bench: the corpus build has errors: {figures['errors']}")
    figures["wall"] = wall
    return figures


def noop_once(output: Path) -> dict[str, Any]:
    """``sengen build`` of the built tree again, as a user runs it (the CLI, a fresh process):
    the manifest shows nothing to do."""
    includes = [arg for i in DEFAULT_INCLUDES for arg in ("-I", i)]
    args = [sys.executable, "-m", "sengen", "build", *corpus_build_files(), *includes]
    start = perf_counter()
    result = subprocess.run(
        [*args, "--out", str(output)],
        cwd=CORPUS,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    wall = perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bench: the no-op rebuild failed:\n{result.stderr}")
    return {"wall": wall, "up_to_date": result.stdout.startswith("sengen: up to date")}


@dataclass
class BuildFigures:
    cold: dict[str, Any]
    noop: dict[str, Any]  # the cold tree built again: nothing to do
    imported: float  # seconds to import every module of the built tree (min of several)


IMPORT_SCRIPT = """
import importlib, pkgutil, sys, time
import sengen.runtime.abi
start = time.perf_counter()
package = importlib.import_module("corpus_gen")
for info in pkgutil.walk_packages(package.__path__, "corpus_gen."):
    importlib.import_module(info.name)
print(time.perf_counter() - start)
"""


def import_once(tree: Path) -> float:
    """Seconds to import every module of the built tree, in a fresh interpreter (the
    runtime itself imported before the clock starts)."""
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_SCRIPT],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return float(run.stdout)


def build_benchmark(noop_repeat: int) -> BuildFigures:
    with tempfile.TemporaryDirectory(prefix="sengen-bench-") as tmp:
        base = Path(tmp)
        cold = build_once(base / "cold" / "corpus_gen")
        noops = [noop_once(base / "cold" / "corpus_gen") for _ in range(max(noop_repeat, 3))]
        import_once(base / "cold")  # compiles the bytecode
        imported = min(import_once(base / "cold") for _ in range(max(noop_repeat, 3)))
    return BuildFigures(cold, min(noops, key=lambda f: float(f["wall"])), imported)


# --------------------------------------------------------------------------------------------
# the fixture


def generate_fixture(base: Path) -> Any:
    return fixture.generate_fixture(base, GENERATED_ROOT)


@dataclass
class Fixture:
    """The generated module, a bound native object, its context, a proxy and the floor's twins."""

    module: Any
    ctx: Any  # sengen.runtime.Context, the owner
    obj: Any  # a ProbeBase subclass instance bound to ctx
    proxy: Any  # a ProbeLocalProxy of obj in another context
    received: list[int]  # what the event subscriber got (a correctness check)


PROPS_I32 = ("i0", "i1", "i2", "i3", "i4")
PROPS_F64 = ("f0", "f1", "f2", "f3", "f4")


def make_fixture(module: Any) -> Fixture:
    from sengen.runtime.objects.context import Context

    probe = type("BenchProbe", (module.ProbeBase,), {"__slots__": ()})
    ctx = Context("bench")
    obj = probe("probe")
    obj._bind_(ctx, "local.bench", 0)
    reader = Context("reader")
    proxy = module.ProbeLocalProxy(obj, reader)
    received: list[int] = []
    return Fixture(module, ctx, obj, proxy, received)


# --------------------------------------------------------------------------------------------
# the floors' plain-Python twins


class FloorObject:
    """A plain slotted object with the ten properties' slots: the floors' data layout."""

    __slots__ = ("f0", "f1", "f2", "f3", "f4", "i0", "i1", "i2", "i3", "i4")
    f0: float
    f1: float
    f2: float
    f3: float
    f4: float
    i0: int
    i1: int
    i2: int
    i3: int
    i4: int

    def __init__(self) -> None:
        for name in PROPS_I32:
            setattr(self, name, 0)
        for name in PROPS_F64:
            setattr(self, name, 0.0)


# The current values live in slots, reached by key through the slot descriptor's cached
# accessors: the one lookup per key that any keyed commit into slots needs.
FLOOR_ACCESS: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], None]]] = {
    name: (getattr(FloorObject, name).__get__, getattr(FloorObject, name).__set__)
    for name in PROPS_I32 + PROPS_F64
}


@dataclass(slots=True)
class FloorStruct:
    """The struct floor: a ``dataclass(slots=True)`` of five fields."""

    a: int
    b: int
    c: float
    d: float
    e: int


# --------------------------------------------------------------------------------------------
# property read: ``value = obj.i0``, ten reads per iteration on both sides (the loop costs as
# much as a read, so unrolling keeps it from dominating either figure)

READS = 10


def read_native(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        obj = fx.obj
        value = None
        start = cpu_clock()
        for _ in repeat(None, loops):
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
        elapsed = cpu_clock() - start
        assert value is not None
        return elapsed

    return loop


def read_proxy(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        obj = fx.proxy
        value = None
        start = cpu_clock()
        for _ in repeat(None, loops):
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
        elapsed = cpu_clock() - start
        assert value is not None
        return elapsed

    return loop


def read_floor(fx: Fixture) -> Loop:
    """Floor: a plain ``__slots__`` attribute read."""

    def loop(loops: int) -> float:
        obj = FloorObject()
        value = None
        start = cpu_clock()
        for _ in repeat(None, loops):
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
            value = obj.i0
        elapsed = cpu_clock() - start
        assert value is not None
        return elapsed

    return loop


# --------------------------------------------------------------------------------------------
# set_next + commit of one property: two cycles per iteration (a, then b), so that every commit
# changes the value


def commit_one(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        obj, ctx, t = fx.obj, fx.ctx, 0
        a, b = 1, 2
        with ctx.active():
            start = cpu_clock()
            for _ in repeat(None, loops):
                obj.set_next_i0(a)
                ctx.commit(t)
                obj.set_next_i0(b)
                ctx.commit(t)
            elapsed = cpu_clock() - start
        assert obj.i0 == b
        return elapsed

    return loop


def commit_one_floor(fx: Fixture) -> Loop:
    """Floor: write into the object's next-dict and the context's dirty set; commit: for each
    dirty object, each pending value is compared with the current one (STL equality: ``!=``
    except that two NaNs are equal), copied into the current slot where it differs (the values
    are immutable, so the copy is the store) and appended to the change list; then the
    next-dict, the dirty set and the change list are emptied."""

    def loop(loops: int) -> float:
        obj = FloorObject()
        pending: dict[str, Any] = {}  # the object's next-dict
        dirty: set[FloorObject] = set()  # the context's dirty set
        changed: list[str] = []  # the commit's change list
        access = FLOOR_ACCESS
        a, b = 1, 2
        start = cpu_clock()
        for _ in repeat(None, loops):
            # cycle 1 -- set_next: the pending write, the dirty mark
            pending["i0"] = a
            dirty.add(obj)
            # commit
            for o in dirty:
                for key, value in pending.items():
                    get, put = access[key]
                    current = get(o)
                    if value != current and (value == value or current == current):
                        put(o, value)
                        changed.append(key)
                pending.clear()
            dirty.clear()
            changed.clear()
            # cycle 2: the same with b
            pending["i0"] = b
            dirty.add(obj)
            for o in dirty:
                for key, value in pending.items():
                    get, put = access[key]
                    current = get(o)
                    if value != current and (value == value or current == current):
                        put(o, value)
                        changed.append(key)
                pending.clear()
            dirty.clear()
            changed.clear()
        elapsed = cpu_clock() - start
        assert obj.i0 == b
        return elapsed

    return loop


# --------------------------------------------------------------------------------------------
# set_next + commit of ten properties of one object (five i32, five f64): two cycles per
# iteration, every property changing in each


def commit_ten(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        obj, ctx, t = fx.obj, fx.ctx, 0
        a, b, fa, fb = 1, 2, 1.5, 2.5
        with ctx.active():
            start = cpu_clock()
            for _ in repeat(None, loops):
                obj.set_next_i0(a)
                obj.set_next_i1(a)
                obj.set_next_i2(a)
                obj.set_next_i3(a)
                obj.set_next_i4(a)
                obj.set_next_f0(fa)
                obj.set_next_f1(fa)
                obj.set_next_f2(fa)
                obj.set_next_f3(fa)
                obj.set_next_f4(fa)
                ctx.commit(t)
                obj.set_next_i0(b)
                obj.set_next_i1(b)
                obj.set_next_i2(b)
                obj.set_next_i3(b)
                obj.set_next_i4(b)
                obj.set_next_f0(fb)
                obj.set_next_f1(fb)
                obj.set_next_f2(fb)
                obj.set_next_f3(fb)
                obj.set_next_f4(fb)
                ctx.commit(t)
            elapsed = cpu_clock() - start
        assert (obj.i4, obj.f4) == (b, fb)
        return elapsed

    return loop


def commit_ten_floor(fx: Fixture) -> Loop:
    """Floor: as for one property, with ten pending writes (each marking the object dirty, as
    each ``set_next`` must) and one commit of the ten."""

    def loop(loops: int) -> float:
        obj = FloorObject()
        pending: dict[str, Any] = {}
        dirty: set[FloorObject] = set()
        changed: list[str] = []
        access = FLOOR_ACCESS
        a, b, fa, fb = 1, 2, 1.5, 2.5
        start = cpu_clock()
        for _ in repeat(None, loops):
            # cycle 1 -- ten set_next
            pending["i0"] = a
            dirty.add(obj)
            pending["i1"] = a
            dirty.add(obj)
            pending["i2"] = a
            dirty.add(obj)
            pending["i3"] = a
            dirty.add(obj)
            pending["i4"] = a
            dirty.add(obj)
            pending["f0"] = fa
            dirty.add(obj)
            pending["f1"] = fa
            dirty.add(obj)
            pending["f2"] = fa
            dirty.add(obj)
            pending["f3"] = fa
            dirty.add(obj)
            pending["f4"] = fa
            dirty.add(obj)
            # commit
            for o in dirty:
                for key, value in pending.items():
                    get, put = access[key]
                    current = get(o)
                    if value != current and (value == value or current == current):
                        put(o, value)
                        changed.append(key)
                pending.clear()
            dirty.clear()
            changed.clear()
            # cycle 2: the same with b and fb
            pending["i0"] = b
            dirty.add(obj)
            pending["i1"] = b
            dirty.add(obj)
            pending["i2"] = b
            dirty.add(obj)
            pending["i3"] = b
            dirty.add(obj)
            pending["i4"] = b
            dirty.add(obj)
            pending["f0"] = fb
            dirty.add(obj)
            pending["f1"] = fb
            dirty.add(obj)
            pending["f2"] = fb
            dirty.add(obj)
            pending["f3"] = fb
            dirty.add(obj)
            pending["f4"] = fb
            dirty.add(obj)
            for o in dirty:
                for key, value in pending.items():
                    get, put = access[key]
                    current = get(o)
                    if value != current and (value == value or current == current):
                        put(o, value)
                        changed.append(key)
                pending.clear()
            dirty.clear()
            changed.clear()
        elapsed = cpu_clock() - start
        assert (obj.i4, obj.f4) == (b, fb)
        return elapsed

    return loop


# --------------------------------------------------------------------------------------------
# an event emitted and delivered to one subscriber: emit, the owner's commit, the subscriber's
# drain (where its callback runs); two cycles per iteration like the commits


def event_one(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        obj, ctx, t = fx.obj, fx.ctx, 0
        a, b = 1, 2
        received = fx.received
        received.clear()

        def callback(count: int) -> None:
            pass

        with ctx.active():
            check = obj.events.ticked.connect(received.append)
            obj.events.ticked.emit(a)
            ctx.commit(t)
            ctx.drain()
            check.close()
            sub = obj.events.ticked.connect(callback)
            start = cpu_clock()
            for _ in repeat(None, loops):
                obj.events.ticked.emit(a)
                ctx.commit(t)
                ctx.drain()
                obj.events.ticked.emit(b)
                ctx.commit(t)
                ctx.drain()
            elapsed = cpu_clock() - start
            sub.close()
        assert received == [a]
        return elapsed

    return loop


class FloorSubscription:
    """The floor's subscription: a callback and whether it was closed."""

    __slots__ = ("callback", "closed")

    def __init__(self, callback: Callable[[int], None]) -> None:
        self.callback = callback
        self.closed = False


def event_one_floor(fx: Fixture) -> Loop:
    """Floor: the hops an event must take (runtime.md §3.8). Emit appends the emitting object,
    the event and the argument tuple to the owner's buffer; the commit looks up each
    emission's subscribers (by object and event) and moves the emission into each subscriber's
    work queue (a deque, as the subscriber may be another thread); the drain pops it and calls
    the callback unless the subscription was closed meanwhile. Skipping the queue, the lookup
    or the closed check would measure a delivery sengen is not allowed to make."""

    def loop(loops: int) -> float:
        owner = FloorObject()
        emitted: list[tuple[FloorObject, str, tuple[int]]] = []
        queue: deque[tuple[FloorSubscription, tuple[int]]] = deque()
        a, b = 1, 2

        def callback(count: int) -> None:
            pass

        subscribers = {owner: {"ticked": [FloorSubscription(callback)]}}
        start = cpu_clock()
        for _ in repeat(None, loops):
            for value in (a, b):
                emitted.append((owner, "ticked", (value,)))
                for obj, event, args in emitted:
                    for subscription in subscribers[obj].get(event, ()):
                        queue.append((subscription, args))
                emitted.clear()
                for _ in range(len(queue)):
                    subscription, args = queue.popleft()
                    if not subscription.closed:
                        subscription.callback(*args)
        return cpu_clock() - start

    return loop


# --------------------------------------------------------------------------------------------
# constructing a 5-field struct value: two constructions per iteration


def struct_new(fx: Fixture) -> Loop:
    def loop(loops: int) -> float:
        sample = fx.module.Sample
        start = cpu_clock()
        for _ in repeat(None, loops):
            sample(1, 2, 1.5, 2.5, 3)
            sample(4, 5, 6.5, 7.5, 8)
        return cpu_clock() - start

    return loop


def struct_floor(fx: Fixture) -> Loop:
    """Floor: constructing a ``dataclass(slots=True)`` of five fields."""

    def loop(loops: int) -> float:
        sample = FloorStruct
        start = cpu_clock()
        for _ in repeat(None, loops):
            sample(1, 2, 1.5, 2.5, 3)
            sample(4, 5, 6.5, 7.5, 8)
        return cpu_clock() - start

    return loop


# --------------------------------------------------------------------------------------------
# measurement


@dataclass(frozen=True)
class Case:
    label: str
    unit: str  # what one operation is
    per: int  # operations per loop iteration
    goal: float  # the largest acceptable ratio
    sengen: Callable[[Fixture], Loop]
    floor: Callable[[Fixture], Loop]


CASES = (
    Case("property read, native object", "read", READS, 1.1, read_native, read_floor),
    Case("property read, local proxy", "read", READS, 1.1, read_proxy, read_floor),
    Case("set_next + commit, 1 property", "cycle", 2, 3.0, commit_one, commit_one_floor),
    Case("set_next + commit, 10 properties", "cycle", 2, 3.0, commit_ten, commit_ten_floor),
    Case("emit + commit + drain, 1 subscriber", "cycle", 2, 3.0, event_one, event_one_floor),
    Case("struct of 5 fields, construction", "value", 2, 2.0, struct_new, struct_floor),
)


def calibrate(loop: Loop, budget: float) -> int:
    """The number of iterations that takes at least ``budget`` seconds (powers of two)."""
    loops = 1
    while True:
        if loop(loops) >= budget or loops >= 1 << 30:
            return loops
        loops *= 2


@dataclass(frozen=True)
class Figure:
    case: Case
    checks: bool
    sengen_ns: float
    floor_ns: float

    @property
    def ratio(self) -> float:
        return self.sengen_ns / self.floor_ns


def measure(case: Case, fx: Fixture, repeats: int, budget: float) -> list[Figure]:
    """Min of ``repeats`` timed runs of each side: the sengen path with checks on, with checks
    off and the floor take turns, so that all three see the same moments of the machine."""
    from sengen.runtime import set_checks

    collecting = gc.isenabled()
    gc.disable()  # as timeit does: a collection landing in one timed run is noise
    try:
        measured, floor = case.sengen(fx), case.floor(fx)
        n_measured, n_floor = calibrate(measured, budget), calibrate(floor, budget)
        best = {True: float("inf"), False: float("inf")}
        best_floor = float("inf")
        for _ in range(repeats):
            for checks in (True, False):
                set_checks(checks)
                best[checks] = min(best[checks], measured(n_measured) / n_measured)
            set_checks(True)
            best_floor = min(best_floor, floor(n_floor) / n_floor)
    finally:
        set_checks(True)
        if collecting:
            gc.enable()
    scale = 1e9 / case.per
    return [Figure(case, c, best[c] * scale, best_floor * scale) for c in (True, False)]


def runtime_benchmark(fx: Fixture, repeats: int, budget: float) -> list[Figure]:
    return [figure for case in CASES for figure in measure(case, fx, repeats, budget)]


def profile(fx: Fixture, budget: float) -> str:
    """cProfile of each sengen path, by own time (the profiler inflates small calls evenly)."""
    from sengen.runtime import set_checks

    out = io.StringIO()
    for case in CASES[2:5]:
        for checks in (True, False):
            set_checks(checks)
            loop = case.sengen(fx)
            loops = calibrate(loop, budget)
            profiler = cProfile.Profile()
            profiler.enable()
            loop(loops)
            profiler.disable()
            set_checks(True)
            out.write(f"\n== {case.label}, checks {'on' if checks else 'off'}: {loops} loops\n")
            stats = pstats.Stats(profiler, stream=out)
            stats.strip_dirs().sort_stats("tottime").print_stats(14)
    return out.getvalue()


# --------------------------------------------------------------------------------------------
# output


def runtime_table(figures: Sequence[Figure], repeats: int) -> list[str]:
    header = (
        f"{'operation':<46} {'checks':>6} {'sengen ns/op':>13} {'floor ns/op':>12}"
        f" {'ratio':>7} {'goal':>6}  verdict"
    )
    lines = [f"hot paths: min of {repeats} repeats, ns per operation", "", header, "-" * 104]
    for f in figures:
        verdict = "ok" if f.ratio <= f.case.goal else "MISSED"
        label = f"{f.case.label} (/{f.case.unit})"
        lines.append(
            f"{label:<46} {'on' if f.checks else 'off':>6} {f.sengen_ns:13.1f} {f.floor_ns:12.1f}"
            f" {f.ratio:6.2f}x {f.case.goal:5.1f}x  {verdict}"
        )
    return lines


def build_table(build: BuildFigures) -> list[str]:
    cold, noop = build.cold, build.noop

    def row(label: str, seconds: float, goal: float | None = None, note: str = "") -> str:
        verdict = "" if goal is None else ("ok" if seconds <= goal else "MISSED")
        goal_text = f"{goal:g} s" if goal is not None else ""
        return f"{label:<60} {seconds:9.3f} s {goal_text:>7}  {verdict:<6} {note}".rstrip()

    return [
        f"generator: sengen build of {cold['inputs']} resolvable corpus files into one tree"
        " (main run without the FOM files)",
        "",
        f"{'figure':<60} {'value':>11} {'goal':>7}",
        "-" * 96,
        row(
            "cold build, fresh process (interpreter start incl.)",
            cold["wall"],
            BUILD_COLD_GOAL_S,
            f"{cold['written']} files, {cold['lines']} lines",
        ),
        row("  import sengen", cold["import"]),
        row("  sengen.generate (load, render, write)", cold["generate"]),
        row(
            "no-op rebuild: the sengen build command, fresh process",
            noop["wall"],
            BUILD_NOOP_GOAL_S,
            f"up to date: {noop['up_to_date']}",
        ),
        row("import of every module of the built tree, fresh process", build.imported),
    ]


def benchmark(quick: bool, build: bool, show_profile: bool) -> int:
    # Many short runs: on a noisy shared machine a short run is likelier to see a quiet moment.
    repeats = 7 if quick else 21
    budget = 0.01 if quick else 0.02  # seconds per timed run
    lines = [
        "sengen code generator and runtime benchmarks (codegen.md §10, runtime.md §10.6)",
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs" + (", --quick" if quick else ""),
        "",
    ]
    if build:
        figures = build_benchmark(noop_repeat=1 if quick else 3)
        lines += [*build_table(figures), ""]
    with tempfile.TemporaryDirectory(prefix="sengen-bench-") as tmp, fixture_on_path(Path(tmp)):
        fx = make_fixture(generate_fixture(Path(tmp)))
        table = runtime_table(runtime_benchmark(fx, repeats, budget), repeats)
        lines += table
        print("\n".join(lines))
        if show_profile:
            print(profile(fx, budget))
    return 0


@contextlib.contextmanager
def fixture_on_path(base: Path) -> Iterator[None]:
    """Forget the generated modules and ``base`` on ``sys.path`` afterwards."""
    try:
        yield
    finally:
        if str(base) in sys.path:
            sys.path.remove(str(base))
        for name in [n for n in sys.modules if n.split(".")[0] == GENERATED_ROOT]:
            del sys.modules[name]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="shorter repeats, one no-op build")
    parser.add_argument("--no-build", action="store_true", help="skip the corpus build")
    parser.add_argument("--profile", action="store_true", help="cProfile the sengen paths")
    parser.add_argument("--build-child", metavar="OUT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build_child:
        build_child(args.build_child)
        return 0
    return benchmark(args.quick, not args.no_build, args.profile)


if __name__ == "__main__":
    sys.exit(main())
