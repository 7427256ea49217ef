"""Waiting until another process, one of its components or an object is seen on the network
(``Kernel.wait_for``): what a launcher, a driver or a test does instead of sleeping while the
processes of a system find each other.

Asks the transport's :class:`ProcessDirectory` (the processes' own answers, not a guess from
timing) again and again until the answers show what was asked for. It blocks: it is for the
code around a kernel, never for a component's cycle.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from sengen.runtime.errors import NotSeen
from sengen.runtime.kernel.processes import Answer, ProcessDirectory, ProcessInfo

ROUND_PAUSE = 0.05  # s between two rounds of questions: the network's pace, not a guess


def wait_for(
    directory: Callable[[], ProcessDirectory | None],
    stopping: threading.Event,
    process: str | None = None,
    component: str | None = None,
    obj: str | None = None,
    timeout: float = 10.0,
) -> ProcessInfo:
    """The first process matching every criterion given: ``process`` (its app name, or
    ``app/pid``), ``component`` (one of its components), ``obj`` (an object it owns, by
    address ``session.bus.name``). Raises :class:`NotSeen` naming what was waited for and what
    was seen, after ``timeout`` seconds or when the kernel stops."""
    wanted = _described(process, component, obj)
    if not wanted:
        raise ValueError("wait_for needs a process, a component or an object to wait for")
    deadline = time.monotonic() + timeout
    seen: list[ProcessInfo] = []
    while not stopping.is_set():
        found = directory()
        if found is not None:
            seen = _answers(found, obj, deadline) or seen  # an unfinished round: the last
            for info in seen:
                if _matches(info, process, component, obj):
                    return info
        if time.monotonic() >= deadline:
            break
        stopping.wait(ROUND_PAUSE)
    why = "the kernel stopped" if stopping.is_set() else f"not within {timeout:g} s"
    if directory() is None:
        shown = "no transport is loaded"
    else:
        shown = "seen: " + (", ".join(_shown(info) for info in seen) or "nothing")
    raise NotSeen(f"waited for {' '.join(wanted)}: {why} ({shown})")


def _answers(directory: ProcessDirectory, obj: str | None, deadline: float) -> list[ProcessInfo]:
    """One round: every process, or, for an object, the processes owning it."""
    if obj is None:
        answer = directory.ask_processes()
    else:
        bus, _, name = obj.rpartition(".")
        answer = directory.ask_named(bus, name)
    _wait(answer, deadline)
    return list(answer.processes) if answer.done.is_set() else []


def _wait(answer: Answer, deadline: float) -> None:
    answer.done.wait(max(0.0, deadline - time.monotonic()))


def _matches(
    info: ProcessInfo, process: str | None, component: str | None, obj: str | None
) -> bool:
    if process is not None and process not in (info.app, f"{info.app}/{info.pid}"):
        return False
    if component is None:
        return obj is None or bool(info.component)
    # An answer about an object names its owning component; else the process's components.
    return info.component == component if obj is not None else component in info.components


def _described(process: str | None, component: str | None, obj: str | None) -> list[str]:
    parts = [] if process is None else [f"process '{process}'"]
    if component is not None:
        parts.append(f"component '{component}'")
    if obj is not None:
        parts.append(f"object '{obj}'")
    return parts


def _shown(info: ProcessInfo) -> str:
    label = f"{info.app}/{info.pid}"
    if info.component:
        return f"{label} (owner, component {info.component})"
    return f"{label} [{', '.join(info.components)}]" if info.components else label
