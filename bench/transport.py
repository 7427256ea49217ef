"""Transport benchmarks: ``python bench/transport.py`` prints a table of figures.

Every figure crosses a real process boundary on loopback: this process runs one side, a second
process (this file again, ``--child ROLE``) the other, each with its own Zenoh session on a free
port and a session name of its own. Each sengen figure is printed beside a raw eclipse-zenoh floor
measured in the same run between the same two processes with the same Zenoh configuration
(``transport.open_session``), and with the ratio (runtime.md §10.6). The benchmark reports; it
never asserts a timing.

1. remote property updates per second: a self-driven producer process commits, as fast as it
   can, a new value of the ``data`` property (a byte sequence of 64 B or 4 KiB) of each of its
   ``CARRIERS`` objects; a 100 Hz consumer holds their remote proxies and counts the updates
   that reached it (each value carries its sequence number). Every change crosses: the
   changes of one commit travel together in messages of at most 64 KiB, and the consumer's
   proxies decode, at each drain, the latest value of each. Also shown: the bytes received, the
   producer thread's and the consumer process's CPU per update. Floor: a raw ``put`` loop
   (reliable, blocking congestion control, as the transport's publishers) of payloads of the
   property's size, to a subscriber that takes each payload's bytes in a plain Python callback,
   as the transport's inbox subscriber does. Goal ≥ 50 %;
2. pipelined remote calls per second between two 1 kHz components in two processes: the caller
   keeps ``DEPTH`` calls of ``echo(x)`` in flight. Floor: raw ``get`` of a declared querier to
   a queryable that replies with the query's payload, ``DEPTH`` queries in flight; each get's
   callbacks run on Zenoh's own thread (``indirect=False``: Zenoh's default, a Python thread
   per get, gives about a quarter of that rate). Goal ≥ 25 %;
3. the latency added by crossing processes: the round trip of one call at a time (issued in the
   caller's update, its result in the caller's drain) between two processes minus the same
   between two components of one process, at the same rates, against a raw ``get`` round trip;
   goal ≤ 2x. At 1 kHz a round trip is close to a whole number of periods (the result waits
   for the next drain on each side), so the caller runs 1 kHz slowed by ``period / cycles``: the
   phase between the two components sweeps one whole period during the run and the mean
   difference is the added latency averaged over phases. The same pair of work-driven components
   (they cycle when work arrives, the floors' other form in §10.6) measures it without cycle waits;
4. discovery: from publishing an object (its wall-clock time is one of its static properties) to
   the added-callback of a 30 Hz subscriber in the other process, for objects published once
   the subscription is known to the producer; goal ≤ 50 ms + one subscriber period;
5. parallel speed-up of a stepped system split across processes: bench/parallel.py, run as
   the last part (two CPU-heavy stepped components in one process, then in two, stepped by a
   master clock; the floor is the same lockstep work in two bare threads, then two bare
   processes).

Discovery at scale (50,000 objects published in one commit across processes, and found by a
late joiner) is ``bench/transport_scale.py``; memory under churn of subscriptions and objects,
``bench/churn.py``: both run on their own, for their long windows.

The STL (``STL`` in bench/transport_common.py) is generated at the start of the run into a
temporary folder, as bench/fixture.py does for ``bench_types``, and the child processes import
it from there. Parts 1 and 2 are measured with value checks on and off (``set_checks``, in both
processes), the floor and sengen in turn, and the best of two runs of each is kept
(``--repeat N``; one with ``--quick``, which also shortens every window). Warnings of both processes
are counted, not printed. Each part lives in a module of its own (``transport_updates``,
``transport_calls``, ``transport_latency``, ``transport_discovery``), beside what they share
(``transport_common``); this one reports.
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import logging
import statistics
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import parallel
from transport_calls import (
    DEPTH,
    bench_calls,
    child_sengen_callee,
    child_zenoh_queryable,
    floor_calls,
)
from transport_common import (
    _BASE,
    PACKAGE,
    WARNINGS,
    BenchError,
    Classes,
    Control,
    capture_warnings,
    generate,
    load_classes,
    payload,
)
from transport_discovery import SUBSCRIBER_PERIOD, bench_discovery, child_sengen_publisher
from transport_latency import bench_round_trip, floor_round_trip
from transport_updates import (
    CARRIERS,
    Producer,
    bench_updates,
    child_sengen_producer,
    child_zenoh_put,
    floor_updates,
)

# The parts live in bench/transport_*.py; scripts that import this module use these names.
__all__ = [
    "PACKAGE",
    "_BASE",
    "Control",
    "Producer",
    "bench_updates",
    "capture_warnings",
    "generate",
    "load_classes",
    "main",
    "payload",
    "report_updates",
]

UPDATE_GOAL = 0.5  # of the floor's throughput
CALL_GOAL = 0.25  # of the floor's calls per second
LATENCY_GOAL = 2.0  # added latency over the floor's round trip
DISCOVERY_GOAL_NS = 50_000_000  # plus one subscriber period


# --------------------------------------------------------------------------------------------
# the child processes


# The children run this file (``Child``): each role is the child's side of a part.
ROLES: dict[str, Callable[[dict[str, Any], Control], None]] = {
    "zenoh-put": child_zenoh_put,
    "zenoh-queryable": child_zenoh_queryable,
    "sengen-producer": child_sengen_producer,
    "sengen-callee": child_sengen_callee,
    "sengen-publisher": child_sengen_publisher,
}


def child_main(role: str, params: dict[str, Any]) -> None:
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    ROLES[role](params, Control())


# --------------------------------------------------------------------------------------------
# the report


def ratio(value: float, floor: float) -> str:
    return f"{value / floor:8.2f}x" if floor > 0 else "     n/a"


def row(label: str, value: str, floor: str, times: str, goal: str) -> None:
    print(f"  {label:<44} {value:>14} {floor:>14} {times:>10}   {goal}")


def header(title: str) -> None:
    print(f"\n{title}")
    row("", "sengen", "floor", "ratio", "goal")


def per_s(rate: float) -> str:
    return f"{rate:,.0f}/s"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def attempt(label: str, measure: Callable[[], Any]) -> Any:
    """The measurement, or None with the reason printed (a benchmark never fails the run)."""
    try:
        return measure()
    except BenchError as error:
        row(label, "n/a", "", "", f"not measured: {error}")
        return None


def best_in_turn(measures: list[tuple[str, Callable[[], Any]]], repeat: int) -> list[Any]:
    """The best rate of each measurement (None when none of its runs could be made), the
    measurements run in turn ``repeat`` times: a floor and what is compared with it see the
    same spells of a noisy machine, so that their ratio does not depend on which of them ran in
    a slow one, and the best run of each is its least disturbed."""
    runs: list[list[Any]] = [[] for _ in measures]
    for _ in range(repeat):
        for (label, measure), done in zip(measures, runs, strict=True):
            value = attempt(label, measure)
            if value is not None:
                done.append(value)
    return [max(done, key=rate_of) if done else None for done in runs]


def rate_of(value: Any) -> float:
    return float(value if isinstance(value, float) else value.rate)


def report_updates(classes: Classes, window_s: float, repeat: int, logs: Path) -> None:
    header(
        f"1. remote property updates per second, {CARRIERS} objects changed per commit by a"
        f" self-driven producer, 100 Hz consumer, best of {repeat}, floor and sengen in turn"
    )
    for size, checks in ((64, True), (64, False), (4096, True)):
        label = f"{size} B property, checks {'on' if checks else 'off'}"
        floor, measured = best_in_turn(
            [
                (f"{label}, floor", functools.partial(floor_updates, size, window_s, logs)),
                (label, functools.partial(bench_updates, classes, size, window_s, logs, checks)),
            ],
            repeat,
        )
        if floor is None or measured is None:
            continue
        share = measured.rate / floor
        row(
            label,
            per_s(measured.rate),
            per_s(floor),
            ratio(measured.rate, floor),
            f">= {UPDATE_GOAL:.2f}x floor: {verdict(share >= UPDATE_GOAL)}",
        )
        print(
            f"    {measured.bytes_per_update:,.0f} B received per update;"
            f" CPU per update: producer thread {us(measured.producer_cpu)},"
            f" consumer process {us(measured.consumer_cpu)}"
        )
        print(f"    warnings: {measured.warnings}")


def report_calls(classes: Classes, window_s: float, repeat: int, logs: Path) -> None:
    header(
        f"2. pipelined remote calls per second, two 1 kHz components, {DEPTH} in flight,"
        f" best of {repeat}, floor and sengen in turn"
    )
    labels = [f"echo(x), checks {'on' if checks else 'off'}" for checks in (True, False)]
    floor, *measured_calls = best_in_turn(
        [
            ("raw get/queryable, floor", functools.partial(floor_calls, window_s, logs)),
            *(
                (label, functools.partial(bench_calls, classes, window_s, logs, checks))
                for label, checks in zip(labels, (True, False), strict=True)
            ),
        ],
        repeat,
    )
    for label, measured in zip(labels, measured_calls, strict=True):
        if floor is None or measured is None:
            continue
        share = measured.rate / floor
        row(
            label,
            per_s(measured.rate),
            per_s(floor),
            ratio(measured.rate, floor),
            f">= {CALL_GOAL:.2f}x floor: {verdict(share >= CALL_GOAL)}",
        )
        print(f"    wrong results: {measured.wrong}; warnings: {measured.warnings}")


def report_latency(classes: Classes, count: int, cycles: int, logs: Path) -> None:
    header(
        f"3. latency added by crossing processes, one call at a time: {cycles} caller cycles"
        f" at 1 kHz, {count} calls work-driven"
    )
    floor = attempt("raw get round trip, floor", functools.partial(floor_round_trip, count, logs))
    for driven in (False, True):
        what = "work-driven" if driven else "1 kHz"
        measure = functools.partial(
            bench_round_trip, classes, driven=driven, count=count, cycles=cycles, logs=logs
        )
        local = attempt(f"{what}: one process", functools.partial(measure, remote=False))
        remote = attempt(f"{what}: two processes", functools.partial(measure, remote=True))
        if local is None or remote is None:
            continue
        for label, measured in (("one process", local), ("two processes", remote)):
            row(
                f"{what}: round trip, {label}",
                ms(measured.mean),
                "",
                "",
                f"{len(measured.samples)} calls, median {ms(measured.median)}",
            )
        added = remote.mean - local.mean
        error = (local.error**2 + remote.error**2) ** 0.5
        if floor is None:
            row(f"{what}: added by crossing", ms(added), "", "", f"± {ms(error)}")
            continue
        row(
            f"{what}: added by crossing",
            ms(added),
            ms(floor.mean),
            ratio(added, floor.mean),
            f"<= {LATENCY_GOAL:.0f}x floor: {verdict(added <= LATENCY_GOAL * floor.mean)}",
        )
        print(f"    ± {ms(error)} (standard error); warnings: {WARNINGS.take()}")
    if floor is not None:
        print(f"    floor: mean {ms(floor.mean)}, median {ms(floor.median)} over {count} gets")


def report_discovery(classes: Classes, samples: int, logs: Path) -> None:
    header(f"4. publication to a remote added-callback, 30 Hz subscriber, {samples} objects")
    delays = attempt("discovery", lambda: bench_discovery(classes, samples, logs))
    if delays is None:
        return
    goal = (DISCOVERY_GOAL_NS + SUBSCRIBER_PERIOD) / 1e9
    worst = max(delays)
    row("median", ms(statistics.median(delays)), "", "", "")
    row(
        "max",
        ms(worst),
        "",
        "",
        f"<= 50 ms + one period = {ms(goal)}: {verdict(worst <= goal)}",
    )
    print(f"    warnings: {WARNINGS.take()}")


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def main(argv: list[str] | None = None) -> None:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--child"]:
        child_main(arguments[1], json.loads(arguments[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="shorter windows")
    parser.add_argument(
        "--part",
        type=int,
        action="append",
        choices=range(1, 6),
        help="measure only this part (repeatable; default: all five)",
    )
    parser.add_argument(
        "--repeat",
        type=_positive,
        help="runs of each throughput figure, the best kept (default 2, 1 with --quick)",
    )
    args = parser.parse_args(arguments)
    parts = set(args.part or range(1, 6))
    window_s = 1.0 if args.quick else 2.0
    calls = 200 if args.quick else 600
    sweep = 600 if args.quick else 2000  # caller cycles of the 1 kHz round trips
    repeat = args.repeat or (1 if args.quick else 2)  # runs of each throughput figure
    discovered = 10 if args.quick else 30

    print(
        f"sengen transport benchmarks ({'quick' if args.quick else 'full'}), Python {sys.version}"
    )
    print(f"  eclipse-zenoh {importlib.metadata.version('eclipse-zenoh')}, TCP on 127.0.0.1")
    capture_warnings()
    with tempfile.TemporaryDirectory(prefix="sengen-bench-transport-") as tmp:
        base = Path(tmp)
        generate(base)
        _BASE.append(str(base))
        classes = load_classes(base)
        logs = base / "logs"
        logs.mkdir()
        if 1 in parts:
            report_updates(classes, window_s, repeat, logs)
        if 2 in parts:
            report_calls(classes, window_s, repeat, logs)
        if 3 in parts:
            report_latency(classes, calls, sweep, logs)
        if 4 in parts:
            report_discovery(classes, discovered, logs)
    if 5 in parts:
        parallel.report(args.quick, "5. Parallel speed-up")
    left = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if left:
        print(f"\n    threads still alive: {', '.join(sorted(left))}")


if __name__ == "__main__":
    main()
