"""Parallel speed-up of a stepped system split across processes: ``python bench/parallel.py``.

The reason to split a stepped system across processes under the GIL (runtime.md §6.3, §6.8,
§10.6): the same two CPU-heavy **stepped** components run the same ``STEPS`` steps of a master
clock

(a) in one process: one kernel (``clockMaster: true``) with both components, whose updates
    share one interpreter;
(b) in two processes: the master's kernel with one component here, the other in a
    ``sengen run`` child (``runMode: virtualTime``, no ``--until``, stopped by the benchmark),
    both kernels on one clock bus and connected by the transport (loopback, a free port, a
    session name of the run's own).

Each component owns a ``Cruncher`` and cycles at the same rate, so every step cycles both. Its
``update()`` reads the other's ``step`` and ``result`` through its proxy, does ``WORK`` rounds
of a pure-Python generator seeded with them (about 8 ms here), and commits its new ``result``,
its ``step`` count, a ``checksum`` of everything it computed and read, and the number of
``stale`` reads (the other's value not of the previous step). It reads the other from step
``SINCE`` = 3 on: its subscription, made in step 1, delivers the other's object at step 2 within
a process but at step 3 across processes (§6.8: a remote interest opens at the hand-over of
step 2, and what it publishes is stamped with step 2).

The figure is the wall time of the steps (``Stepper.step`` each), once the master has found
every kernel clock and each has a stepped component; the goal is (a) / (b) >= 1.5. "Same
results": each component's final state, written to a file when it is removed at shut-down (in
the child too), is the same in every run, and the same as the floor's.

The floor, measured in the same run, is the same work and exchange done in lockstep by two bare
threads of one process (a ``threading.Barrier`` per step), then by this process and a bare child
(this file, ``--floor-child``; a line each way over pipes per step). The STL is generated into a
temporary folder; the implementation module there takes its code from this file, which the
child imports from ``bench/``. The benchmark reports; it never asserts a timing. ``--quick``
runs fewer steps, once; otherwise each figure is the best of ``REPEAT`` runs, interleaved (on a
shared 2-core machine a run whose two processes share one core now and then is not rare).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sengen
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

BENCH = Path(__file__).resolve().parent
GENERATED_ROOT = "sengen_bench_parallel_gen"
IMPLEMENTATIONS = "sengen_bench_parallel_impls"
PACKAGE = "bench_parallel"
STL = """\
package bench_parallel;

// A CPU-heavy stepped object: each update works on the other's last result.
class Cruncher
{
  var seed  : i64 [static];     // mixed into each step's work
  var other : string [static];  // the name of the other Cruncher on the bus
  var dump  : string [static];  // where the final state is written at shut-down

  var step     : i64;           // updates so far
  var result   : i64;           // this step's result, read by the other next step
  var checksum : i64;           // of every result computed and read
  var stale    : i64;           // steps whose read of the other was not its previous step
}
"""
IMPLEMENTATION = f"""\
from typing import Any

import parallel
from {GENERATED_ROOT}.{PACKAGE} import CruncherBase


