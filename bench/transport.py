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
   that reached it (each value carries its sequence number). Also shown: the producer thread's
   and the consumer process's CPU per update. Floor: a raw ``put`` loop (reliable, blocking
   congestion control, as the transport's publishers) of messages of the size of sengen's
   frames, to a subscriber that takes each payload's bytes in a plain Python callback, as the
   transport's inbox subscriber does. Goal ≥ 50 %;
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

The STL (``STL`` below) is generated at the start of the run into a temporary folder, as
bench/fixture.py does for ``bench_types``, and the child processes import it from there.
Parts 1 and 2 are measured with value checks on and off (``set_checks``, in both processes),
and the best of two runs is kept (one with ``--quick``, which also shortens every window).
Warnings of both processes are counted, not printed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.metadata
import itertools
import json
import logging
import math
import os
import queue
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import parallel
import zenoh
from sengen.runtime import Duration, set_checks, wire
from sengen.runtime.component import Component
from sengen.runtime.config import load_config_text
from sengen.runtime.context import Context
from sengen.runtime.kernel import Kernel
from sengen.runtime.remote import class_codec
from sengen.runtime.runner import RunApi
from sengen.runtime.transport import Transport
from sengen.runtime.zenoh_link import TransportConfig, open_session

import sengen

GENERATED_ROOT = "sengen_bench_transport_gen"
PACKAGE = "bench_remote"
STL = """\
package bench_remote;

sequence<u8, 4096> Blob;

// One payload that changes at every commit: the throughput benchmark.
class Carrier
{
  var data : Blob;
}

// Answers calls: the call benchmarks.
class Echo
{
  fn echo(x: i64) -> i64;
}

// Published at a known wall-clock time: the discovery benchmark.
class Stamped
{
  var published : i64 [static];
}
"""

UPDATE_GOAL = 0.5  # of the floor's throughput
CALL_GOAL = 0.25  # of the floor's calls per second
LATENCY_GOAL = 2.0  # added latency over the floor's round trip
DISCOVERY_GOAL_NS = 50_000_000  # plus one subscriber period

SIZES = (64, 4096)  # bytes of the changing property
CARRIERS = 100  # objects of the producer, each changed at every commit
DEPTH = 64  # calls (queries) in flight in the pipelined benchmark
KHZ = 1_000_000  # ns: the 1 kHz period
CONSUMER_PERIOD = 10_000_000  # ns: the consumer of the throughput benchmark, 100 Hz
SUBSCRIBER_PERIOD = 33_333_333  # ns: the subscriber of the discovery benchmark, 30 Hz
PUBLISH_EVERY_S = 0.1  # the discovery benchmark publishes an object this often
WARM_S = 0.5  # after the first result, before a window opens
START_TIMEOUT_S = 30.0  # a child is up, or a first result arrives, within this
STOP_TIMEOUT_S = 15.0  # a child exits within this after being told to stop
CHILD_LIFETIME_S = 120.0  # a child stops by itself after this, whatever happens
KERNEL_BOUND_S = 40.0  # a kernel of this process never runs longer than its window plus this

COUNTS_WARNINGS = ("sengen", "zenoh")


class BenchError(Exception):
    """A measurement that could not be made (a process did not start, no data arrived)."""


# --------------------------------------------------------------------------------------------
# the generated classes and their implementations


def generate(base: Path) -> None:
    (base / "stl" / PACKAGE).mkdir(parents=True)
    (base / "stl" / PACKAGE / "remote.stl").write_text(STL)
    result = sengen.generate([base / "stl"], output=base / GENERATED_ROOT)
    errors = [d.format() for d in result.diagnostics if d.is_error]
    if errors or not result.ok:
        raise SystemExit(f"bench: the STL does not build: {errors}")


@dataclass
class Classes:
    carrier: Any
    echo: Any
    stamped: Any


