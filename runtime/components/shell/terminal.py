"""The shell's inbox and the reader of piped input, which only hands command text to the inbox;
the shell's cycle runs it. The interactive prompt is in :mod:`.prompt`.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .literals import split_commands


@dataclass(eq=False)
class Request:
    """A command for the shell; ``released`` is set once the prompt may come back."""

    text: str
    released: threading.Event = field(default_factory=threading.Event)


# What the inbox holds: a command, or None at the end of the input.
Inbox = queue.SimpleQueue[Request | None]


def default_history() -> Path:
    """``sengen/shell_history`` under the user's state folder (XDG)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "sengen" / "shell_history"


class LineReader:
    """Piped input: one command per line. The thread may stay blocked in a read for ever, so it
    is a daemon that holds nothing the kernel needs."""

    def __init__(self, inbox: Inbox, stream: TextIO) -> None:
        self._inbox = inbox
        self._stream = stream
        self._thread = threading.Thread(target=self._run, name="shell-input", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            for line in self._stream:
                for command in split_commands(line):
                    self._inbox.put(Request(command))
        except (OSError, ValueError):  # the input closed under us: that is its end
            pass
        self._inbox.put(None)
