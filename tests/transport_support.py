"""Shared by the transport tests: an STL package, producer processes run with ``sengen run``, and
an in-process consumer kernel whose probe runs the test's steps inside its cycle.

Every process gets a free loopback port and a session name of its own test, so that concurrent
tests never see each other; every process is stopped by the fixture or test that started it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

from kernel_support import Probe, Step, make_package

from sengen.runtime import Duration
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

STL = """\
package xbus;

optional<string> MaybeText;

class Sensor
{
  var serial   : u32 [static];
  var reading  : f64;
  var count    : i64 [confirmed];
  var mirror   : i64;
  var label    : MaybeText [confirmed];
  var setpoint : f64 [writable];

  event ticked(count: i64) [confirmed];
  event noted(count: i64);

  fn add(x: i32, y: i32) -> i64;
  fn peek() -> i64 [const];
  fn fail(message: string) -> string;
  fn twice(x: i32) -> i32 [local];
}

// Watches every sensor of its bus, in this process and others: its state is made of what it
// read, heard and was answered, so a recording of it shows what crossed the processes when.
class Watcher
{
  var total   : i64 [confirmed];
  var heard   : i64 [confirmed];
  var answers : i64 [confirmed];
  var delay   : i64 [confirmed];
  var bumped  : i64 [confirmed];

  // From another watcher at the time it sent the call: when both have the same period, delay
  // is set to how long the call took to run, and bumped counts it.
  fn bump(sent: i64, period: i64) -> i64;
}
"""

IMPLEMENTATIONS = """\
import random
import time
from typing import Any

from sengen.runtime.kernel.component import Component

from {root}.xbus import SensorBase, WatcherBase


class Counting(SensorBase):
    '''Counts its cycles: ``count`` and ``mirror`` always change in the same commit.'''

    def update(self, api: Any) -> None:
        count = self.count + 1
        self.set_next_count(count)
        self.set_next_mirror(count)
        self.set_next_reading(count / 2)
        self.set_next_label(None if count % 2 else f"c{count}")
        self.events.ticked.emit(count)
        self.events.noted.emit(count)

    def add_impl(self, x: int, y: int) -> int:
        return x + y

    def peek_impl(self) -> int:
        return self.count

    def fail_impl(self, message: str) -> str:
        raise ValueError(message)

    def twice_impl(self, x: int) -> int:
        return 2 * x


class Still(Counting):
    '''Changes nothing by itself: its setpoint moves only when someone sets it.'''

    def update(self, api: Any) -> None:
        pass


class Watching(WatcherBase):
    '''Reads the sensors' counts, sums their ``ticked`` events, calls ``add`` on each and sets
    their setpoint; from its tenth cycle on it also watches the other watchers (a subscription
    opened mid-run) and bumps them with its cycle time.'''

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.api: Any = None
        self.sensors: Any = None
        self.watchers: Any = None
        self.cycles = 0
        self.last = -1
        self.period = 0
        self.heard_sum = 0
        self.answer_sum = 0
        self.connected: set[str] = set()

    def update(self, api: Any) -> None:
        self.api = api
        now = api.get_time().ns
        self.period, self.last = now - self.last, now
        self.cycles += 1
        if self.sensors is None:
            self.sensors = api.select(f"SELECT xbus.Sensor FROM {self.bus}")
            return
        if self.cycles == 10:
            self.watchers = api.select(f"SELECT xbus.Watcher FROM {self.bus}")
        total = 0
        for sensor in sorted(self.sensors.objects, key=lambda s: s.name):
            if sensor.name not in self.connected:
                self.connected.add(sensor.name)
                sensor.events.ticked.connect(self._heard)
            total += sensor.count
            sensor.add(sensor.count, 1).add_done_callback(self._answered)
            sensor.set_next_setpoint(float(total % 1000))
        for watcher in sorted(self.watchers or (), key=lambda w: w.name):
            if watcher.name != self.name:
                watcher.bump(now, self.period)
        self.set_next_total(total)
        self.set_next_heard(self.heard_sum)
        self.set_next_answers(self.answer_sum)

    def _heard(self, count: int) -> None:
        self.heard_sum += count

    def _answered(self, call: Any) -> None:
        if call.exception() is None:
            self.answer_sum += call.result()

    def bump_impl(self, sent: int, period: int) -> int:
        delay = self.api.get_time().ns - sent
        if period == self.period:
            self.set_next_delay(delay)
            self.set_next_bumped(self.get_next_bumped() + 1)
        return delay


