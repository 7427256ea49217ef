"""The web component under load: ``python bench/web.py`` prints its figures (docs/guide/web.md).

1,000 ``bench_types.Probe`` objects change 5 properties (``f0``..``f4``, ``f4`` the wall-clock
time of the change in seconds) at 30 Hz on ``local.wbench``, in one component, with a web
component loaded. Two windows of the same length, in one run:

1. without the page: no client connected;
2. with the page open in headless Chromium (Debian's ``chromium`` through Playwright), plotting
   10 series (``f0`` of 10 objects) and showing the class table (its first 50 objects).

Figures: the page's lag (when a change of ``f4`` reaches the page, the wall time minus ``f4``:
p50, p99, max; goal ≤ 200 ms), the web component's CPU (its cycle thread plus the server's
thread, over wall time; goal < 25 % of a core), the producer's lost cycles (``missedFrameCount
+ oversleptCount``) in each window (goal: no more with the page than without), and the p50
latency of a REST read of one property over loopback (goal ≤ 2 ms); and, to explain the lag,
the browser's CPU and the garbage collector's pauses in the kernel's process (every thread
stops for them). The benchmark reports; it never asserts a timing. ``--quick`` shortens the
windows (4 s instead of 10 s).

The system runs as ``sengen run`` runs it (``Kernel.run``, which freezes the started heap out of
the garbage collector's full collections), and the browser is driven from a process of its own
(``--page``), as a browser is: Playwright's client in the kernel's process would add its heap to
every full collection and its thread to the contention for the interpreter.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import fixture
import httpx

from sengen.runtime import Component, RunApi
from sengen.runtime.components.web import Web
from sengen.runtime.components.web.config import WebConfig
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "sengen_bench_web_gen"
BUS = "local.wbench"
OBJECTS = 1000
PERIOD = 33_333_333  # 30 Hz
SERIES = 10
LAG_GOAL_MS = 200.0
CPU_GOAL = 0.25
READ_GOAL_MS = 2.0


class Producer(Component):
    """Publishes the objects; their ``update`` changes them every cycle."""

    def __init__(self, objects: list[Any]) -> None:
        self.objects = objects
        self.api: RunApi | None = None

    def is_real_time_only(self) -> bool:
        return True

    def run(self, api: RunApi) -> None:
        self.api = api
        source = api.get_source(BUS)
        for obj in self.objects:
            source.add(obj)
        api.exec_loop(PERIOD)

    def lost(self) -> int:
        assert self.api is not None
        info = self.api.fetch_component_monitoring_info()
        return (info.missed_frame_count or 0) + (info.overslept_count or 0)


def stamped_class(module: Any) -> Any:
    def update(self: Any, api: Any) -> None:
        v = self.f0 + 1.0
        self.set_next_f0(v)
        self.set_next_f1(v * 0.5)
        self.set_next_f2(-v)
        self.set_next_f3(v % 7)
        self.set_next_f4(time.time())

    return type("Stamped", (module.ProbeBase,), {"__slots__": (), "update": update})


def thread_cpu(names: tuple[str, ...]) -> float:
    """CPU seconds of the live threads whose names start with one of ``names``."""
    total = 0.0
    for thread in threading.enumerate():
        if thread.name.startswith(names) and thread.ident is not None:
            clock = time.pthread_getcpuclockid(thread.ident)
            total += time.clock_gettime(clock)
    return total


class Collections:
    """The garbage collector's pauses in this process (every thread stops for them)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []  # (generation, ms)
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.pauses.append((info["generation"], 1000 * (time.perf_counter() - self._began)))

    def figures(self) -> str:
        full = [ms for generation, ms in self.pauses if generation == 2]
        longest = max((ms for _, ms in self.pauses), default=0.0)
        return f"{len(self.pauses)} collections, {len(full)} full, longest {longest:.1f} ms"


def rest_reads(url: str, count: int) -> list[float]:
    path = f"/api/objects/{BUS}.o0/properties/f4"
    with httpx.Client(base_url=url, trust_env=False) as client:
        client.get(path)
        found = []
        for _ in range(count):
            start = time.perf_counter()
            client.get(path).raise_for_status()
            found.append((time.perf_counter() - start) * 1000)
    return found


INSTRUMENT = """() => {
  window.lags = [];
  const shown = window.changed;
  window.changed = (change) => {
    shown(change);
    const stamp = change.values.f4;
    if (typeof stamp === "number") { window.lags.push(Date.now() / 1000 - stamp); }
  };
}"""


