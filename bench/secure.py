"""Secure mode against plain mode: ``python bench/secure.py`` prints one table (issue 22: within
1.5x of plain mode on loopback).

The figures are bench/transport.py's own sengen measurements, run in this one process and its
children alternately in plain mode and in secure mode (mTLS, Zenoh's access control from a
permissions file that grants everything, sengen's member checks at the owner), with a
certificate authority and one certificate per process made by ``sengen security init``'s code
at the start of the run. Secure mode reaches the parts through ``SENGEN_BENCH_CERTIFICATES``,
which bench/transport_common.py reads (the children inherit it): each process's identity is its
app name. Each figure is the median of ``--repeat`` runs per mode, the two modes in turn, so
that a burst of load on a shared machine moves one run, not the verdict. The benchmark
reports; it never asserts.

1. remote property updates per second (part 1 of bench/transport.py, 64 B, checks on);
2. pipelined remote calls per second (part 2, checks on);
3. the round trip of one call at a time between two work-driven components (part 3).
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import os
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from transport_calls import DEPTH, bench_calls
from transport_common import (
    _BASE,
    SECURE_ENV,
    BenchError,
    capture_warnings,
    generate,
    load_classes,
)
from transport_latency import bench_round_trip
from transport_updates import CARRIERS, bench_updates

from sengen.cli.security_bench import init_bench

GOAL = 1.5  # secure mode's cost: at most this factor of plain mode's
IDENTITIES = ["producer", "consumer", "caller", "callee"]  # the app names of the parts
T = TypeVar("T")


def in_mode(certificates: Path | None, measure: Callable[[], T]) -> T | None:
    """``measure()`` in plain mode (``certificates`` None) or secure mode; None if it failed."""
    if certificates is None:
        os.environ.pop(SECURE_ENV, None)
    else:
        os.environ[SECURE_ENV] = str(certificates)
    try:
        return measure()
    except BenchError as error:
        print(f"    {'secure' if certificates else 'plain'}: failed: {error}")
        return None
    finally:
        os.environ.pop(SECURE_ENV, None)


def medians(
    certificates: Path, repeat: int, measure: Callable[[], T], key: Callable[[T], float]
) -> tuple[float | None, float | None]:
    """The median figure (``key``) of each mode, plain and secure measured in turn."""
    plain: list[float] = []
    secure: list[float] = []
    for _ in range(repeat):
        for folder, found in ((None, plain), (certificates, secure)):
            result = in_mode(folder, measure)
            if result is not None:
                found.append(key(result))
    return (statistics.median(plain) if plain else None), (
        statistics.median(secure) if secure else None
    )


def report(label: str, unit: str, plain: float | None, secure: float | None, lower: bool) -> None:
    """One row; ``lower``: a lower figure is better (a latency), so the cost is secure/plain."""
    if plain is None or secure is None:
        print(f"  {label:<44} not measured")
        return
    cost = secure / plain if lower else plain / secure
    verdict = "met" if cost <= GOAL else "NOT met"
    shown = (f"{plain:,.3f}", f"{secure:,.3f}") if lower else (f"{plain:,.0f}", f"{secure:,.0f}")
    print(
        f"  {label:<44} plain {shown[0]:>10} {unit:<4} secure {shown[1]:>10} {unit:<4}"
        f" cost {cost:.2f}x (goal <= {GOAL}x: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="shorter windows, one run of each")
    parser.add_argument("--repeat", type=int, help="runs of each figure per mode (default 3)")
    args = parser.parse_args()
    window_s = 1.0 if args.quick else 2.0
    repeat = args.repeat or (1 if args.quick else 3)
    calls = 200 if args.quick else 600
    print(f"sengen secure mode against plain mode, Python {sys.version.split()[0]}")
    zenoh_version = importlib.metadata.version("eclipse-zenoh")
    print(f"  eclipse-zenoh {zenoh_version}, 127.0.0.1, median of {repeat} runs per mode")
    capture_warnings()
    with tempfile.TemporaryDirectory(prefix="sengen-bench-secure-") as tmp:
        base = Path(tmp)
        generate(base)
        _BASE.append(str(base))
        classes = load_classes(base)
        logs = base / "logs"
        logs.mkdir()
        certificates = base / "certs"
        init_bench(certificates, IDENTITIES)
        updates = functools.partial(bench_updates, classes, 64, window_s, logs, True)
        plain, secure = medians(certificates, repeat, updates, lambda u: u.rate)
        report(f"1. updates/s, {CARRIERS} objects, 64 B", "/s", plain, secure, lower=False)
        pipelined = functools.partial(bench_calls, classes, window_s, logs, True)
        plain, secure = medians(certificates, repeat, pipelined, lambda p: p.rate)
        report(f"2. calls/s, {DEPTH} in flight", "/s", plain, secure, lower=False)
        trips = functools.partial(
            bench_round_trip, classes, remote=True, driven=True, count=calls, cycles=0, logs=logs
        )
        plain, secure = medians(certificates, repeat, trips, lambda r: r.mean * 1e3)
        report(f"3. call round trip, work-driven, {calls} calls", "ms", plain, secure, lower=True)


if __name__ == "__main__":
    main()
