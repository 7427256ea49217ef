"""``ps``: the processes of the system, and the owner line of ``info`` for a remote object.

Both ask the transport's process directory (``bus_space.processes``), which answers on another
thread within a bounded wait; the job polls the answer at :data:`POLL`, so the shell's cycle
never blocks. Without a transport, the shell's own process is the whole system.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from sengen.runtime import Object
from sengen.runtime.kernel.extension import Answer, ProcessInfo, this_process

from .jobs import CommandError, Steps, Until, Wait
from .render import table

if TYPE_CHECKING:
    from .console import Console

POLL = 20_000_000  # ns between two looks at an answer in progress
HEADER = ("APP", "PID", "HOST", "MODE", "OBJECTS", "LIVELINESS", "COMPONENTS")


def ask(console: Console) -> Generator[Wait, None, list[ProcessInfo]]:
    """Every process of the system, this one first."""
    directory = console.api.bus_space.processes
    if directory is None:
        api = console.api
        return [this_process(api.get_app_name(), api.fetch_monitoring_info())]
    answer = directory.ask_processes()
    yield from _until_done(console, answer)
    return answer.processes


def ps(console: Console, text: str) -> Steps:
    if text:
        raise CommandError("usage: ps")
    rows = [HEADER]
    for info in (yield from ask(console)):
        objects = "?" if info.objects < 0 else str(info.objects)
        liveliness = f"{info.liveliness} (this shell)" if info.here else info.liveliness
        components = ", ".join(info.components) or "?"
        rows.append(
            (info.app, str(info.pid), info.host, info.run_mode, objects, liveliness, components)
        )
    for line in table(rows, indent=""):
        console.say(line)


def remote_owner(console: Console, obj: Object) -> Generator[Wait, None, str | None]:
    """``component in app (pid P on host)`` for an object of another process; None when the
    object is not remote or its process did not answer."""
    directory = console.api.bus_space.processes
    answer = directory.ask_owner(obj) if directory is not None else None
    if answer is None:
        return None
    yield from _until_done(console, answer)
    if not answer.processes:
        return None
    owner = answer.processes[0]
    return f"{owner.component or '?'} in {owner.label}"


def _until_done(console: Console, answer: Answer) -> Generator[Wait, None, None]:
    while not answer.done.is_set():
        yield Until(console.api.get_time().ns + POLL)
