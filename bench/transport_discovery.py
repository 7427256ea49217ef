"""Part 4 of the transport benchmarks (bench/transport.py): discovery.

From the publication of a ``Stamped`` object in the child to the added-callback of a 30 Hz
subscriber here. The child's role, the publisher, is at the end.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from transport_common import (
    KERNEL_BOUND_S,
    PACKAGE,
    BenchError,
    Child,
    Classes,
    Control,
    Driven,
    base_of,
    free_port,
    load_classes,
    run_child_kernel,
    run_kernel,
    session_name,
)

from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component

SUBSCRIBER_PERIOD = 33_333_333  # ns: the subscriber of the discovery benchmark, 30 Hz
PUBLISH_EVERY_S = 0.1  # the discovery benchmark publishes an object this often


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
# the publisher process


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
