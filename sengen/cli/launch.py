"""``sengen launch FILE``: the processes a launch file names, started, watched and stopped together.

Each process is ``python -m sengen run CONFIG ARGS...`` in a process group of its own, so that a
Ctrl-C on the terminal reaches only the launcher, which stops the processes one by one in the
reverse of their start order. Their output (stdout and stderr together) is copied line by line
with the process name in front. A process is *ready* when its kernel has started: the child
touches the file named by ``SENGEN_LAUNCH_READY`` (see :func:`report_ready`).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final

from sengen.cli.launch_file import Launch, LaunchFileError, Process, load_launch

READY_ENV: Final = "SENGEN_LAUNCH_READY"
_POLL_S: Final = 0.02
_READER_JOIN_S: Final = 2.0  # a grandchild holding the pipe open must not hold the launcher
_COLOURS: Final = ("36", "33", "35", "32", "34", "31")
_PR_SET_PDEATHSIG: Final = 1


def launch(file: str) -> int:
    """The command: 1 for a bad launch file, else the launch's exit status."""
    try:
        plan = load_launch(Path(file))
    except LaunchFileError as error:
        sys.stderr.write("".join(f"{line}\n" for line in error.problems))
        return 1
    with tempfile.TemporaryDirectory(prefix="sengen-launch-") as scratch:
        return Launcher(plan, Path(scratch)).run()


