"""Part 3 of the transport benchmarks (bench/transport.py): the latency added by crossing processes.

Round trips of one ``echo`` call at a time, the callee in this process then in the child, at
1 kHz (the caller's period swept) or work-driven. The floor is one raw ``get`` at a time to a
queryable in the child. The child's roles are part 2's.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zenoh
from transport_calls import Callee
from transport_common import (
    KERNEL_BOUND_S,
    KHZ,
    PACKAGE,
    START_TIMEOUT_S,
    BenchError,
    Child,
    Classes,
    Driven,
    WorkDriven,
    base_of,
    free_port,
    raw_key,
    raw_session,
    run_kernel,
    session_name,
)

from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component


@dataclass
class RoundTrips:
    samples: list[float]  # seconds

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def error(self) -> float:
        """The standard error of the mean."""
        if len(self.samples) < 2:
            return float("nan")
        return statistics.stdev(self.samples) / math.sqrt(len(self.samples))


def answered(querier: zenoh.Querier, data: bytes) -> bool:
    """One ``get``, waiting for its reply (and taking its bytes); False when none came."""
    try:
        reply = querier.get(payload=data).recv()
    except zenoh.ZError:  # the query ended with no reply: no queryable yet
        return False
    if reply.ok is None:
        return False
    reply.ok.payload.to_bytes()
    return True


def floor_round_trip(count: int, logs: Path) -> RoundTrips:
    """One raw ``get`` at a time to a queryable there: from the get to its reply."""
    port, session = free_port(), session_name("rtt")
    key = raw_key(session, "echo")
    samples: list[float] = []
    with raw_session(port) as zsession:
        querier = zsession.declare_querier(key, consolidation=zenoh.ConsolidationMode.NONE)
        with Child("zenoh-queryable", {"port": port, "key": key}, logs) as replier:
            replier.expect("ready")
            deadline = time.monotonic() + START_TIMEOUT_S
            while not answered(querier, bytes(8)):  # until the queryable answers
                if time.monotonic() > deadline:
                    raise BenchError("the queryable never answered")
                time.sleep(0.05)
            for number in range(20 + count):
                begin = time.perf_counter()
                if not answered(querier, number.to_bytes(8, "little")):
                    raise BenchError("a query had no reply")
                if number >= 20:
                    samples.append(time.perf_counter() - begin)
    return RoundTrips(samples)


@dataclass
class Sequential:
    """One ``echo`` call at a time: issued in update, its result in drain. The first ``warm``
    results are not kept; then the calls of ``cycles`` caller cycles (periodic caller) or
    ``count`` calls (work-driven caller, ``cycles`` None) are."""

    count: int
    cycles: int | None = None
    samples: list[float] = field(default_factory=list)
    issued: float | None = None
    wrong: int = 0
    warm: int = 20
    number: int = 0
    cycled: int = 0
    holder: dict[str, Any] = field(default_factory=dict)

    def setup_for(self, bus: str) -> Callable[[RunApi], None]:
        def setup(api: RunApi) -> None:
            self.holder["sub"] = api.select(f"SELECT {PACKAGE}.Echo FROM {bus}")

        return setup

    def done(self) -> bool:
        if self.cycles is not None:
            return self.cycled >= self.cycles
        return len(self.samples) >= self.count

    def work(self, api: RunApi) -> bool:
        if self.warm <= 0:
            self.cycled += 1
        if self.done():
            return True
        if self.issued is not None:
            return False
        proxies = self.holder["sub"].objects
        if not proxies:
            return False
        self.number += 1
        expected = self.number
        self.issued = time.perf_counter()

        def on_result(call: Any) -> None:
            assert self.issued is not None
            took = time.perf_counter() - self.issued
            self.issued = None
            if call.exception() is not None or call.result() != expected:
                self.wrong += 1
            elif self.warm > 0:
                self.warm -= 1
            elif not self.done():
                self.samples.append(took)

        proxies[0].echo(expected, on_result=on_result)
        return False


def swept_period(cycles: int) -> int:
    """The caller's period: 1 kHz slowed so that the phase sweeps one period in ``cycles``."""
    return KHZ + max(1, round(KHZ / cycles))


def bench_round_trip(
    classes: Classes, *, remote: bool, driven: bool, count: int, cycles: int, logs: Path
) -> RoundTrips:
    """Round trips of one call at a time, caller here; the owner here too or in the child.
    ``driven``: both work-driven, ``count`` calls; else both at 1 kHz, the caller's period
    swept over ``cycles`` cycles."""
    port, session = free_port(), session_name("lat")
    bus = f"{session}.b"
    calls = Sequential(count, None if driven else cycles)
    caller: Component
    if driven:
        caller = WorkDriven(calls.work, calls.setup_for(bus))
        bound = KERNEL_BOUND_S
    else:
        caller = Driven(swept_period(cycles), calls.work, calls.setup_for(bus))
        bound = cycles * KHZ / 1e9 * 2 + KERNEL_BOUND_S
    if not remote:
        callee = Callee(classes, bus, None if driven else KHZ)
        run_kernel(None, [("callee", callee, 1), ("caller", caller, 1)], bound, "local")
    else:
        params = {
            "port": port,
            "bus": bus,
            "period": KHZ,
            "mode": "driven" if driven else "periodic",
            "base": base_of(),
        }
        with Child("sengen-callee", params, logs) as owner:
            owner.expect("ready")
            run_kernel(port, [("caller", caller, 2)], bound, "caller")
    if calls.wrong:
        raise BenchError(f"{calls.wrong} call(s) failed or returned a wrong value")
    if len(calls.samples) < (count if driven else cycles // 4):
        raise BenchError(f"only {len(calls.samples)} calls completed")
    return RoundTrips(calls.samples)
