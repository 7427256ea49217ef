"""The shipped ``shell`` component (runtime.md §9.1): a real-time-only console on the system.

Its input comes from one of four places, chosen when it starts: commands given by ``sengen
shell -c``; an interactive prompt when standard input is a terminal; one command per line when
it is a pipe or a file; nothing at all when it is closed, and then the shell stays quiet. The
input threads only queue text; the shell's own cycle (10 Hz by default, on the wall clock even
in a stepped system, §6.7) runs the commands, so their subscriptions, calls and connections are
those of an ordinary component and see remote objects as soon as a transport delivers them.
"""

from __future__ import annotations

import os
import queue
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sengen.runtime import Component, Duration, QueryError
from sengen.runtime.kernel.extension import BusAddress, fail, parse_query

from .commands import COMMANDS, dispatch
from .completion import Index, build_index
from .console import Console
from .jobs import Job
from .join import Join, JoinCheck
from .literals import split_commands
from .output import Printer
from .sources import query_name_problem
from .terminal import Inbox, LineReader, Request, default_history
from .watch import Tap

if TYPE_CHECKING:
    from sengen.runtime import RunApi

    from .prompt import Prompt

DEFAULT_WAIT = Duration.from_seconds(5)
Mode = Literal["script", "interactive", "piped", "quiet"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class QueryConfig(_Strict):
    """A named query opened at start: ``{name, selection}``."""

    name: str
    selection: str

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        problem = query_name_problem(value)
        if problem is not None:
            raise fail(problem)
        return value

    @field_validator("selection")
    @classmethod
    def _selection(cls, value: str) -> str:
        try:
            query = parse_query(value)
        except QueryError as error:
            raise fail(str(error).splitlines()[0]) from None
        if query.bus is None:
            raise fail("a subscription needs a bus")
        return value


class ShellConfig(_Strict):
    """The ``shell`` entry's own keys."""

    open: list[BusAddress] = Field(default_factory=list)
    query: list[QueryConfig] = Field(default_factory=list)
    prompt: str = "sen> "
    history_file: str | None = Field(default=None, alias="historyFile")
    exit_on_eof: bool = Field(default=False, alias="exitOnEof")
    freq_hz: float = Field(default=10.0, alias="freqHz", gt=0)

    # Bus names have a dot and query names none: the two lists never clash.
    @field_validator("open")
    @classmethod
    def _unique_buses(cls, value: list[str]) -> list[str]:
        _unique(value)
        return value

    @field_validator("query")
    @classmethod
    def _unique_queries(cls, value: list[QueryConfig]) -> list[QueryConfig]:
        _unique([q.name for q in value])
        return value


def _unique(names: list[str]) -> None:
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise fail(f"source '{repeated[0]}' is opened twice")


class Shell(Component):
    config_model = ShellConfig
    _api: RunApi  # set when it starts running
    _console: Console

    def __init__(self, config: ShellConfig) -> None:
        self.config = config
        self.script: str | None = None
        self.wait = DEFAULT_WAIT  # how long a scripted command waits (sengen shell --wait)
        self._inbox: Inbox = queue.SimpleQueue()
        self._jobs: list[Job] = []
        self._index = Index()
        self._failed = False
        self._ended = False  # no more input is taken: the kernel stops, or the input ended
        self._prompt: Prompt | None = None
        self.join: Join | None = None  # set by sengen shell when it joins a running system
        self._join_check: JoinCheck | None = None

    def is_real_time_only(self) -> bool:
        return True

    def use_script(self, commands: str, wait: Duration) -> None:
        """``sengen shell -c``: run ``commands`` once started, each waiting up to ``wait`` for
        what it needs; stop at the first failure; then stop the kernel (exit 0 or 1)."""
        self.script = commands
        self.wait = wait

    def run(self, api: RunApi) -> None:
        mode = self._mode()
        printer = Printer(terminal=mode == "interactive")
        printer.quiet = mode == "quiet"
        self._api = api
        self._console = console = Console(
            api,
            printer,
            patient=mode != "interactive",
            wait=self.wait.ns,
            stop=self._shutdown,
            dispatch=dispatch,
        )
        for bus in self.config.open:
            console.sources.open(bus, f"SELECT * FROM {bus}", announce=False)
        for query in self.config.query:
            console.sources.open(query.name, query.selection, announce=False)
        if self.join is not None:
            self._join_check = JoinCheck(self.join, console, api.get_time().ns)
        if mode == "script" and self.script is not None:
            for command in split_commands(self.script):
                self._inbox.put(Request(command))
            self._inbox.put(None)
        elif mode == "piped":
            LineReader(self._inbox, sys.stdin).start()
        elif mode == "interactive":
            # Imported here: prompt_toolkit is loaded only by a shell that prompts a person.
            from .prompt import Prompt

            history = self.config.history_file
            self._prompt = Prompt(
                self._inbox,
                lambda: self._index,
                self.config.prompt,
                Path(history) if history else default_history(),
                self.wait.ns / 1e9,
            )
            self._prompt.start()
        try:
            # The shell's own scheduling warnings would land in the middle of its output; its
            # monitoring still counts them.
            period = Duration.from_hz(self.config.freq_hz)
            api.exec_loop(period, self._cycle, log_overruns=False)
        finally:
            if self._prompt is not None:
                self._prompt.stop()

    def _mode(self) -> Mode:
        if self.script is not None:
            return "script"
        stdin = sys.stdin
        try:
            if stdin is None or stdin.closed:
                return "quiet"
            os.fstat(stdin.fileno())
        except (OSError, ValueError):  # fd 0 closed, or an input without a file behind it
            return "quiet"
        return "interactive" if stdin.isatty() else "piped"

    # -- the cycle -------------------------------------------------------------------------------

    def _cycle(self) -> None:
        console = self._console
        now = self._api.get_time().ns
        if self._join_check is not None:
            self._join_check.poll(now)
        for job in self._jobs:
            job.advance(now)
        self._settle()
        console.streams.tick(now)
        while not self._ended and not (console.patient and self._jobs):
            try:
                request = self._inbox.get_nowait()
            except queue.Empty:
                break
            if request is None:
                self._input_ended()
                break
            self._jobs.append(console.job(request.text, now, request.released))
            self._settle()
        if self._prompt is not None and console.changed:
            console.changed = False
            watches = console.watches
            self._index = replace(
                build_index(
                    COMMANDS,
                    console.sources,
                    _targets(watches.events),
                    _targets(watches.changes),
                ),
                streaming=tuple(console.streams.kinds()),
            )

    def _settle(self) -> None:
        for job in self._jobs:
            if job.finished and not job.ok:
                self._failed = True
                if self.script is not None:  # -c stops at the first failure
                    self._stop(1)
        self._jobs = [j for j in self._jobs if not j.finished]

    def _input_ended(self) -> None:
        if self.script is not None or self.config.exit_on_eof:
            self._stop(1 if self._failed else 0)
        else:
            self._ended = True
            self._console.printer.quiet = True

    def _shutdown(self) -> None:
        """The ``shutdown`` command: scripted input exits 1 when a command failed before."""
        self._stop(1 if self._failed and self._console.patient else 0)

    def _stop(self, code: int) -> None:
        if not self._ended:
            self._ended = True
            self._api.request_kernel_stop(code)


def _targets(taps: list[Tap]) -> list[str]:
    """What ``unlisten`` / ``unwatch`` accept: the objects, and each of their members."""
    return sorted({t.path for t in taps} | {f"{t.path}.{t.member}" for t in taps})
