"""Memory under churn (issue 21): ``python bench/churn.py [--seconds S]`` prints the resident
set size of two processes over S seconds (600 by default) of honest churn, and its growth after
a warm-up.

A child process publishes objects on a bus and, at every cycle (20 Hz), withdraws the oldest
ones and publishes new ones under new names; this process subscribes to that bus with a new
query (a new interest) at every cycle and closes the one before. With the transport's v2 keys
nothing of this declares anything in Zenoh (a constant number of declarations per process), so
the figure to read is the growth: goal within 5 MB over 10 minutes, for both processes. The
benchmark reports; it never asserts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
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
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

PERIOD = 50_000_000  # ns: 20 Hz on both sides
LIVE = 50  # objects published at any time
TURNOVER = 5  # objects withdrawn and published anew per cycle
SAMPLE_S = 10.0
WARM_S = 60.0


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def child(base: Path, port: int, session: str, seconds: float) -> None:
    stamped = load_classes(base).stamped
    live: deque[Any] = deque()
    names = iter(range(1 << 62))

    def work(api: RunApi) -> bool:
        source = api.get_source(f"{session}.b")
        if len(live) >= LIVE:
            gone = [live.popleft() for _ in range(TURNOVER)]
            source.remove(gone)
        fresh = [stamped(f"o{next(names)}", published=time.time_ns()) for _ in range(TURNOVER)]
        source.add(fresh)
        live.extend(fresh)
        return False

    kernel = Kernel(
        load_config_text(transport_yaml(port, "churner")), [("churn", Driven(PERIOD, work), 2)]
    )
    kernel.run(Duration(int((seconds + 30) * 1e9)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--child", nargs=4)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), int(args.child[1]), args.child[2], float(args.child[3]))
        return
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        generate(base)
        load_classes(base)
        port, session = free_port(), session_name("churn")
        # This process first: it holds the rendezvous.
        samples: list[tuple[float, float, float]] = []
        opened = [0]
        state: dict[str, Any] = {}
        start = time.monotonic()

        def setup(api: RunApi) -> None:
            state["process"] = subprocess.Popen(
                [sys.executable, __file__, "--child", str(base), str(port), session,
                 str(args.seconds)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip

        def work(api: RunApi) -> bool:
            previous = state.get("sub")
            state["sub"] = api.select(
                f"SELECT bench_remote.Stamped FROM {session}.b WHERE published > {opened[0]}"
            )
            opened[0] += 1
            if previous is not None:
                previous.close()
            return bool(time.monotonic() - start > args.seconds)

        def sample() -> None:
            while time.monotonic() - start < args.seconds:
                time.sleep(SAMPLE_S)
                process = state.get("process")
                if process is None or process.poll() is not None:
                    continue
                elapsed = time.monotonic() - start
                samples.append((elapsed, rss_mb(os.getpid()), rss_mb(process.pid)))
                print(f"{elapsed:6.0f} s  subscriber {samples[-1][1]:7.1f} MB"
                      f"  publisher {samples[-1][2]:7.1f} MB"
                      f"  subscriptions opened {opened[0]}", flush=True)  # fmt: skip

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        kernel = Kernel(
            load_config_text(transport_yaml(port, "subscriber")),
            [("churn", Driven(PERIOD, work, setup), 2)],
        )
        kernel.run(Duration(int((args.seconds + 30) * 1e9)))
        state["process"].terminate()
        state["process"].wait(15)
        warm = [s for s in samples if s[0] >= min(WARM_S, args.seconds / 3)]
        if len(warm) >= 2:
            first, last = warm[0], warm[-1]
            print(
                f"growth after warm-up ({first[0]:.0f} s to {last[0]:.0f} s):"
                f" subscriber {last[1] - first[1]:+.1f} MB,"
                f" publisher {last[2] - first[2]:+.1f} MB  goal within 5 MB over 600 s"
            )


if __name__ == "__main__":
    main()