def page(url: str, window: float, chromium: str) -> None:
    """``--page``: the browser's side, in a process of its own. Prints ``ready`` once the page
    plots and shows its table, then, after ``window`` seconds, one JSON line of what it saw."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        shown = browser.new_page(viewport={"width": 1500, "height": 900})
        shown.goto(url + "/")
        shown.wait_for_function(f"window.sengen.objects.size >= {OBJECTS}", timeout=30_000)
        shown.evaluate(INSTRUMENT)
        shown.evaluate(f"select({{kind: 'class', bus: '{BUS}', cls: 'bench_types.Probe'}})")
        for i in range(SERIES):
            shown.evaluate(f"addSeries('{BUS}.o{i * 97}', 'f0', '')")
        shown.wait_for_timeout(1000)
        shown.evaluate("window.lags = []")
        devtools = shown.context.new_cdp_session(shown)
        devtools.send("Performance.enable")
        busy0, cpu0 = _busy(devtools), descendants_cpu()
        print("ready", flush=True)
        shown.wait_for_timeout(window * 1000)
        busy, cpu = _busy(devtools) - busy0, descendants_cpu() - cpu0
        seen = {
            "busy": busy / window,
            "cpu": cpu / window,
            "lags": shown.evaluate("window.lags"),
            "points": shown.evaluate(
                "[...window.sengen.series.values()].map((s) => s.points.length)"
            ),
            "rows": shown.evaluate(
                "document.querySelectorAll('#class-table tr[data-path]').length"
            ),
        }
        print(json.dumps(seen), flush=True)
        browser.close()


def descendants_cpu() -> float:
    """CPU seconds of this process's descendants now alive (the browser's processes)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        times[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mine = {os.getpid()}
    for _ in range(8):  # the browser's process tree is a few levels deep
        mine |= {pid for pid, parent in parents.items() if parent in mine}
    return sum(times[pid] for pid in mine - {os.getpid()})


def _busy(devtools: Any) -> float:
    """Seconds the page's main thread has spent on tasks (scripts, layout, painting)."""
    metrics = devtools.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="4 s windows")
    parser.add_argument("--page", metavar="URL", help=argparse.SUPPRESS)  # the browser's side
    parser.add_argument("--window", type=float, default=10.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("bench: the page needs chromium (apt-get install chromium)")
    if args.page is not None:
        page(args.page, args.window, chromium)
        return
    window = 4.0 if args.quick else 10.0

    logging.basicConfig(level=logging.ERROR)
    print(f"sengen web benchmark ({'quick' if args.quick else 'full'}), Python {sys.version}")
    with tempfile.TemporaryDirectory(prefix="sengen-bench-web-") as tmp:
        module = fixture.generate_fixture(Path(tmp), ROOT)
        cls = stamped_class(module)
        producer = Producer([cls(f"o{i}") for i in range(OBJECTS)])
        web = Web(WebConfig.model_validate({"port": 0, "open": [BUS], "rateLimit": 10_000.0}))
        kernel = Kernel(
            load_config_text("kernel: {logConfig: {level: error}}\n"),
            [("producer", producer, 1), ("web", web, 2)],
        )
        system = threading.Thread(target=kernel.run, name="bench-kernel")
        system.start()
        try:
            while web.server is None:
                time.sleep(0.01)
            assert web.server.ready.wait(10), "bench: the web server did not start"
            url = web.url.rstrip("/")
            time.sleep(2.0)  # every object published and followed

            # 1. without the page
            lost0, cpu0, wall0 = producer.lost(), thread_cpu(("web",)), time.monotonic()
            time.sleep(window)
            lost_without = producer.lost() - lost0
            idle_cpu = (thread_cpu(("web",)) - cpu0) / (time.monotonic() - wall0)

            # 2. with the page
            collections = Collections()
            browser = subprocess.Popen(
                [sys.executable, __file__, "--page", url, "--window", str(window)],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert browser.stdout is not None
            try:
                ready = browser.stdout.readline()
                assert ready.strip() == "ready", f"bench: the page did not start ({ready!r})"
                lost0, cpu0, wall0 = producer.lost(), thread_cpu(("web",)), time.monotonic()
                gc.callbacks.append(collections)
                seen = json.loads(browser.stdout.readline())
                lost_with = producer.lost() - lost0
                page_cpu = (thread_cpu(("web",)) - cpu0) / (time.monotonic() - wall0)
                gc.callbacks.remove(collections)
                browser.wait(timeout=30)
            finally:
                if browser.poll() is None:
                    browser.kill()
                    browser.wait()
            lags = sorted(1000 * x for x in seen["lags"])
            points, rows = seen["points"], seen["rows"]
            reads = sorted(rest_reads(url, 1000))
        finally:
            kernel.request_stop(0)
            system.join()

    def q(values: list[float], share: float) -> float:
        return values[min(len(values) - 1, int(share * len(values)))] if values else float("nan")

    print(f"\n{OBJECTS} objects x 5 properties at 30 Hz, {window:g} s windows")
    print(f"  page: {SERIES} series ({min(points)}..{max(points)} points), table of {rows} rows")
    print(
        f"  page lag (ms): p50 {q(lags, 0.5):.1f}  p99 {q(lags, 0.99):.1f}  max"
        f" {max(lags) if lags else float('nan'):.1f}  ({len(lags)} changes)"
        f"   goal <= {LAG_GOAL_MS:g}"
    )
    print(
        f"  browser: {100 * seen['cpu']:.1f} % of a core, the page's main thread busy"
        f" {100 * seen['busy']:.1f} % of the time"
    )
    print(f"  kernel process, with the page: {collections.figures()}")
    print(
        f"  web component CPU: {100 * page_cpu:.1f} % of a core with the page,"
        f" {100 * idle_cpu:.1f} % without   goal < {100 * CPU_GOAL:g} %"
    )
    print(
        f"  producer cycles lost: {lost_with} with the page, {lost_without} without"
        "   goal: no more with the page"
    )
    print(
        f"  REST read of one property (ms): p50 {statistics.median(reads):.2f}"
        f"  p99 {q(reads, 0.99):.2f}   goal p50 <= {READ_GOAL_MS:g}"
    )


if __name__ == "__main__":
    main()