def load_classes(base: Path) -> Classes:
    """Import the generated package from ``base`` and derive the implementations."""
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    importlib.invalidate_caches()
    module = importlib.import_module(f"{GENERATED_ROOT}.{PACKAGE}")

    def carrier_update(self: Any, api: Any) -> None:
        data: bytes = self.data
        number = int.from_bytes(data[:8], "little") + 1 if data else 1
        self.set_next_data(number.to_bytes(8, "little") + data[8:])

    def echo_impl(self: Any, x: int) -> int:
        return x

    def idle(self: Any, api: Any) -> None:
        pass

    return Classes(
        type("ChangingCarrier", (module.CarrierBase,), {"update": carrier_update}),
        type("Echoing", (module.EchoBase,), {"echo_impl": echo_impl, "update": idle}),
        type("StampedObject", (module.StampedBase,), {"update": idle}),
    )


def payload(size: int) -> bytes:
    """A ``data`` value of ``size`` bytes: the sequence number (8 bytes), then filler."""
    return bytes(8) + b"x" * (size - 8)


def sequence_of(data: bytes) -> int:
    return int.from_bytes(data[:8], "little") if data else 0


def frame_size(classes: Classes, size: int) -> int:
    """Bytes of the frame that carries one change of ``data`` of ``size`` bytes."""
    codec = class_codec(classes.carrier.META)
    state = codec.encode_properties({"data": payload(size)})
    sender = "0" * 32  # a Zenoh id as the transport writes it
    return len(wire.Changed(sender, 1 << 63, time.time_ns(), state).encode())


# --------------------------------------------------------------------------------------------
# configuration shared by both processes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


_sessions = itertools.count(1)


def session_name(what: str) -> str:
    return f"bt{os.getpid()}_{what}{next(_sessions)}"


def endpoint(port: int) -> str:
    return f"tcp/127.0.0.1:{port}"


def transport_yaml(port: int | None, app: str) -> str:
    text = f"kernel: {{appName: {app}}}\n"
    if port is not None:
        text += f"load:\n  - name: transport\n    rendezvous: {endpoint(port)}\n"
    return text


def raw_session(port: int) -> zenoh.Session:
    """A Zenoh session configured exactly as the transport component's."""
    return open_session(TransportConfig(rendezvous=endpoint(port)))


def raw_key(session: str, what: str) -> str:
    return f"benchraw/{session}/{what}"


class Counting(logging.Handler):
    """Counts WARNING and above by logger and first words, instead of printing them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        words = " ".join(record.getMessage().split()[:4])
        key = f"{record.name}: {words}"
        self.lines[key] = self.lines.get(key, 0) + 1

    def take(self) -> str:
        lines, self.lines = self.lines, {}
        return "; ".join(f"{n} x '{text} ...'" for text, n in sorted(lines.items())) or "none"


WARNINGS = Counting()


def capture_warnings() -> None:
    for name in COUNTS_WARNINGS:
        log = logging.getLogger(name)
        log.addHandler(WARNINGS)
        log.setLevel(logging.WARNING)
        log.propagate = False


# --------------------------------------------------------------------------------------------
# the second process


class Child:
    """``python bench/transport.py --child ROLE PARAMS``: lines on its stdout are read by a
    thread; closing its stdin asks it to stop; it is killed if it does not."""

    def __init__(self, role: str, params: dict[str, Any], logs: Path) -> None:
        self.role = role
        self.log_path = logs / f"{role}-{next(_sessions)}.log"
        self._log = self.log_path.open("w")
        command = [sys.executable, str(Path(__file__).resolve()), "--child", role]
        self.process = subprocess.Popen(
            [*command, json.dumps(params)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"child-{role}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for line in stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def expect(self, word: str, timeout: float = START_TIMEOUT_S) -> str:
        """The rest of the next line that starts with ``word``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                raise BenchError(f"{self.role}: no '{word}' within {timeout:.0f} s") from None
            if line is None:
                raise BenchError(f"{self.role} exited: {self.tail()}")
            if line.split(" ", 1)[0] == word:
                return line[len(word) :].strip()

    def send(self, line: str) -> None:
        stdin = self.process.stdin
        with contextlib.suppress(OSError, ValueError):
            assert stdin is not None
            stdin.write(line + "\n")
            stdin.flush()

    def stop(self) -> None:
        """Close its stdin (its stop request), wait, kill if it does not exit."""
        with contextlib.suppress(OSError, ValueError):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT_S)
        self._reader.join(STOP_TIMEOUT_S)
        self._log.close()

    def warnings(self) -> int:
        text = self.log_path.read_text() if self.log_path.exists() else ""
        return sum(1 for line in text.splitlines() if line.startswith(("WARNING", "ERROR")))

    def tail(self) -> str:
        self._log.flush()
        lines = self.log_path.read_text().splitlines() if self.log_path.exists() else []
        return " | ".join(lines[-6:]) or f"exit code {self.process.poll()}"

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


