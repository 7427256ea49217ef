"""A shell that joins a running system (``sengen shell``, ``--connect``, ``--attach``): it says
which rendezvous it joined, and warns when no other process shows up there within
:data:`JOIN_GRACE`, so that a wrong port or session is not met with silence.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from sengen.runtime import Duration
from sengen.runtime.kernel.extension import Answer

from .console import Console

JOIN_GRACE = Duration.from_seconds(3)


@dataclass(frozen=True)
class Join:
    """``rendezvous``: what the shell joined, as the user should read it; ``session``: opened
    at start; ``hint``: added to the warning (what to try instead)."""

    rendezvous: str
    session: str | None = None
    hint: str = ""


class JoinCheck:
    """Polled by the shell's cycle until another process answers or the grace ends."""

    def __init__(self, join: Join, console: Console, now: int) -> None:
        self.join = join
        self.console = console
        self.deadline = now + JOIN_GRACE.ns
        self.finished = False
        self._answer: Answer | None = None
        session = f", session {join.session}" if join.session else ""
        self._note(f"joined rendezvous {join.rendezvous}{session}")
        if join.session is not None:
            console.sources.open_session(join.session)

    def _note(self, text: str) -> None:
        """On the terminal with the rest; otherwise on standard error, so that the output of
        scripted commands stays theirs alone."""
        printer = self.console.printer
        if printer.quiet:
            return
        if printer.terminal:
            printer.say(text)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def poll(self, now: int) -> None:
        if self.finished:
            return
        directory = self.console.api.bus_space.processes
        if directory is None:  # no transport: nothing to join
            self.finished = True
            return
        answer = self._answer
        if answer is None:
            self._answer = directory.ask_processes()
            return
        if not answer.done.is_set():
            return
        if any(not p.here for p in answer.processes):
            self.finished = True
        elif now >= self.deadline:
            self.finished = True
            seconds = JOIN_GRACE.ns // 10**9
            self._note(
                f"warning: no other process found at {self.join.rendezvous} within"
                f" {seconds} s{self.join.hint}"
            )
        else:
            self._answer = None  # ask again in the next cycle
