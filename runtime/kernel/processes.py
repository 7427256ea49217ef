"""The processes of a system and the owners of objects (``ps`` and ``info`` in the shell).

A process knows itself (:func:`this_process`); what it knows of the others comes from its
transport, which registers a :class:`ProcessDirectory` on the bus space. Asking is asynchronous:
an :class:`Answer` is filled on another thread and read once ``done`` is set, so that a
component's cycle never blocks on the network. Nothing is sent per object: the directory asks
the processes when someone wants to know.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sengen.runtime.objects.objects import Object
    from sengen.runtime.sen.kernel.monitoring import KernelMonitoringInfo

UNKNOWN = -1  # a count a process did not report


@dataclass(frozen=True)
class ProcessInfo:
    """One process. ``liveliness``: ``alive``, or ``leaving`` when its token went and the
    grace for its goodbye runs; ``here``: the asking process itself; ``component``: in an
    answer about an object, the component that owns it."""

    app: str
    pid: int
    host: str = "?"
    run_mode: str = "?"
    components: tuple[str, ...] = ()
    objects: int = UNKNOWN
    liveliness: str = "alive"
    here: bool = False
    component: str = ""

    def encode(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def decode(cls, data: bytes) -> ProcessInfo | None:
        """None when ``data`` is not an answer of this form (another version, a bug)."""
        try:
            tree = json.loads(data)
            return cls(
                app=str(tree["app"]),
                pid=int(tree["pid"]),
                host=str(tree["host"]),
                run_mode=str(tree["run_mode"]),
                components=tuple(str(c) for c in tree["components"]),
                objects=int(tree["objects"]),
                component=str(tree.get("component", "")),
            )
        except (ValueError, KeyError, TypeError):
            return None

    @property
    def label(self) -> str:
        return f"{self.app} (pid {self.pid} on {self.host})"


def this_process(app: str, monitoring: KernelMonitoringInfo, component: str = "") -> ProcessInfo:
    """This process, from its kernel's monitoring: the object count is the sum of what its
    components publish. A kernel without an app name is ``sengen``, as in its process token."""
    return ProcessInfo(
        app=app or "sengen",
        pid=os.getpid(),
        host=socket.gethostname(),
        run_mode=monitoring.run_mode.name,
        components=tuple(c.name for c in monitoring.components),
        objects=sum(c.object_count for c in monitoring.components),
        here=True,
        component=component,
    )


@dataclass(eq=False)
class Answer:
    """Filled by the directory on its own thread; read only once ``done`` is set."""

    processes: list[ProcessInfo] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


class ProcessDirectory(Protocol):
    """What a transport offers about the other processes of the system."""

    def ask_processes(self) -> Answer:
        """Every process of the system, this one first, within a bounded wait."""

    def ask_owner(self, obj: Object) -> Answer | None:
        """The process and component owning remote ``obj`` (one entry, or none when it did
        not answer); None when ``obj`` is not an object of another process."""

    def ask_named(self, bus: str, name: str) -> Answer:
        """The processes owning an object named ``name`` on ``bus`` (each entry naming the
        owning component), whether or not this process subscribes to it."""
