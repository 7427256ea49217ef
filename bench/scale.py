"""Scale (issue 28): ``python bench/scale.py [--counts 1000,10000] [--modes producer,idle]``.

The pattern: a class of three f64 properties and a static string; every object changes one
property per cycle (x, y, z in turn). Modes, each printing one line per N:

* ``producer``: one process; a producer at ``--rate`` Hz owns N objects. Figures: its thread
  CPU per changed object per cycle (drain + update + commit, median cycle), its cycles run out
  of those due, and the garbage collections (``gc.callbacks``): count, longest, and the lost
  cycles they explain (those the gap would not have lost without the collections' time); the
  other lost cycles of a gap in which the thread used less than a period of CPU are the
  machine's (other threads or processes held the GIL or the cores).
* ``local``: the same with a consumer holding a local proxy of each object (one subscription)
  at the same rate: its CPU per changed proxy, cycles, drain time and latency p99 (the producer
  writes its wall clock; the consumer reads it after its drain).
* ``idle``: N objects that never change, seen through N local proxies: the consumer's drain
  time (median, p99).
* ``remote-idle``: N remote proxies of objects that never change, in one context without a
  transport (nothing arrives): the refresh time of its drain (median, p99), then the same with
  one proxy in a hundred receiving a commit per drain.
* ``received``: the consumer's side of remote commits without Zenoh: N remote proxies, each
  commit one ``Column`` message (one number of every object) handed to the transport's receive
  path, the drain, then a loop reading every proxy's commit time: time per change of each.
* ``remote``: ``--producers`` child processes share N objects; this process subscribes through
  the transport. Figures: publish time (the children's publication, wall clock, to this process
  holding all N), late-joiner discovery (a second kernel started afterwards, to all N), updates
  shown per second beside bare zenoh-python in the same run (one key per object, a put per
  change, a wildcard subscriber; children of the same shape), the consumer's cycles run and
  latency p99. ``--filter``: the subscription keeps one object in ten (``WHERE label < '1'``),
  without the bare counterpart.

The benchmark reports; it never asserts a timing. ``--seconds`` is each window's length.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import itertools
import json
import logging
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import sengen
from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.objects.codec import class_codec
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.registry import registry

GENERATED_ROOT = "sengen_bench_scale_gen"
PACKAGE = "bench_scale"
STL = """\
package bench_scale;