class Crunching(CruncherBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crunchers: Any = None

    def update(self, api: Any) -> None:
        parallel.cruncher_update(self, api)

    def unregistered(self, api: Any) -> None:
        parallel.cruncher_unregistered(self)
"""

SPEED_UP_GOAL = 1.5
BUSY_FLOOR = 1.6  # a bare floor below this speed-up: the cores were not ours alone
WORK = 70_000  # rounds of the generator per update: about 8 ms of pure Python here
SINCE = 3  # the first step that reads the other side
STEPS, QUICK_STEPS = 200, 60
REPEAT = 3  # runs of each figure, the fastest kept (one with --quick)
PERIOD_HZ = 100  # both components: every step cycles both
SEEDS = {"w0": 1, "w1": 2}
MASK = (1 << 31) - 1
CHECK_MASK = (1 << 62) - 1
START_TIMEOUT_S = 30.0  # the child's kernel clock is found and ready within this
STOP_TIMEOUT_S = 15.0  # a child exits within this after being told to stop
STEP_TIMEOUT_S = 120.0  # a bare thread of the floor waits this long at most for the other

_runs = itertools.count(1)


class BenchError(Exception):
    """A measurement that could not be made."""


# --------------------------------------------------------------------------------------------
# the work, shared by the components and the floor

State = dict[str, int]  # step, result, checksum, stale: a Cruncher's dynamic properties


def crunch(x: int, rounds: int) -> int:
    """``rounds`` rounds from ``x`` of a 31-bit linear congruential step after an xorshift: the
    shift makes it non-affine, so that a difference in a read never cancels out later."""
    for _ in range(rounds):
        x ^= x >> 15
        x = (x * 1103515245 + 12345) & MASK
    return x


def mix(checksum: int, *values: int) -> int:
    for value in values:
        checksum = (checksum * 1_000_003 + value) & CHECK_MASK
    return checksum


def advance(state: State, seed: int, their_step: int, theirs: int) -> State:
    """The next step's state from this one and the other side's ``(step, result)`` as read
    now (ignored before step ``SINCE``)."""
    step = state["step"] + 1
    stale = state["stale"]
    if step < SINCE:
        their_step, theirs = -1, 0
    elif their_step != step - 1:
        stale += 1
    result = crunch((state["result"] ^ theirs ^ (step * seed)) & MASK, WORK)
    checksum = mix(state["checksum"], step, their_step, theirs, result)
    return {"step": step, "result": result, "checksum": checksum, "stale": stale}


def start_state() -> State:
    return {"step": 0, "result": 0, "checksum": 0, "stale": 0}


def cruncher_update(obj: Any, api: RunApi) -> None:
    """``Crunching.update``: read the other's last result, work, commit the new state."""
    if obj.crunchers is None:
        obj.crunchers = api.select(f"SELECT {PACKAGE}.Cruncher FROM {obj.bus}")
    other = next((o for o in obj.crunchers.objects if o.name == obj.other), None)
    their_step, theirs = (other.step, other.result) if other is not None else (-1, 0)
    state = {key: getattr(obj, key) for key in start_state()}
    following = advance(state, obj.seed, their_step, theirs)
    obj.set_next_step(following["step"])
    obj.set_next_result(following["result"])
    obj.set_next_checksum(following["checksum"])
    obj.set_next_stale(following["stale"])


def cruncher_unregistered(obj: Any) -> None:
    Path(obj.dump).write_text(json.dumps({key: getattr(obj, key) for key in start_state()}))


# --------------------------------------------------------------------------------------------
# the generated classes


def generate(base: Path) -> None:
    """The STL's package and the implementation module in ``base``, importable from here."""
    (base / "stl" / PACKAGE).mkdir(parents=True)
    (base / "stl" / PACKAGE / f"{PACKAGE}.stl").write_text(STL)
    result = sengen.generate([base / "stl"], output=base / GENERATED_ROOT)
    errors = [d.format() for d in result.diagnostics if d.is_error]
    if errors or not result.ok:
        raise SystemExit(f"bench: the STL does not build: {errors}")
    (base / f"{IMPLEMENTATIONS}.py").write_text(IMPLEMENTATION)
    for folder in (str(base), str(BENCH)):
        if folder not in sys.path:
            sys.path.insert(0, folder)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def kernel_yaml(
    session: str, name: str, workers: list[str], base: Path, port: int | None, *, master: bool
) -> str:
    """A virtual-time kernel with one ``build:`` component per worker on ``<session>.b``, its
    clock ``clock_<name>`` on ``<session>.clocks``, and the transport when ``port`` is given."""
    lines = [
        "kernel:",
        f"  appName: {name}",
        "  runMode: virtualTime",
        f"  clockBus: {session}.clocks",
        f"  clockName: clock_{name}",
        f"  clockMaster: {'true' if master else 'false'}",
    ]
    if port is not None:
        lines += ["load:", "  - name: transport", f"    rendezvous: tcp/127.0.0.1:{port}"]
    lines.append("build:")
    for worker in workers:
        (other,) = (w for w in SEEDS if w != worker)
        fields = (
            f"name: {worker}, class: {PACKAGE}.Crunching, bus: {session}.b,"
            f" seed: {SEEDS[worker]}, other: {other},"
            f" dump: '{base / f'{session}-{worker}.json'}'"
        )
        lines += [
            f"  - name: {worker}",
            f"    freqHz: {PERIOD_HZ}",
            f"    imports: [{GENERATED_ROOT}.{PACKAGE}, {IMPLEMENTATIONS}]",
            "    objects:",
            f"      - {{{fields}}}",
        ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# sengen: one process, then two


@dataclass
class Measured:
    seconds: float  # wall time of the steps
    finals: dict[str, State]  # each side's final state
    warnings: int = 0  # lines of WARNING or ERROR in a child's log


class SengenRun:
    """``sengen run CONFIG`` under virtual time, stepped from here until stopped."""

    def __init__(self, base: Path, name: str, config: str) -> None:
        path = base / f"{name}.yaml"
        path.write_text(config)
        self.log_path = base / f"{name}.log"
        self._log = self.log_path.open("w")
        inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "sengen", "run", str(path)],
            cwd=base,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(BENCH), str(base), *inherited])},
        )

    def stop(self) -> None:
        """SIGTERM (an orderly shut-down), SIGKILL if it has not exited in time."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(STOP_TIMEOUT_S)
        self._log.close()

    def lines(self) -> list[str]:
        return self.log_path.read_text().splitlines() if self.log_path.exists() else []

    def warnings(self) -> int:
        return sum(1 for line in self.lines() if line.startswith(("WARNING", "ERROR")))

    def tail(self) -> str:
        return " | ".join(self.lines()[-6:]) or f"exit code {self.popen.poll()}"


def wait_for_clocks(kernel: Kernel, count: int, child: SengenRun | None) -> None:
    """Until the master has found ``count`` kernel clocks (runtime.md §6.9) and each has a
    stepped component (reports a next due time), so that step 1 cycles every component."""
    deadline = time.monotonic() + START_TIMEOUT_S

    def waiting(what: str) -> None:
        if child is not None and child.popen.poll() is not None:
            raise BenchError(f"the child exited: {child.tail()}")
        if time.monotonic() > deadline:
            raise BenchError(f"{what} within {START_TIMEOUT_S:.0f} s")
        time.sleep(0.02)

    while len(kernel.master_clocks()) < count:
        waiting(f"the master did not find {count} kernel clock(s)")
    if not kernel.wait_ready(max(deadline - time.monotonic(), 0.1)):
        raise BenchError("the master's components did not start")
    while any(clock.flush_outputs() is None for clock in kernel.master_clocks()):
        waiting("a kernel clock had no stepped component")


def finals_of(base: Path, session: str) -> dict[str, State]:
    finals: dict[str, State] = {}
    for worker in SEEDS:
        path = base / f"{session}-{worker}.json"
        if not path.exists():
            raise BenchError(f"{worker} wrote no final state")
        finals[worker] = json.loads(path.read_text())
    return finals


def stepped(base: Path, steps: int, *, split: bool) -> Measured:
    """The wall time of ``steps`` master steps of both components: in one process, or (split)
    ``w0`` here with the master and ``w1`` in a ``sengen run`` child."""
    session = f"bp{os.getpid()}_{'two' if split else 'one'}{next(_runs)}"
    port = free_port() if split else None
    here = ["w0"] if split else list(SEEDS)
    kernel = Kernel(load_config_text(kernel_yaml(session, "master", here, base, port, master=True)))
    child: SengenRun | None = None
    seconds = 0.0
    try:
        if split:
            config = kernel_yaml(session, "child", ["w1"], base, port, master=False)
            child = SengenRun(base, f"{session}-child", config)
        if not kernel.start():
            raise BenchError(f"the master kernel did not start (exit code {kernel.exit_code})")
        wait_for_clocks(kernel, 2 if split else 1, child)
        stepper = kernel.stepper()
        for _ in range(steps):
            seconds += stepper.step() / 1e9
    finally:
        kernel.shutdown()
        if child is not None:
            child.stop()
    warnings = 0
    if child is not None:
        if any("Traceback" in line for line in child.lines()):
            raise BenchError(f"the child failed: {child.tail()}")
        warnings = child.warnings()
    return Measured(seconds, finals_of(base, session), warnings)


# --------------------------------------------------------------------------------------------
# the floor: bare threads, bare processes


def lockstep_threads(steps: int) -> Measured:
    """Both sides as two threads of this process, a barrier per step."""
    history = {name: [start_state()] for name in SEEDS}
    barrier = threading.Barrier(len(SEEDS))

    def side(name: str, other: str) -> None:
        mine, theirs = history[name], history[other]
        for step in range(1, steps + 1):
            read = theirs[step - 1]
            mine.append(advance(mine[-1], SEEDS[name], read["step"], read["result"]))
            barrier.wait(STEP_TIMEOUT_S)  # both have written this step

    threads = [
        threading.Thread(target=side, args=(name, other), name=f"floor-{name}")
        for name, other in (("w0", "w1"), ("w1", "w0"))
    ]
    begin = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - begin
    return Measured(seconds, {name: states[-1] for name, states in history.items()})


def lockstep_processes(steps: int) -> Measured:
    """``w0`` here, ``w1`` in a bare child (this file, ``--floor-child``): each step, each side
    sends its new ``(step, result)`` as a line and reads the other's (stdin and stdout)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--floor-child", str(steps)]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    ) as child:
        assert child.stdin is not None and child.stdout is not None
        try:
            if child.stdout.readline().strip() != "ready":
                raise BenchError("the bare child did not start")
            begin = time.perf_counter()
            theirs = mine = start_state()
            for _ in range(steps):
                mine = advance(mine, SEEDS["w0"], theirs["step"], theirs["result"])
                child.stdin.write(json.dumps(mine) + "\n")
                line = child.stdout.readline()
                if not line:
                    raise BenchError("the bare child stopped")
                theirs = json.loads(line)
            return Measured(time.perf_counter() - begin, {"w0": mine, "w1": theirs})
        except OSError as error:  # the child is gone: a broken pipe
            raise BenchError(f"the bare child stopped: {error}") from None
        finally:
            with contextlib.suppress(OSError):
                child.stdin.close()
            try:
                child.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                child.kill()