# --------------------------------------------------------------------------------------------
# components of this process


class Driven(Component):
    """Runs ``setup(api)`` on its thread, then cycles ``work(api)`` every ``period``; ``work``
    returns True to stop the kernel."""

    def __init__(
        self,
        period: int,
        work: Callable[[RunApi], bool],
        setup: Callable[[RunApi], None] | None = None,
    ) -> None:
        self.period = period
        self.work = work
        self.setup = setup

    def run(self, api: RunApi) -> None:
        if self.setup is not None:
            self.setup(api)
        stopped = [False]

        def cycle() -> None:
            if not stopped[0] and self.work(api):
                stopped[0] = True
                api.request_kernel_stop(0)

        api.exec_loop(self.period, cycle)


class WorkDriven(Component):
    """Cycles when work reaches its queue (or every ``idle`` seconds): drain, ``work(api)``,
    update, commit; ``work`` returns True to stop the kernel."""

    def __init__(
        self,
        work: Callable[[RunApi], bool],
        setup: Callable[[RunApi], None] | None = None,
        idle: float = 0.05,
    ) -> None:
        self.work = work
        self.setup = setup
        self.idle = idle

    def run(self, api: RunApi) -> None:
        context = Context.current()
        assert context is not None
        wakeup = context.wakeup = threading.Event()
        if self.setup is not None:
            self.setup(api)
        stopped = False
        while not api.stop_requested():
            wakeup.clear()
            api.drain_inputs()
            if not stopped and self.work(api):
                stopped = True
                api.request_kernel_stop(0)
            api.update()
            api.commit()
            wakeup.wait(self.idle)


def run_kernel(
    port: int | None, components: list[tuple[str, Component, int]], bound_s: float, app: str
) -> Kernel:
    kernel = Kernel(load_config_text(transport_yaml(port, app)), components)
    code = kernel.run(Duration(int(bound_s * 1e9)))
    if code != 0:
        raise BenchError(f"the {app} kernel exited with code {code}")
    return kernel


def transport_of(kernel: Kernel) -> Transport | None:
    for runner in kernel.runners:
        if isinstance(runner.component, Transport):
            return runner.component
    return None


@dataclass
class Window:
    """A measured window: opens ``WARM_S`` after the first result, closes ``length`` later."""

    length: float
    first: float | None = None
    start: tuple[float, int] | None = None
    end: tuple[float, int] | None = None

    def observe(self, count: int) -> bool:
        """Note ``count`` (a running total) now; True once the window is closed."""
        now = time.perf_counter()
        if count <= 0:
            return False
        if self.first is None:
            self.first = now
        elif self.start is None and now - self.first >= WARM_S:
            self.start = (now, count)
        elif self.start is not None and self.end is None and now - self.start[0] >= self.length:
            self.end = (now, count)
        return self.end is not None

    def rate(self) -> float:
        if self.start is None or self.end is None:
            raise BenchError("the window did not close")
        return (self.end[1] - self.start[1]) / (self.end[0] - self.start[0])


def wait_window(window: Window, count: Callable[[], int], poll: float = 0.01) -> float:
    deadline = time.monotonic() + START_TIMEOUT_S + WARM_S + window.length
    while not window.observe(count()):
        if time.monotonic() > deadline:
            what = "no data arrived" if window.first is None else "the window did not close"
            raise BenchError(what)
        time.sleep(poll)
    return window.rate()


# --------------------------------------------------------------------------------------------
# 1. property updates


