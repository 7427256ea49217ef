"""``step``, ``advance`` and ``time``: the master clock found on the open sources (runtime.md
§6.3, §6.7).

The shell is real-time-only, so it keeps cycling while it waits for the master: its calls are
ordinary calls, and the master answers once every step is done. The master's ``time`` is the
time of the next cycle; it is printed from the shell's proxy, which the drain that brings the
result has already refreshed (the master commits its time before it sends the result).
``watch`` samples at the shell's drains, so while something is watched ``step n`` steps one at
a time: each step's values reach a drain of their own. ``echo`` needs no such help: its change
logs bring every commit.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from sengen.runtime import Call, Duration, Object, TimeStamp, TimeValueError

from .jobs import Again, CommandError, Steps, Wait
from .render import time_text

if TYPE_CHECKING:
    from .console import Console

MASTER = "sen.kernel.VirtualMasterClock"


def _master(console: Console) -> Generator[Wait, None, Object]:
    while True:
        for _, obj, _ in console.sources.entries():
            if obj.META.is_a(MASTER):
                return obj
        yield Again(
            "no master clock on the open sources (open the clock bus, e.g. 'open local.kernel')"
        )


def _say_time(console: Console, master: Object) -> None:
    meta = master.META.property("time")
    assert meta is not None
    now: TimeStamp = getattr(master, meta.py_name)
    console.say(f"time {time_text(now.ns, True)}")


def step(console: Console, text: str) -> Steps:
    """``step [n]``."""
    try:
        count = int(text) if text else 1
    except ValueError:
        raise CommandError(f"step takes a number of steps, got '{text}'") from None
    if count < 1:
        raise CommandError(f"step takes a number of steps >= 1, got {count}")
    master = yield from _master(console)
    calls: list[tuple[str, tuple[int, ...]]]
    if count == 1 or console.watches.changes:
        calls = [("step", ())] * count
    else:
        calls = [("steps", (count,))]
    for method, args in calls:
        call: Call[Duration] = master._call_(method, args, None, None)
        yield call
        console.result(call)
    _say_time(console, master)


def advance(console: Console, text: str) -> Steps:
    """``advance <duration>``."""
    try:
        span = Duration.parse(text)
    except TimeValueError as error:
        raise CommandError(f"advance: {error}") from None
    master = yield from _master(console)
    call: Call[Duration] = master._call_("advanceTime", (span,), None, None)
    yield call
    console.result(call)
    _say_time(console, master)


def show_time(console: Console, text: str) -> Steps:
    """``time``."""
    if text:
        raise CommandError("time takes no arguments")
    master = yield from _master(console)
    _say_time(console, master)
