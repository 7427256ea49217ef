"""Shell commands in progress, advanced in the shell component's cycle.

A command that needs to wait is a generator: it yields what it waits for (a call's result, the
next cycle, a wall time) and is resumed in a later cycle of the shell. So the user's input
thread never runs kernel work; it only hands text over and watches the job's ``released`` event.
A job's :class:`Bounds` say how long it waits for an object it names to be discovered (scripted
input waits, the interactive prompt does not) and for results (the prompt prints them whenever
they arrive).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from sengen.runtime import Call
from sengen.runtime.errors import SengenError


class CommandError(SengenError):
    """A command failed: ``lines`` are printed as its error (the first is the message)."""

    def __init__(self, message: str, *more: str) -> None:
        super().__init__(message)
        self.lines = (message, *more)


@dataclass(frozen=True, slots=True)
class Again:
    """Run the next step in the next cycle; if the job's discovery wait ends first, it fails
    with ``reason`` (an object still not found)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Until:
    """Resume at wall time ``ns`` (``sleep``), whatever the job's wait."""

    ns: int


_T = TypeVar("_T")
Wait = Call[Any] | Again | Until
Steps = Generator[Wait, None, None]


@dataclass(frozen=True, slots=True)
class Bounds:
    """Until when (wall ns) a job waits to discover what it names, and for results; None:
    without bound."""

    discover: int
    results: int | None


class Job:
    """One command: its steps, what it waits for, and whether it succeeded."""

    def __init__(
        self,
        text: str,
        start: Callable[[], Steps | None],
        bounds: Bounds,
        report: Callable[[tuple[str, ...]], None],
        patient: bool,
        released: threading.Event | None = None,
    ) -> None:
        """``start`` runs the command (in the first :meth:`advance`); it returns the steps of a
        command that waits, or None. ``patient``: the job is released only when it finishes
        (scripted input); otherwise as soon as it waits for a result, which then prints when
        it arrives. ``released`` is the event the input side waits on."""
        self.text = text
        self._start: Callable[[], Steps | None] | None = start
        self._steps: Steps | None = None
        self._bounds = bounds
        self._report = report
        self._patient = patient
        self._waiting: Wait | None = None
        self.finished = False
        self.ok = True
        self.released = released if released is not None else threading.Event()

    def advance(self, now: int) -> None:
        """Run or resume the command as far as it can go in this cycle."""
        if self._start is not None:
            start, self._start = self._start, None
            self._steps = self._guarded(start)
            if self._steps is None:
                if not self.finished:
                    self._finish()
                return
        steps = self._steps
        while not self.finished and steps is not None:
            waiting = self._waiting
            if isinstance(waiting, Call) and not waiting.done():
                if self._bounds.results is not None and now >= self._bounds.results:
                    self._fail((f"call error: no result from {waiting.label} in time",))
                return
            if isinstance(waiting, Until) and now < waiting.ns:
                return
            if isinstance(waiting, Again) and now >= self._bounds.discover:
                self._fail((waiting.reason,))
                return
            following = self._guarded(lambda: next(steps))
            if following is None:
                if not self.finished:
                    self._finish()
                return
            self._waiting = following
            if isinstance(following, Again):
                if now >= self._bounds.discover:
                    continue  # no wait at all: it fails at once with its reason
                return
            if not self._patient:
                self.released.set()

    def _guarded(self, step: Callable[[], _T]) -> _T | None:
        """``step()``; None when the command ended, successfully or not."""
        try:
            return step()
        except StopIteration:
            return None
        except CommandError as error:
            self._fail(error.lines)
        except Exception as error:  # a bug in a command must not stop the shell
            logging.getLogger("sengen.shell").exception("shell command %r failed", self.text)
            self._fail((f"internal error: {type(error).__name__}: {error}",))
        return None

    def _fail(self, lines: tuple[str, ...]) -> None:
        self.ok = False
        self._report(lines)
        self._finish()

    def _finish(self) -> None:
        self.finished = True
        if self._steps is not None:
            self._steps.close()
        self.released.set()