class Delayer(Component):
    '''Perturbs a run: every frame this process's transport receives waits up to 0.3 ms.'''

    def preload(self, api: Any) -> None:
        from sengen.runtime.components.transport.transport import Transport

        delay_frames(Transport)

    def is_real_time_only(self) -> bool:
        return True

    def run(self, api: Any) -> None:
        api.wait_for_stop()


def delay_frames(transport: Any) -> None:
    original = transport.handle_frame
    rng = random.Random()

    def delayed(self: Any, sender: str, data: bytes) -> None:
        if rng.random() < 0.3:
            time.sleep(rng.uniform(0, 0.0003))
        original(self, sender, data)

    transport.handle_frame = delayed


class Burst(Counting):
    '''Emits ``ticked`` 500 times a cycle with consecutive numbers, 10,000 in all.'''

    def update(self, api: Any) -> None:
        start = self.count
        end = min(start + 500, 10_000)
        for number in range(start + 1, end + 1):
            self.events.ticked.emit(number)
        self.set_next_count(end)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """A producer's transport is up once its rendezvous accepts connections."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout} s")


def session_name(test_name: str) -> str:
    """A session of the test's own: distinct tests never share a key."""
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in test_name)[-40:]
    return f"t{os.getpid()}_{cleaned}"


def make_project(folder: Path, root: str) -> Iterator[ModuleType]:
    yield from make_package(folder, root, "xbus", STL, IMPLEMENTATIONS)


def transport_entry(port: int, **extra: object) -> str:
    lines = [f"  - name: transport\n    rendezvous: tcp/127.0.0.1:{port}\n"]
    lines += [f"    {key}: {value}\n" for key, value in extra.items()]
    return "".join(lines)


def producer_config(
    root: str, port: int, session: str, objects: str, freq_hz: float = 50, **extra: object
) -> str:
    """A process with the transport and one ``build:`` component of ``objects`` on
    ``<session>.b``; ``objects`` lines are flow maps without the bus."""
    body = "".join(
        f"      - {{{line.strip()}, bus: {session}.b}}\n"
        for line in textwrap.dedent(objects).splitlines()
        if line.strip()
    )
    return (
        "kernel: {appName: producer}\n"
        "load:\n" + transport_entry(port, **extra) + "build:\n"
        "  - name: producer\n"
        f"    freqHz: {freq_hz}\n"
        f"    imports: [{root}.xbus, {root}_impls]\n"
        "    objects:\n" + body
    )


class Process:
    """A ``sengen run`` child process; always stopped by :meth:`stop`."""

    def __init__(self, folder: Path, name: str, config: str, until: str | None = "60s") -> None:
        """``until`` None: until stopped (under virtual time, ``--until`` steps the kernel)."""
        path = folder / f"{name}.yaml"
        path.write_text(config)
        limit = ["--until", until] if until is not None else []
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "sengen", "run", str(path), *limit],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def signal(self, number: signal.Signals) -> None:
        self.popen.send_signal(number)

    def stop(self, timeout: float = 10.0) -> str:
        """Stop (SIGTERM, then SIGKILL after ``timeout``); the process's output."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGCONT)
            self.popen.terminate()
        try:
            output, _ = self.popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            output, _ = self.popen.communicate(timeout=timeout)
        return output or ""


def consume(
    port: int,
    steps: list[Step],
    setup: Callable[..., None] | None = None,
    until: str = "20 s",
    freq_hz: float = 100,
    **extra: object,
) -> tuple[int, Probe]:
    """Run an in-process kernel with the transport and a probe until the steps are done (or
    ``until``); the probe is in group 2, so the transport is up before it subscribes."""
    probe = Probe(steps, setup=setup, freq_hz=freq_hz)
    text = "kernel: {appName: consumer}\nload:\n" + transport_entry(port, **extra)
    kernel = Kernel(load_config_text(text), [("probe", probe, 2)])
    return kernel.run(Duration.parse(until)), probe
