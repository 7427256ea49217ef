"""The shell's state on its own thread, and the jobs that run its command lines.

Everything here runs in the shell component's cycle: subscriptions, reads of proxies, calls and
event connections, so that what the shell does is what any component does. The dispatch of a
line to its command (:func:`.commands.dispatch`) is handed in by the component: the commands
work with the console, so the console does not import them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from typing import Any

from sengen.runtime import Call, Object, RunApi

from .echo import Streams
from .jobs import Again, Bounds, CommandError, Job, Steps, Wait
from .output import Printer
from .sources import Sources
from .suggest import object_hint
from .watch import Watches


class Console:
    """What commands work with. ``patient``: commands wait for what they need (scripted input);
    ``wait`` bounds that, in ns."""

    def __init__(
        self,
        api: RunApi,
        printer: Printer,
        patient: bool,
        wait: int,
        stop: Callable[[], None],
        dispatch: Callable[[Console, str], Steps | None],
    ) -> None:
        self.api = api
        self.dispatch = dispatch
        self.printer = printer
        self.patient = patient
        self.wait = wait
        self.stop = stop
        mode = api.fetch_monitoring_info().run_mode.name
        self.virtual = mode in ("virtualTime", "virtualTimeRunning")  # times since the start
        self.changed = True  # what completion offers must be rebuilt
        self.sources = Sources(api, printer.say, self._touch)
        self.watches = Watches(printer.say, self.virtual, self._touch)
        self.sources.removed.append(self.watches.forget)
        self.streams = Streams(api, printer.say, self.virtual, self._touch)  # echo, hz, bw
        self.sources.removed.append(self.streams.forget)
        self.history: list[str] = []

    def _touch(self) -> None:
        self.changed = True

    def say(self, text: str) -> None:
        self.printer.say(text)

    def job(self, text: str, now: int, released: threading.Event | None = None) -> Job:
        """Start ``text`` and take it as far as it goes in this cycle."""
        self.history.append(text)
        bounds = Bounds(now + self.wait, now + self.wait) if self.patient else Bounds(now, None)
        job = Job(
            text,
            lambda: self.dispatch(self, text),
            bounds,
            self.printer.error,
            self.patient,
            released,
        )
        job.advance(now)
        return job

    def find(self, path: str) -> Generator[Wait, None, Object]:
        """The object at ``path``, waiting for it to be discovered if the job may wait."""
        while (found := self.sources.find(path)) is None:
            yield Again(f"could not find object {path}{object_hint(self.sources, path)}")
        return found

    def target(self, text: str) -> Generator[Wait, None, tuple[Object, str | None]]:
        """``<obj>`` or ``<obj>.<member>``: the object and the member name, if any."""
        head, _, member = text.rpartition(".")
        while True:
            whole = self.sources.find(text)
            if whole is not None:
                return whole, None
            part = self.sources.find(head) if head else None
            if part is not None:
                return part, member
            missing = head if head and head not in self.sources.sources else text
            yield Again(f"could not find object {missing}{object_hint(self.sources, missing)}")

    def result(self, call: Call[Any]) -> Any:
        """A finished call's value, or its error as the command's failure."""
        error = call.exception()
        if error is not None:
            raise CommandError(f"call error: {error}")
        return call.result()
