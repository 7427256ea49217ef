"""Discovery at scale across processes (issue 28, part of bench/transport.py's reports):
``python bench/transport_scale.py [--objects N]`` prints two figures, each beside its goal.

1. publish: a subscriber here holds ``SELECT bench_remote.Stamped FROM <bus>``; a child process
   publishes N objects in one commit; the time from the child's publication (wall clock, a
   static property of the objects) to the subscriber holding all N. Goal ≤ 2 s for 50,000.
2. late joiner: the child has published N objects; a new kernel here starts, subscribes, and
   the time from its start to holding all N. Goal ≤ 3 s for 50,000.

Both run the transport as shipped (v2 keys: one Names frame per batch, no Zenoh declaration per
object). The benchmark reports; it never asserts a timing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from transport_common import (
    Driven,
    free_port,
    generate,
    load_classes,
    session_name,
    transport_yaml,
)

from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel


class Publisher(Component):
    """Publishes ``count`` objects in its first cycle, then idles until stopped."""

    def __init__(self, stamped: Any, bus: str, count: int) -> None:
        self.stamped, self.bus, self.count = stamped, bus, count

    def run(self, api: RunApi) -> None:
        source = api.get_source(self.bus)
        now = time.time_ns()
        source.add([self.stamped(f"o{i}", published=now) for i in range(self.count)])
        print(f"published {now}", flush=True)
        api.exec_loop(100_000_000, lambda: None)


def child(base: Path, port: int, session: str, count: int) -> None:
    classes = load_classes(base)
    publisher = Publisher(classes.stamped, f"{session}.b", count)
    kernel = Kernel(load_config_text(transport_yaml(port, "publisher")), [("pub", publisher, 2)])
    kernel.run(Duration.parse("120 s"))


def hold(port: int, bus: str, count: int, bound_s: float) -> tuple[float, int]:
    """A kernel here subscribes and runs until it holds ``count`` objects: (wall time at which
    it held them all, or 0.0, and how many it held)."""
    seen: dict[str, Any] = {"held": 0.0, "count": 0}

    def setup(api: RunApi) -> None:
        seen["sub"] = api.select(f"SELECT bench_remote.Stamped FROM {bus}")

    def work(api: RunApi) -> bool:
        seen["count"] = len(seen["sub"].objects)
        if seen["count"] >= count:
            seen["held"] = time.time()
            return True
        return False

    driven = Driven(10_000_000, work, setup)
    kernel = Kernel(load_config_text(transport_yaml(port, "subscriber")), [("sub", driven, 2)])
    kernel.run(Duration(int(bound_s * 1e9)))
    return seen["held"], seen["count"]


def spawn(base: Path, port: int, session: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", str(base), str(port), session, str(count)],
        stdout=subprocess.PIPE,
        text=True,
    )


def published_at(process: subprocess.Popen[str]) -> float:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("published "):
            return int(line.split()[1]) / 1e9
    raise SystemExit("bench: the publisher ended before publishing")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=50_000)
    parser.add_argument("--child", nargs=4)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), int(args.child[1]), args.child[2], int(args.child[3]))
        return
    count = args.objects
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        generate(base)
        load_classes(base)
        # 1. The subscriber first (it holds the rendezvous), then the publisher.
        port, session = free_port(), session_name("scale")
        process = spawn(base, port, session, count)
        try:
            import threading

            result: dict[str, float] = {}
            thread = threading.Thread(
                target=lambda: result.setdefault("published", published_at(process))
            )
            thread.start()
            held, seen = hold(port, f"{session}.b", count, 60.0)
            thread.join(60)
        finally:
            process.terminate()
            process.wait(15)
        publish = held - result.get("published", held) if held else float("nan")
        print(
            f"publish {count} objects across processes: {publish:.2f} s (held {seen})"
            f"  goal <= 2 s for 50,000"
        )
        # 2. The publisher first; a late joiner.
        port, session = free_port(), session_name("late")
        process = spawn(base, port, session, count)
        try:
            published_at(process)
            time.sleep(1.0)  # the publisher settled: the joiner is late
            start = time.time()
            held, seen = hold(port, f"{session}.b", count, 60.0)
        finally:
            process.terminate()
            process.wait(15)
        late = held - start if held else float("nan")
        print(
            f"a late joiner discovers {count} objects: {late:.2f} s (held {seen})"
            f"  goal <= 3 s for 50,000"
        )


if __name__ == "__main__":
    main()