def floor_updates(size: int, window_s: float, logs: Path) -> float:
    """Messages per second from a raw ``put`` loop in the child to a subscriber here."""
    port, session = free_port(), session_name("put")
    key = raw_key(session, "data")
    received = [0]

    def on_sample(sample: zenoh.Sample) -> None:
        sample.payload.to_bytes()
        received[0] += 1

    with raw_session(port) as zsession:
        subscriber = zsession.declare_subscriber(key, on_sample)
        try:
            params = {"port": port, "key": key, "size": size}
            with Child("zenoh-put", params, logs) as putter:
                putter.expect("ready")
                return wait_window(Window(window_s), lambda: received[0])
        finally:
            subscriber.undeclare()  # type: ignore[no-untyped-call]


@dataclass
class Updates:
    rate: float
    bytes_per_update: float
    producer_cpu: float  # seconds of the producer thread's CPU per update
    consumer_cpu: float  # seconds of this process's CPU (every thread) per update
    warnings: str = ""


def bench_updates(
    classes: Classes, size: int, window_s: float, logs: Path, checks: bool = True
) -> Updates:
    """Updates per second reaching a 100 Hz consumer here from a self-driven producer there."""
    port, session = free_port(), session_name("upd")
    bus = f"{session}.b"
    window = Window(window_s)
    ends: list[tuple[int, float]] = []  # (bytes received, process CPU) at both ends
    holder: dict[str, Any] = {}
    query = f"SELECT {PACKAGE}.Carrier FROM {bus}"
    params = {
        "port": port,
        "bus": bus,
        "size": size,
        "objects": CARRIERS,
        "base": base_of(),
        "checks": checks,
    }
    with Child("sengen-producer", params, logs) as producer:

        def setup(api: RunApi) -> None:
            holder["sub"] = api.select(query)

        def work(api: RunApi) -> bool:
            proxies = holder["sub"].objects
            if len(proxies) < CARRIERS:
                return False
            total = sum(sequence_of(p.data) for p in proxies)
            before = window.start
            done = window.observe(total)
            if window.start is not before or done:
                producer.send("mark")
                ends.append((holder["transport"].bytes_received, time.process_time()))
            return done

        producer.expect("ready")
        consumer = Driven(CONSUMER_PERIOD, work, setup)
        kernel = Kernel(
            load_config_text(transport_yaml(port, "consumer")), [("consumer", consumer, 2)]
        )
        holder["transport"] = transport_of(kernel)
        checked(checks)
        try:
            code = kernel.run(Duration(int((window_s + KERNEL_BOUND_S) * 1e9)))
        finally:
            checked(True)
        if code != 0:
            raise BenchError(f"the consumer kernel exited with code {code}")
        producer.send("report")
        marks = json.loads(producer.expect("report"))["marks"]
        child_warnings = producer.warnings()
    rate = window.rate()
    assert window.start is not None and window.end is not None
    updates = window.end[1] - window.start[1]
    if len(ends) != 2 or len(marks) != 2:
        raise BenchError("the window's ends were not both marked")
    (bytes0, cpu0), (bytes1, cpu1) = ends
    (pcpu0, made0), (pcpu1, made1) = marks
    return Updates(
        rate,
        (bytes1 - bytes0) / updates,
        (pcpu1 - pcpu0) / max(made1 - made0, 1),
        (cpu1 - cpu0) / updates,
        f"{WARNINGS.take()}; producer process: {child_warnings}",
    )


def checked(enabled: bool) -> None:
    set_checks(enabled)


# --------------------------------------------------------------------------------------------
# 2. pipelined calls


def floor_calls(window_s: float, logs: Path) -> float:
    """Replies per second to raw ``get``s kept ``DEPTH`` in flight, to a queryable there."""
    port, session = free_port(), session_name("get")
    key = raw_key(session, "echo")
    replies = [0]
    slots = threading.Semaphore(DEPTH)
    stop = threading.Event()

    def on_reply(reply: zenoh.Reply) -> None:
        if reply.ok is not None:
            reply.ok.payload.to_bytes()
            replies[0] += 1

    def on_done() -> None:
        slots.release()

    def issue(querier: zenoh.Querier) -> None:
        value = 0
        while not stop.is_set():
            if not slots.acquire(timeout=0.1):
                continue
            value += 1
            # Called on Zenoh's thread: a callback on a thread of its own per get (the
            # default) would cost a quarter of the rate.
            handler = zenoh.handlers.Callback(on_reply, on_done, indirect=False)
            querier.get(handler, payload=value.to_bytes(8, "little"))

    with raw_session(port) as zsession:
        querier = zsession.declare_querier(key, consolidation=zenoh.ConsolidationMode.NONE)
        with Child("zenoh-queryable", {"port": port, "key": key}, logs) as replier:
            replier.expect("ready")
            issuer = threading.Thread(target=issue, args=(querier,), name="floor-get")
            issuer.start()
            try:
                return wait_window(Window(window_s), lambda: replies[0])
            finally:
                stop.set()
                issuer.join(STOP_TIMEOUT_S)


