"""Recorder and archive benchmarks: ``python bench/recorder.py`` prints a table of figures.

Three parts (runtime.md §9.2), each against a floor measured in the same run (the benchmark
reports; it never asserts a timing):

1. load: 10 components x 100 ``bench_types.Probe`` objects x 50 changes per second (50,000
   property changes/s) under real time, recorded by one recording of the shipped recorder; the
   recorder thread's CPU over the window as a share of one core (goal < 50%), the records written
   and whether any was lost (every object's recorded values must be consecutive and end at its
   final value);
2. cost per record: the recorder thread's CPU and the archive's bytes per record, against a floor
   of msgspec JSON encoding of the same changes plus zstd compression of the lot;
3. a 100 MB archive (1,000 objects, 10 random properties per change, zstd) written by the archive
   writer: ``sengen record info`` in a fresh process (goal <= 0.5 s, index only) against the
   floor of that process starting and importing the command line (``record info --help``), and
   in-process ``ArchiveReader.info()``; ``state_at`` at random times (goal <= 50 ms each, p50
   and max).

``--quick`` runs 2 s of load and a 20 MB archive.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import fixture
import msgspec
import zstandard

from sengen.runtime import Duration
from sengen.runtime.archive import ArchiveReader, ArchiveWriter
from sengen.runtime.components.recorder.recorder import Recorder, RecorderConfig
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

GENERATED_ROOT = "sengen_bench_recorder_gen"
COMPONENTS = 10
OBJECTS = 100
HZ = 50
RECORDER_CPU_GOAL = 0.5  # of one core
INFO_GOAL_S = 0.5
SEEK_GOAL_S = 0.05
WARMUP_S = 1.0


class Producer(Component):
    """Publishes ``objects`` on local.bench and changes i0 of each of them every cycle."""

    def __init__(self, objects: list[Any], stop_at: float) -> None:
        self.objects = objects
        self.stop_at = stop_at

    def run(self, api: RunApi) -> None:
        source = api.get_source("local.bench")
        for obj in self.objects:
            source.add(obj)
        api.exec_loop(Duration.from_hz(HZ), lambda: self._cycle(api))

    def _cycle(self, api: RunApi) -> None:
        for obj in self.objects:
            obj.set_next_i0(obj.i0 + 1)
        if time.perf_counter() >= self.stop_at:
            api.request_kernel_stop(0)


class MeasuredRecorder(Recorder):
    """The shipped recorder, noting its thread's CPU time at the two ends of the window."""

    def __init__(self, config: RecorderConfig, start_at: float, end_at: float) -> None:
        super().__init__(config)
        self.window = (start_at, end_at)
        self.marks: dict[str, tuple[float, int, int]] = {}

    def _cycle(self) -> None:
        super()._cycle()
        now = time.perf_counter()
        for name, at in zip(("start", "end"), self.window, strict=True):
            if name not in self.marks and now >= at:
                self.marks[name] = (now, time.thread_time_ns(), time.time_ns())


def load(base: Path, module: Any, seconds: float) -> dict[str, Any]:
    probe = type("Counting", (module.ProbeBase,), {"__slots__": (), "update": lambda s, a: None})
    begin = time.perf_counter()
    start_at, end_at = begin + WARMUP_S, begin + WARMUP_S + seconds
    producers = [
        Producer([probe(f"p{c}_{k}") for k in range(OBJECTS)], end_at + 0.2)
        for c in range(COMPONENTS)
    ]
    path = base / "load.mcap"
    config = RecorderConfig.model_validate(
        {
            "recordings": [
                {"name": "r", "file": str(path), "selections": ["SELECT * FROM local.bench"]}
            ]
        }
    )
    recorder = MeasuredRecorder(config, start_at, end_at)
    components: list[tuple[str, Component, int]] = [("recorder", recorder, 1)]
    components += [(f"producer{c}", p, 2) for c, p in enumerate(producers)]
    kernel = Kernel(load_config_text(""), components)
    code = kernel.run(Duration(int((WARMUP_S + seconds + 60) * 1e9)))
    if code != 0:
        raise SystemExit(f"bench: the kernel exited with code {code}")
    (t0, c0, w0), (t1, c1, w1) = recorder.marks["start"], recorder.marks["end"]
    finals = {obj.name: obj.i0 for p in producers for obj in p.objects}
    return {
        "path": path,
        "cpu": (c1 - c0) / 1e9 / (t1 - t0),
        "cpu_ns": c1 - c0,
        "window": (w0, w1),
        "finals": finals,
    }


def check(
    path: Path, finals: dict[str, int], window: tuple[int, int]
) -> tuple[int, int, int, list[Any]]:
    """Records, lost changes (gaps, or a last value short of the final one), records in the
    measured window, and every change as (time, address, values)."""
    last: dict[str, int] = {}
    lost = in_window = count = 0
    changes: list[Any] = []
    with ArchiveReader(path) as reader:
        for record in reader.records():
            count += 1
            in_window += window[0] <= record.time_ns < window[1]
            name = record.address.rsplit("/", 1)[1]
            value = record.values.get("i0")
            if value is None:
                continue
            if record.kind == "state":
                lost += value - last[name] - 1
                changes.append((record.time_ns, record.address, dict(record.values)))
            last[name] = value
    lost += sum(finals[name] - last.get(name, 0) for name in finals)
    return count, lost, in_window, changes


def floor(changes: list[Any]) -> tuple[float, float]:
    """ns and bytes per change: msgspec JSON of each change (time, object, values), zstd over
    the lot: what any record must hold, in the cheapest form of the same tools."""
    encode = msgspec.json.Encoder().encode
    begin = time.thread_time_ns()
    blobs = [encode(change) for change in changes]
    packed = zstandard.compress(b"".join(blobs))
    spent = time.thread_time_ns() - begin
    return spent / len(changes), len(packed) / len(changes)