class Entity
{
  var x : f64;
  var y : f64;
  var z : f64;
  var label : string [static];
}
"""
BUS = "scale.entities"
QUERY = f"SELECT {PACKAGE}.Entity FROM {BUS}"
BOUND_S = 600.0  # a kernel never runs longer than this, whatever happens


# --------------------------------------------------------------------------------------------
# the class


def generate(base: Path) -> None:
    (base / "stl" / PACKAGE).mkdir(parents=True)
    (base / "stl" / PACKAGE / "scale.stl").write_text(STL)
    result = sengen.generate([base / "stl"], output=base / GENERATED_ROOT)
    if not result.ok:
        raise SystemExit(f"bench: the STL does not build: {result.diagnostics}")


def entity_classes(base: Path) -> tuple[Any, Any]:
    """The implementations: one whose update writes the wall clock of its cycle into x, y or z
    in turn, one that never changes. The driving component names the first object it updates
    (``Moving.clock.lead``); that object's update starts the cycle: it reads the wall clock and
    picks the property, once for every object (so that the figure is the runtime's cost per
    write, not the bench's choice, and a value is as old as its cycle, not one period more)."""
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    importlib.invalidate_caches()
    module = importlib.import_module(f"{GENERATED_ROOT}.{PACKAGE}")
    setters: tuple[Callable[[Any, float], None], ...] = (
        module.EntityBase.set_next_x,
        module.EntityBase.set_next_y,
        module.EntityBase.set_next_z,
    )
    write = setters[0]
    now = 0.0

    class Clock:
        """The cycle's count and the object whose update starts each cycle."""

        def __init__(self) -> None:
            self.cycle = 0
            self.lead: Any = None

    clock = Clock()

    def update(self: Any, api: Any) -> None:
        nonlocal write, now
        if self is clock.lead:
            clock.cycle += 1
            write, now = setters[clock.cycle % 3], time.time()
        write(self, now)

    def still(self: Any, api: Any) -> None:
        pass

    moving = type("Moving", (module.EntityBase,), {"update": update, "clock": clock})
    return moving, type("Still", (module.EntityBase,), {"update": still})


def label(index: int) -> str:
    """The static string of object ``index``: those of one index in ten sort below "1" (the
    10 % filter of ``--filter``)."""
    return f"{index % 10} entity {index}"


FILTER = " WHERE label < '1'"


# --------------------------------------------------------------------------------------------
# garbage collections


class Collections:
    """Every collection while installed: (generation, start, end) in perf_counter ns."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int, int]] = []
        self._start = 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter_ns()
        else:
            self.spans.append((info["generation"], self._start, time.perf_counter_ns()))

    def __enter__(self) -> Collections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self)

    def summary(self) -> str:
        full = [s for s in self.spans if s[0] == 2]
        longest = max((e - b for _, b, e in self.spans), default=0) / 1e6
        return f"gc {len(self.spans)} ({len(full)} full, longest {longest:.1f} ms)"

    def within(self, begin: int, end: int) -> int:
        """The time (ns) collections took between ``begin`` and ``end``."""
        return sum(min(e, end) - max(b, begin) for _, b, e in self.spans if b < end and e > begin)


@dataclass
class Cycles:
    """What a component's ``work`` saw of its cycles: wall time (perf_counter) and thread CPU
    at each call, after the window opened."""

    marks: list[tuple[int, int]] = field(default_factory=list)

    def mark(self) -> None:
        self.marks.append((time.perf_counter_ns(), time.thread_time_ns()))

    def run_share(self, period: int) -> tuple[int, int]:
        """(cycles run, cycles due) over the window."""
        if len(self.marks) < 2:
            return len(self.marks), len(self.marks)
        span = self.marks[-1][0] - self.marks[0][0]
        return len(self.marks) - 1, round(span / period)

    def lost_to_gc(self, period: int, collections: Collections) -> tuple[int, int, int]:
        """(cycles lost, of which collections explain, of which the machine explains): a gap
        between two cycles loses the cycles it spans; the collections in it explain those it
        would not have lost without their time; the machine (other threads holding the GIL,
        other processes holding the cores) those of a gap in which the thread used less than
        a period of CPU, its work fitting in its cycle."""
        lost = explained = starved = 0
        for (w0, c0), (w1, c1) in zip(self.marks, self.marks[1:], strict=False):
            missing = round((w1 - w0) / period) - 1
            if missing > 0:
                lost += missing
                without = round((w1 - w0 - collections.within(w0, w1)) / period) - 1
                by_gc = missing - max(without, 0)
                explained += by_gc
                if c1 - c0 < period:
                    starved += missing - by_gc
        return lost, explained, starved

    def cpu_per_cycle(self) -> float:
        """Median thread CPU (ns) between consecutive marks."""
        steps = [c1 - c0 for (_, c0), (_, c1) in zip(self.marks, self.marks[1:], strict=False)]
        return statistics.median(steps) if steps else 0.0


def p99(values: Sequence[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# --------------------------------------------------------------------------------------------
# one process


class Producer(Component):
    """Owns ``count`` objects; every cycle each changes one property to the wall clock."""

    def __init__(self, cls: Any, count: int, period: int, changing: bool, warm: int) -> None:
        self.cls, self.count, self.period = cls, count, period
        self.changing, self.warm = changing, warm
        self.cycles = Cycles()
        self.ready = threading.Event()
        self.window = threading.Event()  # set by the bench: marks are kept from then

    def run(self, api: RunApi) -> None:
        source = api.get_source(BUS)
        objects = [self.cls(f"e{i}", label=label(i)) for i in range(self.count)]
        source.add(objects)
        if self.changing:
            self.cls.clock.lead = objects[0]
        seen = [0]

        def work() -> None:
            seen[0] += 1
            if self.window.is_set():
                self.cycles.mark()
            elif seen[0] == self.warm:
                self.ready.set()

        api.exec_loop(self.period, work)


class Consumer(Component):
    """Holds a local proxy of every object; every cycle reads one proxy's x, y, z."""

    def __init__(self, count: int, period: int) -> None:
        self.count, self.period = count, period
        self.cycles = Cycles()
        self.drains: list[int] = []
        self.latencies: list[float] = []
        self.held = threading.Event()
        self.window = threading.Event()

    def run(self, api: RunApi) -> None:
        subscription = api.select(QUERY)
        last = [0.0]

        def work() -> None:
            if not self.held.is_set():
                if len(subscription) >= self.count:
                    self.held.set()
                return
            if not self.window.is_set():
                return
            self.cycles.mark()
            probe: Any = subscription._objects[0]
            newest = max(probe.x, probe.y, probe.z)
            if newest != last[0]:
                last[0] = newest
                self.latencies.append(time.time() - newest)

        api.exec_loop(self.period, work)


class DrainTimer:
    """A tracer: the wall time of each drain of one component."""

    def __init__(self, component: str) -> None:
        self.component = component
        self.drains: list[int] = []
        self.on = False

    def zone(self, component: str, zone: str, begin_ns: int, end_ns: int, cycle_time: int) -> None:
        if self.on and zone == "drain" and component == self.component:
            self.drains.append(end_ns - begin_ns)

    def message(self, component: str, text: str, cycle_time: int, lost: int) -> None:
        pass


def local(cls: Any, count: int, rate: float, seconds: float, mode: str) -> str:
    """``mode``: "producer" (alone), "local" (with a consumer), "idle" (objects that never
    change, with a consumer)."""
    period = round(1e9 / rate)
    warm = 10
    changing = mode != "idle"
    producer = Producer(cls, count, period, changing, warm)
    consumer = Consumer(count, period)
    timer = DrainTimer("consumer")
    config = load_config_text("kernel: {appName: scale}\n")
    components: list[tuple[str, Component, int]] = [("producer", producer, 2)]
    if mode != "producer":
        components.append(("consumer", consumer, 2))
    else:
        consumer.held.set()
    kernel = Kernel(config, components)
    kernel.tracers.install(timer)
    done = threading.Event()

    def drive() -> None:
        try:
            kernel.run(Duration(int(BOUND_S * 1e9)))
        finally:
            done.set()

    thread = threading.Thread(target=drive, name="scale-kernel")
    thread.start()
    try:
        if not (consumer.held.wait(BOUND_S / 2) and producer.ready.wait(BOUND_S / 2)):
            return "did not start"
        time.sleep(3 * period / 1e9)  # the subscription's first refreshes are behind
        with Collections() as collections:
            timer.on = True
            producer.window.set()
            consumer.window.set()
            time.sleep(seconds)
            producer.window.clear()
            consumer.window.clear()
            timer.on = False
    finally:
        kernel.request_stop(0)
        thread.join(60)
    drains = sorted(timer.drains)
    drain_text = (
        f"drain p50 {statistics.median(drains) / 1e6:.3f} ms p99 {p99(drains) / 1e6:.3f} ms"
        if drains
        else "no drain"
    )
    if not changing:
        return f"N={count:>6} idle proxies: consumer {drain_text}"
    run, due = producer.cycles.run_share(period)
    lost, explained, starved = producer.cycles.lost_to_gc(period, collections)
    per_object = producer.cycles.cpu_per_cycle() / count / 1e3
    text = (
        f"N={count:>6} {rate:g} Hz {mode}: producer {per_object:.2f} µs/changed object/cycle,"
        f" cycles {run}/{due}, lost {lost} ({explained} to gc, {starved} to the machine)"
    )
    if mode == "local":
        crun, cdue = consumer.cycles.run_share(period)
        clost, cexplained, cstarved = consumer.cycles.lost_to_gc(period, collections)
        per_proxy = consumer.cycles.cpu_per_cycle() / count / 1e3
        text += (
            f"; consumer {per_proxy:.2f} µs/changed proxy/cycle, cycles {crun}/{cdue}, lost"
            f" {clost} ({cexplained} to gc, {cstarved} to the machine), {drain_text},"
            f" latency p99 {p99(consumer.latencies) * 1e3:.1f} ms"
        )
    return f"{text}; {collections.summary()}"


# --------------------------------------------------------------------------------------------
# across processes


@dataclass
class ChildSpec:
    kind: str  # "sengen" or "zenoh"
    base: str
    port: int
    session: str
    first: int  # the objects e<first> .. e<last - 1>
    last: int
    rate: float

    def argument(self) -> str:
        return json.dumps(self.__dict__)


def remote_child(argument: str) -> None:
    """A producer process: publishes its objects (or, bare, puts one key per object), prints
    ``published <wall ns>``, changes each object once per cycle until its stdin closes."""
    spec = ChildSpec(**json.loads(argument))
    logging.getLogger("sengen").setLevel(logging.ERROR)  # its overruns are not this figure
    period = round(1e9 / spec.rate)
    stop = threading.Event()

    def watch_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    if spec.kind == "zenoh":
        bare_producer(spec, period, stop)
        return
    moving, _ = entity_classes(Path(spec.base))

    class Publishing(Component):
        def run(self, api: RunApi) -> None:
            source = api.get_source(f"{spec.session}.entities")
            objects = [moving(f"e{i}", label=label(i)) for i in range(spec.first, spec.last)]
            source.add(objects)
            moving.clock.lead = objects[0]
            print(f"published {time.time_ns()}", flush=True)

            def work() -> None:
                if stop.is_set():
                    api.request_kernel_stop(0)

            api.exec_loop(period, work)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from transport_common import transport_yaml

    config = load_config_text(transport_yaml(spec.port, f"producer{spec.first}"))
    Kernel(config, [("producer", Publishing(), 2)]).run(Duration(int(BOUND_S * 1e9)))


def bare_producer(spec: ChildSpec, period: int, stop: threading.Event) -> None:
    """bare zenoh-python: one key per object, a put of the wall clock per change."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from transport_common import raw_session

    session = raw_session(spec.port)
    try:
        keys = [f"benchscale/{spec.session}/e{i}" for i in range(spec.first, spec.last)]
        print(f"published {time.time_ns()}", flush=True)
        deadline = time.monotonic()
        put = session.put
        while not stop.is_set():
            stamp = struct.pack("<d", time.time())
            for key in keys:
                put(key, stamp)
            deadline += period / 1e9
            stop.wait(max(0.0, deadline - time.monotonic()))
    finally:
        session.close()  # type: ignore[no-untyped-call]


class Children:
    """The producer processes of one measurement; stopped on exit."""

    def __init__(self, specs: list[ChildSpec]) -> None:
        script = str(Path(__file__).resolve())
        self.processes = [
            subprocess.Popen(
                [sys.executable, script, "--child", spec.argument()],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for spec in specs
        ]

    def published(self) -> int:
        """The latest publication time (wall ns) of the children, once all printed it."""
        times = []
        for process in self.processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith("published"):
                raise SystemExit(f"bench: a producer failed ({line!r})")
            times.append(int(line.split()[1]))
        return max(times)

    def __enter__(self) -> Children:
        return self

    def __exit__(self, *_: object) -> None:
        for process in self.processes:
            assert process.stdin is not None
            process.stdin.close()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def specs(
    kind: str, base: Path, port: int, session: str, count: int, producers: int, rate: float
) -> list[ChildSpec]:
    share = -(-count // producers)
    return [
        ChildSpec(kind, str(base), port, session, i * share, min(count, (i + 1) * share), rate)
        for i in range(producers)
    ]


def bare(base: Path, count: int, producers: int, args: argparse.Namespace) -> tuple[float, float]:
    """bare zenoh-python: (samples delivered per second, latency p99 s)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from transport_common import free_port, raw_session

    port = free_port()
    session_name = f"s{os.getpid()}z{count}"
    received = [0]
    latencies: list[float] = []

    def arrived(sample: Any) -> None:
        received[0] += 1
        if received[0] % 97 == 0:
            latencies.append(time.time() - struct.unpack("<d", bytes(sample.payload))[0])

    session = raw_session(port)
    try:
        subscriber = session.declare_subscriber(f"benchscale/{session_name}/**", arrived)
        with Children(
            specs("zenoh", base, port, session_name, count, producers, args.rate)
        ) as children:
            children.published()
            time.sleep(2.0)  # routes settle
            before = received[0]
            time.sleep(args.seconds)
            delivered = (received[0] - before) / args.seconds
        subscriber.undeclare()  # type: ignore[no-untyped-call]
    finally:
        session.close()  # type: ignore[no-untyped-call]
    return delivered, p99(latencies)


class RemoteConsumer(Component):
    """Holds a remote proxy of every object; every cycle counts the proxies whose commit time
    moved (the updates it shows) and reads a sample's wall clock."""

    def __init__(self, bus: str, count: int, period: int, where: str) -> None:
        self.bus, self.count, self.period, self.where = bus, count, period, where
        self.cycles = Cycles()
        self.started = time.time_ns()
        self.held_at = 0
        self.shown = 0
        self.latencies: list[float] = []
        self.held = threading.Event()
        self.window = threading.Event()
        self.done = threading.Event()

    def run(self, api: RunApi) -> None:
        subscription = api.select(f"SELECT {PACKAGE}.Entity FROM {self.bus}{self.where}")
        seen: dict[Any, int] = {}

        def work() -> None:
            if not self.held.is_set():
                if len(subscription) >= self.count:
                    self.held_at = time.time_ns()
                    self.held.set()
                return
            if not self.window.is_set():
                if self.cycles.marks:
                    self.done.set()
                return
            self.cycles.mark()
            proxy: Any
            for index, proxy in enumerate(subscription._objects):
                stamp = proxy.last_commit_time
                if seen.get(proxy) != stamp:
                    seen[proxy] = stamp
                    self.shown += 1
                    if index < 100:
                        self.latencies.append(time.time() - max(proxy.x, proxy.y, proxy.z))

        api.exec_loop(self.period, work)


def hold(
    port: int,
    bus: str,
    count: int,
    period: int,
    window: float,
    collections: Collections,
    where: str = "",
) -> tuple[RemoteConsumer, float]:
    """A consumer kernel here until it holds ``count`` objects and, with ``window``, for that
    long after: the consumer and its start-up time (wall s)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from transport_common import transport_yaml

    consumer = RemoteConsumer(bus, count, period, where)
    kernel = Kernel(load_config_text(transport_yaml(port, "consumer")), [("consumer", consumer, 2)])
    thread = threading.Thread(target=lambda: kernel.run(Duration(int(BOUND_S * 1e9))))
    started = time.time()
    thread.start()
    try:
        if consumer.held.wait(BOUND_S / 4) and window:
            time.sleep(1.0)
            with collections:
                consumer.window.set()
                time.sleep(window)
                consumer.window.clear()
            consumer.done.wait(5.0)
    finally:
        kernel.request_stop(0)
        thread.join(60)
    return consumer, started


def remote(base: Path, count: int, producers: int, args: argparse.Namespace) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from transport_common import free_port

    period = round(1e9 / args.rate)
    where = FILTER if args.filter else ""
    matching = -(-count // 10) if args.filter else count
    # A filtered subscription has no bare counterpart: each process would filter in Python.
    zenoh_rate, zenoh_p99 = (0.0, 0.0) if args.filter else bare(base, count, producers, args)
    port = free_port()
    session_name = f"s{os.getpid()}n{count}"
    bus = f"{session_name}.entities"
    with Children(
        specs("sengen", base, port, session_name, count, producers, args.rate)
    ) as children:
        published = children.published()
        collections = Collections()
        consumer, _ = hold(port, bus, matching, period, args.seconds, collections, where)
        publish_s = (consumer.held_at - published) / 1e9 if consumer.held_at else float("nan")
        late, started = hold(port, bus, matching, period, 0.0, Collections(), where)
        late_s = late.held_at / 1e9 - started if late.held_at else float("nan")
    run, due = consumer.cycles.run_share(period)
    lost, explained, starved = consumer.cycles.lost_to_gc(period, collections)
    shown = consumer.shown / args.seconds
    ratio = shown / zenoh_rate if zenoh_rate else float("nan")
    versus = (
        f" vs bare zenoh {zenoh_rate:,.0f}/s ({ratio:.2f}x)" if zenoh_rate else " (no bare run)"
    )
    bare_p99 = f" (bare {zenoh_p99 * 1e3:.0f} ms)" if zenoh_rate else ""
    return (
        f"N={count:>6}{where} {producers} producer process(es) -> 1: publish {publish_s:.2f} s,"
        f" late joiner {late_s:.2f} s; updates shown {shown:,.0f}/s{versus}; consumer cycles"
        f" {run}/{due}, lost {lost} ({explained} to gc, {starved} to the machine), latency p99"
        f" {p99(consumer.latencies) * 1e3:.0f} ms{bare_p99}; {collections.summary()}"
    )


def received(cls: Any, count: int, commits: int = 30) -> str:
    """The consumer's side of a remote commit that changed one number of every object, without
    Zenoh: ``count`` remote proxies in one context, each commit a ``wire.Column`` message handed
    to the transport's receive path, then the drain, then a loop reading every proxy's commit
    time (what the ``remote`` consumer does): median time per change of each."""
    from sengen.runtime.components.transport import wire
    from sengen.runtime.components.transport.handles import RemoteHandle
    from sengen.runtime.components.transport.transport import Peer, Transport

    sender = "s" * 32
    transport = Transport()
    peer = transport._peers[sender] = Peer(sender, 0, label="producer/1")
    context = Context("consumer")
    context.thread = threading.get_ident()
    _, proxy_class = registry.proxies(cls.META)
    state = {"x": 0.0, "y": 0.0, "z": 0.0, "label": "e"}
    proxies: list[Any] = []
    for oid in range(1, count + 1):
        handle = RemoteHandle(
            cls.META, proxy_class, sender, oid, f"e{oid}", BUS, dict(state), 0, lambda *a: None,
            peer.lock,
        )  # fmt: skip
        peer.handles[oid] = handle
        proxies.append(handle.view_for(context))
    ids = wire.pack_ids(range(1, count + 1))
    members = [class_codec(cls.META).column_writers[p][1] for p in ("x", "y", "z")]
    phases: list[list[int]] = [[], [], []]
    for k in range(1, commits + 1):
        values = struct.pack(f"<{count}d", *[float(k)] * count)
        message = wire.Batch.header(sender) + wire.Column.item_head(
            k, members[k % 3], 8, ids
        ) + values  # fmt: skip
        marks = [time.perf_counter_ns()]
        transport.handle_frame("", message)
        marks.append(time.perf_counter_ns())
        context.refresh()
        marks.append(time.perf_counter_ns())
        shown = sum(1 for proxy in proxies if proxy.last_commit_time == k)
        marks.append(time.perf_counter_ns())
        assert shown == count  # every change arrived and shows
        for phase, (begin, end) in zip(phases, itertools.pairwise(marks), strict=True):
            phase.append(end - begin)
    deliver, drain, read = (statistics.median(p) / count for p in phases)
    return (
        f"N={count:>6} remote commits received: deliver {deliver:.0f} ns, drain {drain:.0f} ns,"
        f" read {read:.0f} ns per change"
    )


def remote_idle(cls: Any, count: int, drains: int = 200) -> str:
    """The drain's proxy refresh (``Context.refresh``) over ``count`` remote proxies: all idle,
    then one in a hundred fed an encoded commit before each drain, as the transport does."""
    proxy_class = registry.proxies(cls.META)[1]
    context = Context("consumer")
    state = {"x": 0.0, "y": 0.0, "z": 0.0, "label": "e"}
    # No endpoint: nothing here calls or subscribes to events.
    proxies: list[Any] = [
        proxy_class(cast(Any, None), context, label(i), BUS, state, 0) for i in range(count)
    ]
    changes = [class_codec(cls.META).encode_properties({"x": float(k)}) for k in range(drains)]
    fed = proxies[::100]
    figures = []
    for feeding in (False, True):
        times = []
        for k in range(drains):
            if feeding:
                for proxy in fed:
                    proxy._receive_state_(changes[k], k)
            begin = time.perf_counter_ns()
            context.refresh()
            times.append(time.perf_counter_ns() - begin)
        times.sort()
        figures.append(f"p50 {statistics.median(times) / 1e6:.3f} ms p99 {p99(times) / 1e6:.3f} ms")
    assert all(p.x == float(drains - 1) for p in fed)  # the feeding did reach them
    return (
        f"N={count:>6} idle remote proxies: refresh {figures[0]};"
        f" {len(fed)} fed: refresh {figures[1]}"
    )


# --------------------------------------------------------------------------------------------
# entry point


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1000,10000,50000,100000")
    parser.add_argument("--modes", default="producer,local,idle,remote-idle,received,remote")
    parser.add_argument("--rate", type=float, default=30.0, help="Hz (local, remote)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each window")
    parser.add_argument("--producers", default="1,3", help="remote: child processes")
    parser.add_argument("--filter", action="store_true", help="remote: a 10%% filter")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        remote_child(args.child)
        return
    logging.getLogger("sengen").setLevel(logging.ERROR)  # overruns are counted, not printed
    counts = [int(c) for c in args.counts.split(",")]
    modes = args.modes.split(",")
    load = os.getloadavg()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        generate(base)
        moving, still = entity_classes(base)
        for count in counts:
            for mode in ("producer", "local", "idle"):
                if mode in modes:
                    cls = still if mode == "idle" else moving
                    print(local(cls, count, args.rate, args.seconds, mode), flush=True)
            if "remote-idle" in modes:
                print(remote_idle(still, count), flush=True)
            if "received" in modes:
                print(received(still, count), flush=True)
            if "remote" in modes:
                for producers in [int(p) for p in args.producers.split(",")]:
                    print(remote(base, count, producers, args), flush=True)


if __name__ == "__main__":
    main()