@dataclass
class Pipelined:
    rate: float
    wrong: int
    warnings: str


def bench_calls(classes: Classes, window_s: float, logs: Path, checks: bool = True) -> Pipelined:
    """Results per second of ``echo`` calls kept ``DEPTH`` in flight by a 1 kHz caller here to a
    1 kHz owner there."""
    port, session = free_port(), session_name("call")
    bus = f"{session}.b"
    window = Window(window_s)
    state = {"flight": 0, "done": 0, "wrong": 0, "next": 0}
    holder: dict[str, Any] = {}

    def answered(expected: int) -> Callable[[Any], None]:
        def on_result(call: Any) -> None:
            state["flight"] -= 1
            state["done"] += 1
            if call.exception() is not None or call.result() != expected:
                state["wrong"] += 1

        return on_result

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select(f"SELECT {PACKAGE}.Echo FROM {bus}")

    def work(api: RunApi) -> bool:
        proxies = holder["sub"].objects
        if not proxies:
            return False
        echo = proxies[0]
        while state["flight"] < DEPTH:
            state["next"] += 1
            state["flight"] += 1
            echo.echo(state["next"], on_result=answered(state["next"]))
        return window.observe(state["done"])

    params = {
        "port": port,
        "bus": bus,
        "period": KHZ,
        "mode": "periodic",
        "base": base_of(),
        "checks": checks,
    }
    caller = Driven(KHZ, work, setup)
    with Child("sengen-callee", params, logs) as callee:
        callee.expect("ready")
        checked(checks)
        try:
            run_kernel(port, [("caller", caller, 2)], window_s + KERNEL_BOUND_S, "caller")
        finally:
            checked(True)
        child_warnings = callee.warnings()
    rate = window.rate()
    return Pipelined(rate, state["wrong"], f"{WARNINGS.take()}; callee process: {child_warnings}")


# --------------------------------------------------------------------------------------------
# 3. latency added by crossing processes


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


class Callee(Component):
    """Owns one ``Echo``; at ``period`` or work-driven (``period`` None)."""

    def __init__(self, classes: Classes, bus: str, period: int | None) -> None:
        self.classes = classes
        self.bus = bus
        self.period = period

    def run(self, api: RunApi) -> None:
        api.get_source(self.bus).add(self.classes.echo("echo"))
        if self.period is not None:
            api.exec_loop(self.period)
            return
        WorkDriven(lambda api: False).run(api)


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


# --------------------------------------------------------------------------------------------
# 4. discovery


def bench_discovery(classes: Classes, samples: int, logs: Path) -> list[float]:
    """Seconds from publication (there) to the added-callback of a 30 Hz subscriber (here), for
    the objects published after the subscriber first saw one."""
    port, session = free_port(), session_name("disc")
    bus = f"{session}.b"
    delays: list[float] = []
    first_seen: list[int] = []

    def added(objects: list[Any]) -> None:
        now = time.time_ns()
        for obj in objects:
            if not first_seen:
                first_seen.append(now)
            elif obj.published > first_seen[0]:
                delays.append((now - obj.published) / 1e9)

    def setup(api: RunApi) -> None:
        api.select(f"SELECT {PACKAGE}.Stamped FROM {bus}", added)

    def work(api: RunApi) -> bool:
        return len(delays) >= samples

    params = {
        "port": port,
        "bus": bus,
        "every": PUBLISH_EVERY_S,
        "count": samples + 20,
        "base": base_of(),
    }
    with Child("sengen-publisher", params, logs) as publisher:
        publisher.expect("ready")
        subscriber = Driven(SUBSCRIBER_PERIOD, work, setup)
        bound = samples * PUBLISH_EVERY_S * 2 + KERNEL_BOUND_S
        run_kernel(port, [("subscriber", subscriber, 2)], bound, "subscriber")
    if len(delays) < samples:
        raise BenchError(f"only {len(delays)} of {samples} objects were discovered")
    return delays


