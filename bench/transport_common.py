"""What the parts of the transport benchmarks share (bench/transport.py runs them).

The STL and its generated classes, the configuration both processes use, the handle of a
child process (``Child``), the components and measured windows of this process, and the
child's side of the conversation (``Control``, ``say``, ``run_child_kernel``).
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zenoh

import sengen
from sengen.runtime import Duration, set_checks
from sengen.runtime.components.transport.link import TransportConfig, open_session
from sengen.runtime.components.transport.transport import Transport
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.objects.context import Context

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

# The script every child runs: it dispatches ``--child ROLE`` (and puts bench/ on sys.path).
ENTRY = Path(__file__).resolve().with_name("transport.py")
KHZ = 1_000_000  # ns: the 1 kHz period
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

    def carrier_start(self: Any, size: int) -> None:
        data = payload(size)
        self.sent = itertools.count(1)
        self.filler = data[8:]
        self.set_next_data(data)

    def carrier_update(self: Any, api: Any) -> None:
        # The count and the filler are kept, not parsed back out of ``data`` at every update,
        # and the count is an iterator, not an attribute assigned at every update (that pays
        # the property-assignment guard, about 0.2 µs): the floor builds no value at all, so a
        # new value costs only what it must.
        self.set_next_data(next(self.sent).to_bytes(8, "little") + self.filler)

    def echo_impl(self: Any, x: int) -> int:
        return x

    def idle(self: Any, api: Any) -> None:
        pass

    return Classes(
        type(
            "ChangingCarrier",
            (module.CarrierBase,),
            {"start": carrier_start, "update": carrier_update},
        ),
        type("Echoing", (module.EchoBase,), {"echo_impl": echo_impl, "update": idle}),
        type("StampedObject", (module.StampedBase,), {"update": idle}),
    )


def payload(size: int) -> bytes:
    """A ``data`` value of ``size`` bytes: the sequence number (8 bytes), then filler."""
    return bytes(8) + b"x" * (size - 8)


def sequence_of(data: bytes) -> int:
    return int.from_bytes(data[:8], "little") if data else 0


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


# Set by bench/secure.py to a certificates folder (its children inherit it): every sengen
# process of a part then runs in secure mode, its identity the app name.
SECURE_ENV = "SENGEN_BENCH_CERTIFICATES"


def endpoint(port: int) -> str:
    return f"{'tls' if os.environ.get(SECURE_ENV) else 'tcp'}/127.0.0.1:{port}"


def transport_yaml(port: int | None, app: str) -> str:
    text = f"kernel: {{appName: {app}}}\n"
    if port is not None:
        text += f"load:\n  - name: transport\n    rendezvous: {endpoint(port)}\n"
        certificates = os.environ.get(SECURE_ENV)
        if certificates:
            text += (
                f"    security: {{identity: {app}, certificates: '{certificates}',"
                f" permissions: '{certificates}/permissions.yaml'}}\n"
            )
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
        command = [sys.executable, str(ENTRY), "--child", role]
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


def checked(enabled: bool) -> None:
    """Value checks of this process (``set_checks``): a measured run has them as the child
    has them, every other run has them on."""
    set_checks(enabled)


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
# the child's side


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