def big_archive(path: Path, meta: Any, megabytes: int) -> int:
    """An archive of ``megabytes`` MB: 1,000 objects, every change 10 random values."""
    rnd = random.Random(1)
    writer = ArchiveWriter(path, name="big", selections=["SELECT * FROM local.bench"])
    addresses = [f"local/bench/o{k}" for k in range(1000)]
    names = [p.stl_name for p in meta.all_properties]
    for address in addresses:
        writer.added(0, address, meta, dict.fromkeys(names, 0))
    time_ns, records = 0, 0
    while writer.bytes_written < megabytes * 1_000_000:
        time_ns += 100_000  # 10,000 changes a second
        values = {n: rnd.randint(-(10**6), 10**6) if n[0] == "i" else rnd.random() for n in names}
        writer.changed(time_ns, addresses[records % 1000], values)
        records += 1
    writer.close()
    return records


def row(label: str, value: str, floor_value: str, times: str, goal: str) -> None:
    print(f"  {label:<44} {value:>12} {floor_value:>12} {times:>9}   {goal}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s of load, a 20 MB archive")
    args = parser.parse_args(argv)
    seconds = 2.0 if args.quick else 5.0
    megabytes = 20 if args.quick else 100
    logging.basicConfig(level=logging.WARNING)
    print(f"sengen recorder benchmarks ({'quick' if args.quick else 'full'}), Python {sys.version}")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        module = fixture.generate_fixture(base, GENERATED_ROOT)
        result = load(base, module, seconds)
        count, lost, in_window, changes = check(result["path"], result["finals"], result["window"])
        size = result["path"].stat().st_size
        ns_floor, bytes_floor = floor(changes)
        per_second = COMPONENTS * OBJECTS * HZ
        print(f"\n1. load: {per_second} changes/s for {seconds:.0f} s (+{WARMUP_S:.0f} s warm-up)")
        row("", "sengen", "floor", "ratio", "goal")
        cpu = result["cpu"]
        row("recorder thread CPU (share of a core)", f"{cpu:.2f}", "", "", f"< {RECORDER_CPU_GOAL}")
        row("records written / lost", f"{count}", f"{lost}", "", "0 lost")
        row("records per second in the window", f"{in_window / seconds:.0f}", "", "", "")
        print("\n2. cost per record")
        row("", "sengen", "floor", "ratio", "")
        cpu_per_record = result["cpu_ns"] / in_window
        row(
            "CPU per record (ns)",
            f"{cpu_per_record:.0f}",
            f"{ns_floor:.0f}",
            f"{cpu_per_record / ns_floor:.1f}x",
            "",
        )
        row(
            "records per second of one core",
            f"{1e9 / cpu_per_record:.0f}",
            f"{1e9 / ns_floor:.0f}",
            "",
            "",
        )
        row(
            "bytes per record",
            f"{size / count:.1f}",
            f"{bytes_floor:.1f}",
            f"{size / count / bytes_floor:.1f}x",
            "",
        )
        # What parts 1 and 2 hold (a million objects) would make part 3 time the garbage
        # collector's full passes over them, not the reader.
        del changes, result
        gc.collect()
        path = base / "big.mcap"
        begin = time.perf_counter()
        records = big_archive(path, module.Probe.META, megabytes)
        wrote = time.perf_counter() - begin
        print(
            f"\n3. a {path.stat().st_size / 1e6:.0f} MB archive ({records} records, written"
            f" in {wrote:.1f} s)"
        )
        row("", "sengen", "", "", "goal")
        begin = time.perf_counter()
        ran = subprocess.run(
            [sys.executable, "-m", "sengen", "record", "info", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        info_s = time.perf_counter() - begin
        assert ran.returncode == 0, ran.stderr
        # The floor: the same process start and command-line imports, reading nothing.
        begin = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "sengen", "record", "info", "--help"],
            capture_output=True,
            check=False,
        )
        start_s = time.perf_counter() - begin
        row(
            "sengen record info (fresh process, s)",
            f"{info_s:.3f}",
            f"{start_s:.3f}",
            f"{info_s / start_s:.2f}x",
            f"<= {INFO_GOAL_S}",
        )
        begin = time.perf_counter()
        with ArchiveReader(path) as reader:
            info = reader.info()
            opened = time.perf_counter() - begin
            row("ArchiveReader(path).info() (s)", f"{opened:.4f}", "", "", "")
            rnd = random.Random(2)
            seeks, cpu_seeks = [], []
            for _ in range(20):
                at = rnd.randint(info.start_ns, info.end_ns)
                begin, cpu_begin = time.perf_counter(), time.thread_time()
                state = reader.state_at(at)
                seeks.append(time.perf_counter() - begin)
                cpu_seeks.append(time.thread_time() - cpu_begin)
                if os.environ.get("BENCH_SEEKS"):
                    print(f"    seek {at} ns: {cpu_seeks[-1] * 1e3:.1f} ms", gc.get_stats()[2])
                assert len(state) == 1000
        # Wall time, and the thread's CPU time: on a loaded machine the two differ.
        for label, values in (("wall", seeks), ("thread CPU", cpu_seeks)):
            for name, value in (("p50", statistics.median(values)), ("max", max(values))):
                row(
                    f"state_at(t), {label}, {name} (s)", f"{value:.4f}", "", "", f"<= {SEEK_GOAL_S}"
                )


if __name__ == "__main__":
    main()