# --------------------------------------------------------------------------------------------
# the child's roles


_BASE: list[str] = []  # the folder of the generated package, for the children


def base_of() -> str:
    return _BASE[0]


class Control:
    """The child's stdin: EOF (or ``stop``) is the stop request, ``mark`` a reading of
    ``probe`` (kept), ``report`` a request for the readings (``report {json}``)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.probe: Callable[[], tuple[float, int]] | None = None
        self.marks: list[tuple[float, int]] = []
        self._thread = threading.Thread(target=self._read, name="control", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if not words or words[0] == "stop":
                break
            if words[0] == "mark" and self.probe is not None:
                self.marks.append(self.probe())
            elif words[0] == "report":
                say("report", json.dumps({"marks": self.marks}))
        self.stop.set()

    def wait(self) -> None:
        self.stop.wait(CHILD_LIFETIME_S)


def say(*words: object) -> None:
    print(*words, flush=True)


def child_zenoh_put(params: dict[str, Any], control: Control) -> None:
    data = b"x" * int(params["size"])
    with raw_session(int(params["port"])) as zsession:
        publisher = zsession.declare_publisher(
            params["key"],
            congestion_control=zenoh.CongestionControl.BLOCK,
            reliability=zenoh.Reliability.RELIABLE,
        )
        say("ready")
        deadline = time.monotonic() + CHILD_LIFETIME_S
        stop = control.stop
        put = publisher.put
        while not stop.is_set() and time.monotonic() < deadline:
            for _ in range(100):
                put(data)
        publisher.undeclare()  # type: ignore[no-untyped-call]


def child_zenoh_queryable(params: dict[str, Any], control: Control) -> None:
    key = params["key"]

    def on_query(query: zenoh.Query) -> None:
        with query:
            request = query.payload
            query.reply(key, request.to_bytes() if request is not None else b"")

    with raw_session(int(params["port"])) as zsession:
        queryable = zsession.declare_queryable(key, on_query)
        say("ready")
        control.wait()
        queryable.undeclare()  # type: ignore[no-untyped-call]


class Producer(Component):
    """Self-driven: drain, every object's update (a new ``data``), commit, as fast as it can.
    ``control.probe`` reads its thread's CPU time and the updates made so far."""

    def __init__(self, objects: list[Any], bus: str, control: Control) -> None:
        self.objects = objects
        self.bus = bus
        self.control = control
        self.made = 0

    def run(self, api: RunApi) -> None:
        source = api.get_source(self.bus)
        for obj in self.objects:
            source.add(obj)
        clock = time.pthread_getcpuclockid(threading.get_ident())
        self.control.probe = lambda: (time.clock_gettime(clock), self.made)
        count = len(self.objects)
        while not api.stop_requested():
            api.drain_inputs()
            api.update()
            api.commit()
            self.made += count


def run_child_kernel(
    port: int, components: list[tuple[str, Component, int]], control: Control, app: str
) -> None:
    """Run until the parent closes stdin (or the child's lifetime ends)."""
    kernel = Kernel(load_config_text(transport_yaml(port, app)), components)

    def stopper() -> None:
        control.wait()
        kernel.request_stop(0)

    threading.Thread(target=stopper, name="stopper", daemon=True).start()
    say("ready")
    kernel.run(Duration(int(CHILD_LIFETIME_S * 1e9)))


def child_sengen_producer(params: dict[str, Any], control: Control) -> None:
    classes = load_classes(Path(params["base"]))
    size = int(params["size"])
    objects = []
    for i in range(int(params["objects"])):
        obj = classes.carrier(f"c{i}")
        obj.set_next_data(payload(size))
        objects.append(obj)
    set_checks(bool(params["checks"]))
    producer = Producer(objects, params["bus"], control)
    run_child_kernel(int(params["port"]), [("producer", producer, 2)], control, "producer")


