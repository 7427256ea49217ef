"""The shell's input threads: the interactive prompt (prompt_toolkit) and the reader of piped
input. Both only hand command text to the shell's inbox; the shell's cycle runs them.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.shortcuts import CompleteStyle

from .completion import Index, ShellCompleter
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


class _History(FileHistory):
    """A history file without consecutive duplicates."""

    def append_string(self, string: str) -> None:
        strings = self.get_strings()
        if not strings or strings[-1] != string:
            super().append_string(string)


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


class Prompt:
    """The interactive prompt on its own thread: completion, history, colours. Each command
    waits until the shell released it, so that its output comes before the next prompt."""

    def __init__(
        self,
        inbox: Inbox,
        index: Callable[[], Index],
        message: str,
        history: Path,
        wait: float,
    ) -> None:
        self._inbox = inbox
        self._index = index
        self._message = FormattedText([("ansicyan bold", message)])
        self._history = history
        self._wait = max(wait, 1.0)
        self._stopping = threading.Event()
        self._app: Application[str] | None = None
        self._thread = threading.Thread(target=self._run, name="shell-prompt", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """End the prompt (the terminal is given back as it was) and the thread."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        while self._thread.is_alive() and time.monotonic() < deadline:
            app = self._app
            if app is not None and app.is_running and app.loop is not None:
                app.loop.call_soon_threadsafe(self._exit, app)
            self._thread.join(0.05)

    @staticmethod
    def _exit(app: Application[str]) -> None:
        if app.future is not None and not app.future.done():
            app.exit(exception=EOFError())

    def _history_file(self) -> History:
        try:
            self._history.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:  # a shell without a history beats no shell
            sys.stderr.write(f"shell: no history file: {error}\n")
            return InMemoryHistory()
        return _History(str(self._history))

    def _run(self) -> None:
        session: PromptSession[str] = PromptSession(
            history=self._history_file(),
            completer=ShellCompleter(self._index),
            complete_style=CompleteStyle.READLINE_LIKE,
            complete_while_typing=False,
        )
        self._app = session.app
        with patch_stdout(raw=True):
            while not self._stopping.is_set():
                try:
                    text = session.prompt(self._message)
                except KeyboardInterrupt:  # raw mode: Ctrl-C is a key here, never a SIGINT
                    index = self._index()
                    if index.listening:
                        self._submit("unlisten")
                    if index.watching:
                        self._submit("unwatch")
                    continue
                except EOFError:  # Ctrl-D on an empty line, or the shell is stopping
                    if not self._stopping.is_set():
                        self._submit("shutdown")
                    return
                for command in split_commands(text):
                    self._submit(command)

    def _submit(self, text: str) -> None:
        request = Request(text)
        self._inbox.put(request)
        deadline = time.monotonic() + self._wait
        while not request.released.wait(0.05):
            if self._stopping.is_set() or time.monotonic() > deadline:
                return
