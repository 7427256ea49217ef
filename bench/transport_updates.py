"""Part 1 of the transport benchmarks (bench/transport.py): remote property updates per second.

A self-driven producer in the child changes every ``Carrier`` it owns at every commit; a
100 Hz consumer here counts the updates that reach its proxies. The floor is a raw ``put``
loop in the child to a subscriber here. The child's two roles are at the end.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zenoh
from transport_common import (
    CHILD_LIFETIME_S,
    KERNEL_BOUND_S,
    PACKAGE,
    WARNINGS,
    BenchError,
    Child,
    Classes,
    Control,
    Driven,
    Window,
    base_of,
    checked,
    free_port,
    load_classes,
    raw_key,
    raw_session,
    run_child_kernel,
    say,
    sequence_of,
    session_name,
    transport_of,
    transport_yaml,
    wait_window,
)

from sengen.runtime import Duration, set_checks
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

CARRIERS = 100  # objects of the producer, each changed at every commit
CONSUMER_PERIOD = 10_000_000  # ns: the consumer of the throughput benchmark, 100 Hz


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


# --------------------------------------------------------------------------------------------
# the producer process


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


def child_sengen_producer(params: dict[str, Any], control: Control) -> None:
    classes = load_classes(Path(params["base"]))
    size = int(params["size"])
    objects = []
    for i in range(int(params["objects"])):
        obj = classes.carrier(f"c{i}")
        obj.start(size)
        objects.append(obj)
    set_checks(bool(params["checks"]))
    producer = Producer(objects, params["bus"], control)
    run_child_kernel(int(params["port"]), [("producer", producer, 2)], control, "producer")