def child_sengen_callee(params: dict[str, Any], control: Control) -> None:
    classes = load_classes(Path(params["base"]))
    period = int(params["period"]) if params["mode"] == "periodic" else None
    set_checks(bool(params.get("checks", True)))
    callee = Callee(classes, params["bus"], period)
    run_child_kernel(int(params["port"]), [("callee", callee, 2)], control, "callee")


class Publishing(Component):
    """At 50 Hz: a new ``Stamped`` object every ``every`` seconds, ``count`` in all."""

    def __init__(self, classes: Classes, bus: str, every: float, count: int) -> None:
        self.classes = classes
        self.bus = bus
        self.every = every
        self.count = count

    def run(self, api: RunApi) -> None:
        source = api.get_source(self.bus)
        published = [0]
        last = [0.0]

        def work() -> None:
            now = time.monotonic()
            if published[0] < self.count and now - last[0] >= self.every:
                last[0] = now
                published[0] += 1
                source.add(self.classes.stamped(f"s{published[0]}", time.time_ns()))

        api.exec_loop(20_000_000, work)


def child_sengen_publisher(params: dict[str, Any], control: Control) -> None:
    classes = load_classes(Path(params["base"]))
    publishing = Publishing(classes, params["bus"], float(params["every"]), int(params["count"]))
    run_child_kernel(int(params["port"]), [("publisher", publishing, 2)], control, "publisher")


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


def best(label: str, measure: Callable[[], Any], repeat: int, key: Callable[[Any], float]) -> Any:
    """The best of ``repeat`` runs (the machine is noisy: the least disturbed run), None
    when none could be measured."""
    runs = [attempt(label, measure) for _ in range(repeat)]
    done = [run for run in runs if run is not None]
    return max(done, key=key) if done else None


def rate_of(value: Any) -> float:
    return float(value if isinstance(value, float) else value.rate)


def report_updates(classes: Classes, window_s: float, repeat: int, logs: Path) -> None:
    header(
        f"1. remote property updates per second, {CARRIERS} objects changed per commit by a"
        f" self-driven producer, 100 Hz consumer, best of {repeat}"
    )
    for size, checks in ((64, True), (64, False), (4096, True)):
        frame = frame_size(classes, size)
        label = f"{size} B property, checks {'on' if checks else 'off'}"
        floor = best(
            f"{label}, floor",
            functools.partial(floor_updates, frame, window_s, logs),
            repeat,
            rate_of,
        )
        measured = best(
            label,
            functools.partial(bench_updates, classes, size, window_s, logs, checks),
            repeat,
            rate_of,
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
            f"    {frame} B frames ({measured.bytes_per_update:,.0f} B received per update);"
            f" CPU per update: producer thread {us(measured.producer_cpu)},"
            f" consumer process {us(measured.consumer_cpu)}"
        )
        print(f"    warnings: {measured.warnings}")


def report_calls(classes: Classes, window_s: float, repeat: int, logs: Path) -> None:
    header(
        f"2. pipelined remote calls per second, two 1 kHz components, {DEPTH} in flight,"
        f" best of {repeat}"
    )
    floor = best(
        "raw get/queryable, floor",
        functools.partial(floor_calls, window_s, logs),
        repeat,
        rate_of,
    )
    for checks in (True, False):
        label = f"echo(x), checks {'on' if checks else 'off'}"
        measured = best(
            label,
            functools.partial(bench_calls, classes, window_s, logs, checks),
            repeat,
            rate_of,
        )
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


def main(argv: list[str] | None = None) -> None:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--child"]:
        child_main(arguments[1], json.loads(arguments[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="shorter windows")
    args = parser.parse_args(arguments)
    window_s = 1.0 if args.quick else 2.0
    calls = 200 if args.quick else 600
    sweep = 600 if args.quick else 2000  # caller cycles of the 1 kHz round trips
    repeat = 1 if args.quick else 2  # runs of each throughput figure, the best kept
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
        report_updates(classes, window_s, repeat, logs)
        report_calls(classes, window_s, repeat, logs)
        report_latency(classes, calls, sweep, logs)
        report_discovery(classes, discovered, logs)
    parallel.report(args.quick, "5. Parallel speed-up")
    left = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if left:
        print(f"\n    threads still alive: {', '.join(sorted(left))}")


if __name__ == "__main__":
    main()
