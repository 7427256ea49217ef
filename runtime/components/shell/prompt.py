"""The interactive prompt (prompt_toolkit) on its own thread: completion, history, colours.

The only module of sengen that imports prompt_toolkit. The shell imports it when it starts an
interactive prompt, so that a process that only runs commands (``sengen shell -c``, piped
input) or never runs a shell does not load it.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.shortcuts import CompleteStyle

from .completion import Index, candidates
from .literals import split_commands
from .terminal import Inbox, Request


class _History(FileHistory):
    """A history file without consecutive duplicates."""

    def append_string(self, string: str) -> None:
        strings = self.get_strings()
        if not strings or strings[-1] != string:
            super().append_string(string)


class ShellCompleter(Completer):
    """prompt_toolkit's view of :func:`candidates` over the latest index."""

    def __init__(self, index: Callable[[], Index]) -> None:
        self._index = index

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterator[Completion]:
        word, found = candidates(self._index(), document.text_before_cursor)
        for text in found:
            yield Completion(text, start_position=-len(word))


def _stream_handlers() -> Iterator[logging.StreamHandler[Any]]:
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        if isinstance(logger, logging.Logger):
            for handler in logger.handlers:
                if type(handler) is logging.StreamHandler:  # not a file's
                    yield handler


@contextlib.contextmanager
def _logging_through(real: tuple[object, ...], patched: tuple[object, ...]) -> Iterator[None]:
    """While the prompt runs, log handlers write through patch_stdout's streams: a handler keeps
    the stream it was made with (the real stderr), and a line written there directly would land
    on the prompt line, after the text being typed. Through the patched stream it is printed
    above the prompt, which is drawn again below it."""
    swapped: list[tuple[logging.StreamHandler[Any], Any]] = []
    for handler in _stream_handlers():
        for before, after in zip(real, patched, strict=True):
            if handler.stream is before:
                swapped.append((handler, handler.setStream(after)))
    try:
        yield
    finally:
        for handler, stream in swapped:
            handler.setStream(stream)


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
        outer = (sys.stdout, sys.stderr)
        # The second manager's arguments are read once the first has patched sys.std*.
        with patch_stdout(raw=True), _logging_through(outer, (sys.stdout, sys.stderr)):
            while not self._stopping.is_set():
                try:
                    text = session.prompt(self._message)
                except KeyboardInterrupt:  # raw mode: Ctrl-C is a key here, never a SIGINT
                    index = self._index()
                    if index.listening:
                        self._submit("unlisten")
                    if index.watching:
                        self._submit("unwatch")
                    for kind in index.streaming:
                        self._submit(f"un{kind}")
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