def report_ready(path: str) -> None:
    """In a launched ``sengen run``: touch ``path`` when the kernel logs that it has started.

    The kernel's INFO line is the moment every component has started; listening for it keeps the
    kernel free of launcher code. The kernel logger is lowered to INFO if needed so that the
    record exists: the handlers still filter what is shown at the configured level."""
    logger = logging.getLogger("sengen.kernel")
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)

    class Ready(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno == logging.INFO and str(record.msg).startswith("started "):
                Path(path).touch()
                logger.removeHandler(self)

    logger.addHandler(Ready())


@dataclass
class _Child:
    """One process of the launch and its current run."""

    spec: Process
    colour: str
    popen: subprocess.Popen[bytes] | None = None
    reader: threading.Thread | None = None
    ready: bool = False
    done: bool = False  # ended for good: no restart to come
    status: int = 0
    restarts: int = 0
    delay_ns: int = 0
    started_at: float = 0.0
    restart_at: float | None = None
    ready_file: Path = field(default_factory=Path)


class Launcher:
    """Starts the processes of ``plan`` in order, copies their output, and stops them all."""

    def __init__(self, plan: Launch, scratch: Path, out: IO[str] | None = None) -> None:
        self.plan = plan
        self.scratch = scratch
        self.out = out if out is not None else sys.stdout
        colour = self.out.isatty() and "NO_COLOR" not in os.environ
        self.width = max(len(p.name) for p in plan.processes)
        self.children = [
            _Child(p, _COLOURS[i % len(_COLOURS)] if colour else "")
            for i, p in enumerate(plan.processes)
        ]
        self.by_name = {c.spec.name: c for c in self.children}
        self.started: list[_Child] = []  # in start order, for stopping in reverse
        self.lock = threading.Lock()
        self.signalled: list[int] = []
        self.t0 = time.monotonic()
        self.all_ready = False
        self.pdeathsig = _pdeathsig()

    # -- the main loop -----------------------------------------------------------------------------

    def run(self) -> int:
        with self._signals():
            try:
                code = self._loop()
            finally:
                self._stop_all()
        return code

    def _loop(self) -> int:
        deadline_ns = self.plan.ready_timeout.ns
        while not self.signalled:
            now = time.monotonic()
            for child in self.children:
                code = self._watch(child, now)
                if code is not None:
                    return code
            for child in self.children:
                if self._due(child, now):
                    self._start(child)
            if not self.all_ready and all(c.ready or c.done for c in self.children):
                self.all_ready = True
                self._say(f"all processes ready in {now - self.t0:.2f} s")
            waiting = [c for c in self.children if not c.ready and not c.done]
            late = [c for c in waiting if c.popen and (now - c.started_at) * 1e9 > deadline_ns]
            if late:
                self._say(f"{late[0].spec.name} not ready within {self.plan.ready_timeout}")
                return 1
            if all(c.done for c in self.children):
                failed = [c.status for c in self.children if c.status != 0]
                return failed[0] if failed else 0
            time.sleep(_POLL_S)
        return 128 + self.signalled[0]

    def _watch(self, child: _Child, now: float) -> int | None:
        """A running child's readiness and exit; the launch's exit status when it must end."""
        popen = child.popen
        if popen is None:
            return None
        if not child.ready and child.ready_file.exists():
            child.ready = True
            self._say(f"{child.spec.name} ready ({now - child.started_at:.2f} s)")
        status = popen.poll()
        if status is None:
            return None
        self._reap(child)
        status = 128 - status if status < 0 else status
        child.status = status
        self._say(f"{child.spec.name} exited with status {status}")
        respawn = child.spec.respawn
        if respawn is not None:
            if respawn.limit is None or child.restarts < respawn.limit:
                child.delay_ns = min(
                    max(child.delay_ns * 2, respawn.delay.ns), respawn.max_delay.ns
                )
                child.restarts += 1
                child.restart_at = now + child.delay_ns / 1e9
                child.ready = False
                limit = "" if respawn.limit is None else f" of {respawn.limit}"
                self._say(
                    f"{child.spec.name} restarts in {child.delay_ns / 1e9:g} s"
                    f" ({child.restarts}{limit})"
                )
                return None
            self._say(f"{child.spec.name}: no more restarts (limit {respawn.limit})")
        child.done = True
        if child.spec.required:
            self._say(f"{child.spec.name} is required: stopping the launch")
            return status
        blocked = [c.spec.name for c in self.children if self._blocked_by(c, child)]
        if blocked:
            self._say(f"{', '.join(blocked)} cannot start: {child.spec.name} ended before ready")
            return status or 1
        return None

    def _blocked_by(self, child: _Child, gone: _Child) -> bool:
        return (
            child.popen is None
            and not child.done
            and not gone.ready
            and gone.spec.name in child.spec.requires
        )

    def _due(self, child: _Child, now: float) -> bool:
        if child.popen is not None or child.done:
            return False
        if child.restart_at is not None:
            return now >= child.restart_at
        return all(self.by_name[n].ready for n in child.spec.requires)

    # -- one process -------------------------------------------------------------------------------

    def _start(self, child: _Child) -> None:
        spec = child.spec
        child.ready_file = self.scratch / f"{spec.name}.{child.restarts}.ready"
        env = {**os.environ, **spec.env, "PYTHONUNBUFFERED": "1", READY_ENV: str(child.ready_file)}
        config = self._stepped_config(spec, env) if spec.stepped else spec.config
        command = [sys.executable, "-m", "sengen", "run", str(config), *spec.args]
        driver = spec.master and self.plan.until is not None
        if driver:
            command[3:4] = ["shell", "--wait", str(self.plan.ready_timeout), "-c", self._script()]
        # A group of its own: the terminal's Ctrl-C reaches the launcher alone, which stops the
        # processes in order. The death signal ends a child whose launcher was killed outright.
        popen = subprocess.Popen(
            command,
            cwd=self.plan.file.resolve().parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            process_group=0,
            preexec_fn=self.pdeathsig,
        )
        child.popen, child.restart_at = popen, None
        child.started_at = time.monotonic()
        if child not in self.started:
            self.started.append(child)
        assert popen.stdout is not None
        child.reader = threading.Thread(
            target=self._copy, args=(child, popen.stdout), name=f"launch-{spec.name}", daemon=True
        )
        child.reader.start()
        self._say(f"{spec.name} started (pid {popen.pid}): sengen {command[3]} {spec.config.name}")
        # The driver's kernel steps the others as soon as it is up: nothing waits for it.
        child.ready = driver

    def _script(self) -> str:
        """The master's shell script for ``until``: wait until every other stepped process's
        clock is found on the clock bus (so that all take part from the first step), then step
        them all to ``until``. ``sengen run --until`` alone would start stepping at once."""
        others = [p.name for p in self.plan.processes if p.stepped and not p.master]
        waits = "".join(f"info {name}; " for name in others)
        return f"open {self.plan.clock_bus}; {waits}advance {self.plan.until}"

    def _stepped_config(self, spec: Process, env: dict[str, str]) -> Path:
        """A configuration that includes the process's own and puts its kernel under the
        launch's master clock. It lives in the scratch folder, so the own configuration's
        folder (and project) go on the import path as ``sengen run`` would put them."""
        from sengen.stl.project import find_project

        folder = self.scratch / spec.name
        folder.mkdir(exist_ok=True)
        override = folder / spec.config.name
        kernel = {
            "runMode": "virtualTime",
            "clockBus": self.plan.clock_bus,
            "clockName": spec.name,
            "clockMaster": spec.master,
        }
        override.write_text(
            f"include: {_quoted(str(spec.config))}\n"
            + "kernel:\n"
            + "".join(f"  {key}: {_quoted(value)}\n" for key, value in kernel.items()),
            encoding="utf-8",
        )
        paths = [str(spec.config.parent)]
        project = find_project(spec.config.parent)
        if project is not None:
            paths.append(str(project.parent))
        if env.get("PYTHONPATH"):
            paths.append(env["PYTHONPATH"])
        env["PYTHONPATH"] = os.pathsep.join(paths)
        return override

    def _copy(self, child: _Child, stream: IO[bytes]) -> None:
        name = child.spec.name.ljust(self.width)
        prefix = f"\x1b[{child.colour}m{name} |\x1b[0m " if child.colour else f"{name} | "
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self.lock, contextlib.suppress(OSError, ValueError):
                self.out.write(f"{prefix}{line}\n")
                self.out.flush()
        stream.close()

    def _reap(self, child: _Child) -> None:
        """The ended run's exit status collected and its output copied to the end."""
        assert child.popen is not None
        child.popen.wait()
        if child.reader is not None:
            child.reader.join(_READER_JOIN_S)
        child.popen, child.reader = None, None

    # -- stopping ----------------------------------------------------------------------------------

    def _stop_all(self) -> None:
        """Every running process, in the reverse of the start order: SIGTERM (an orderly stop
        once ``sengen run`` handles it, a quiet end before), then SIGKILL after ``stopTimeout``;
        a signal to the launcher meanwhile kills the rest at once."""
        calm = len(self.signalled)
        for child in reversed(self.started):
            child.done = True
            popen = child.popen
            if popen is None:
                continue
            if popen.poll() is None and len(self.signalled) == calm:
                self._say(f"stopping {child.spec.name}")
                popen.send_signal(signal.SIGTERM)
                deadline = time.monotonic() + self.plan.stop_timeout.ns / 1e9
                while popen.poll() is None and time.monotonic() < deadline:
                    if len(self.signalled) > calm:
                        break
                    time.sleep(_POLL_S)
            if popen.poll() is None:
                self._say(f"{child.spec.name} killed")
                popen.kill()
            self._reap(child)

    def _say(self, text: str) -> None:
        with self.lock, contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"sengen launch: {text}\n")
            sys.stderr.flush()

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM end the launch (status 130 / 143); another one while the
        processes stop kills those still running instead of waiting for them."""

        def handle(number: int, _frame: object) -> None:
            self.signalled.append(number)

        previous = {n: signal.signal(n, handle) for n in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)


def _quoted(value: object) -> str:
    """A YAML scalar: booleans as YAML writes them, text double-quoted with escapes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _pdeathsig() -> Callable[[], None] | None:
    """What a child runs before ``exec`` on Linux: SIGKILL when its launcher dies, so that even
    a launcher killed outright leaves no process behind. The libc function is looked up here,
    before any fork, so the child only calls it."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    prctl = ctypes.CDLL(name, use_errno=True).prctl

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)

    return set_death_signal