def floor_child(steps: int) -> None:
    """The bare child's side: ``w1``."""
    print("ready", flush=True)
    theirs = mine = start_state()
    for _ in range(steps):
        mine = advance(mine, SEEDS["w1"], theirs["step"], theirs["result"])
        print(json.dumps(mine), flush=True)
        line = sys.stdin.readline()
        if not line:
            return
        theirs = json.loads(line)


# --------------------------------------------------------------------------------------------
# the report


class Counting(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextlib.contextmanager
def counted_warnings() -> Iterator[Counting]:
    """Warnings of this process's sengen and Zenoh loggers are counted, not printed."""
    counting = Counting()
    saved = []
    for name in ("sengen", "zenoh"):
        log = logging.getLogger(name)
        saved.append((log, log.level, log.propagate))
        log.addHandler(counting)
        log.setLevel(logging.WARNING)
        log.propagate = False
    try:
        yield counting
    finally:
        for log, level, propagate in saved:
            log.removeHandler(counting)
            log.setLevel(level)
            log.propagate = propagate


def row(label: str, one: str, two: str, times: str, goal: str) -> None:
    print(f"  {label:<44} {one:>14} {two:>14} {times:>10}   {goal}".rstrip())


def attempt(what: str, measure: Callable[[], Measured]) -> Measured | None:
    """The measurement, or None with the reason printed (a benchmark never fails the run)."""
    try:
        return measure()
    except BenchError as error:
        print(f"  {what}: not measured: {error}")
        return None


def fastest(runs: list[Measured | None]) -> Measured | None:
    done = [run for run in runs if run is not None]
    return min(done, key=lambda run: run.seconds) if done else None


def describe(finals: dict[str, State]) -> str:
    return "; ".join(
        f"{name}: step {f['step']}, result {f['result']}, checksum {f['checksum']:#x},"
        f" stale {f['stale']}"
        for name, f in sorted(finals.items())
    )


def report(quick: bool, title: str = "Parallel speed-up") -> None:
    """Measure and print the figures (never a failure)."""
    steps = QUICK_STEPS if quick else STEPS
    repeat = 1 if quick else REPEAT
    begin = time.perf_counter()
    crunch(1, WORK)
    alone = time.perf_counter() - begin
    print(
        f"\n{title} of a stepped system: two components, each update {WORK:,} rounds of work"
        f" ({alone * 1e3:.1f} ms alone) and a read of the other's result;"
        f" {steps} master steps, best of {repeat}"
    )
    row("", "one process", "two processes", "speed-up", "goal")
    runs: dict[str, list[Measured | None]] = {"threads": [], "processes": [], "one": [], "two": []}
    with (
        tempfile.TemporaryDirectory(prefix="sengen-bench-parallel-") as tmp,
        counted_warnings() as counted,
    ):
        base = Path(tmp)
        generate(base)
        for _ in range(repeat):  # interleaved: the machine's noise falls on every figure
            runs["threads"].append(attempt("bare threads", lambda: lockstep_threads(steps)))
            runs["processes"].append(attempt("bare processes", lambda: lockstep_processes(steps)))
            runs["one"].append(attempt("one process", lambda: stepped(base, steps, split=False)))
            runs["two"].append(attempt("two processes", lambda: stepped(base, steps, split=True)))
    best = {what: fastest(measured) for what, measured in runs.items()}
    one, two = best["one"], best["two"]
    if one is not None and two is not None:
        speed_up = one.seconds / two.seconds
        row(
            "sengen, stepped by a master clock",
            f"{one.seconds:.3f} s",
            f"{two.seconds:.3f} s",
            f"{speed_up:.2f}x",
            f">= {SPEED_UP_GOAL:.1f}x: {'ok' if speed_up >= SPEED_UP_GOAL else 'MISSED'}",
        )
        row(
            "  per step",
            f"{one.seconds / steps * 1e3:.2f} ms",
            f"{two.seconds / steps * 1e3:.2f} ms",
            "",
            "",
        )
    threads, processes = best["threads"], best["processes"]
    if threads is not None and processes is not None:
        row(
            "floor: bare threads, bare processes",
            f"{threads.seconds:.3f} s",
            f"{processes.seconds:.3f} s",
            f"{threads.seconds / processes.seconds:.2f}x",
            "lockstep, one exchange per step",
        )
        if threads.seconds / processes.seconds < BUSY_FLOOR:
            print(
                f"    the floor's own speed-up is below {BUSY_FLOOR}x: other work shared the two"
                " cores during (part of) this run"
            )
    finals = [(what, run.finals) for what, measured in runs.items() for run in measured if run]
    if not finals:
        return
    reference = finals[0][1]
    same = all(f == reference for _, f in finals)
    count = f"{len(finals)} runs, sengen and floor"
    print(f"    same results: {'yes' if same else 'NO'} ({count}; {describe(reference)})")
    if not same:
        for what, f in finals:
            print(f"      {what}: {describe(f)}")
    children = sum(run.warnings for run in runs["two"] if run is not None)
    print(f"    warnings: this process {counted.count}, child processes {children}")


def main(argv: list[str] | None = None) -> None:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--floor-child"]:
        floor_child(int(arguments[1]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer steps, one run of each")
    args = parser.parse_args(arguments)
    print(f"sengen parallel benchmark ({'quick' if args.quick else 'full'}), Python {sys.version}")
    report(args.quick)


if __name__ == "__main__":
    main()
