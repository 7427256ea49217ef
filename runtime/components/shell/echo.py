"""``echo``, ``hz`` and ``bw``: every committed change of an object, and its rates.

``watch`` samples: its connection runs in the shell's drain with the latest value, so a property
that changes faster than the shell cycles shows only some of its values. These commands open a
change-log subscription instead, the recorder's mechanism (runtime.md §9.2): the owner of the
object (or, for an object of another process, the transport) queues one record per commit into
the shell's work queue, never dropped, in commit order, stamped with the commit's time. So
``echo`` prints every value, and ``hz`` and ``bw`` measure the commits themselves, not the
shell's view of them.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sengen.runtime import Object, RunApi
from sengen.runtime.kernel.extension import (
    Log,
    LogRecord,
    PropertyMeta,
    Subscription,
    class_codec,
    did_you_mean,
)

from .jobs import CommandError, Steps, Wait
from .render import json_text, time_text

if TYPE_CHECKING:
    from .console import Console

REPORT_NS = 10**9  # hz and bw print once a second, as ros2 topic hz/bw do
DEFAULT_WINDOW = 100  # changes


Change = Callable[[int, dict[str, Any]], None]  # (commit time, changed values by STL name)


@dataclass(eq=False)
class Stream:
    """One ``echo``, ``hz`` or ``bw`` (``kind``) of ``obj`` (``member``: one property, or None:
    all of them); ``times`` and ``sizes``: the commits in the window of ``hz`` and ``bw``."""

    kind: str
    obj: Object
    path: str
    member: str | None
    window: int = DEFAULT_WINDOW
    changed: Change | None = None
    times: deque[int] = field(default_factory=deque)
    sizes: deque[int] = field(default_factory=deque)
    fresh: int = 0  # changes since the last report
    due: int = 0  # wall ns of the next report

    @property
    def target(self) -> str:
        return f"{self.path}.{self.member}" if self.member else self.path


@dataclass(eq=False)
class Feed:
    """One change-log subscription, ``SELECT <class> FROM <bus>``, shared by the streams of its
    objects: streams of many objects of one class cost one record per commit, not one per
    stream."""

    subscription: Subscription = field(init=False)
    by_name: dict[str, list[Stream]] = field(default_factory=dict)


class Streams:
    """The streams in progress; runs on the shell's thread only."""

    def __init__(
        self, api: RunApi, say: Callable[[str], None], virtual: bool, on_change: Callable[[], None]
    ) -> None:
        self._api = api
        self._say = say
        self._virtual = virtual
        self._on_change = on_change
        self.streams: list[Stream] = []
        self._feeds: dict[str, Feed] = {}  # by query text
        self._lines: list[str] = []  # echo's lines of the records being handled

    def start(self, stream: Stream, props: list[PropertyMeta], as_csv: bool = False) -> None:
        obj = stream.obj
        if stream.kind == "echo":
            stream.changed = self._echo(stream, props, as_csv)
        else:
            stream.changed = self._measure(stream)
        # One class on one bus: the narrowest query that holds the object, so that its owner
        # logs the commits of as few other objects as it can.
        query = f"SELECT {obj.META.qualified_name} FROM {obj.bus}"
        feed = self._feeds.get(query)
        if feed is None:
            feed = self._feeds[query] = Feed()
            feed.subscription = self._api.select(query, log=self._logger(feed))
        feed.by_name.setdefault(obj.name, []).append(stream)
        stream.due = self._api.get_time().ns + REPORT_NS
        self.streams.append(stream)
        self._on_change()

    def active(self, kind: str, obj: Object, member: str | None) -> bool:
        return any(s.kind == kind and s.obj is obj and s.member == member for s in self.streams)

    def stop(self, kind: str, obj: Object | None, member: str | None) -> int:
        """End the streams of ``kind`` on ``obj`` (all objects when None) and ``member`` (any
        when None); how many were ended."""
        ending = [
            s
            for s in self.streams
            if s.kind == kind
            and (obj is None or s.obj is obj)
            and (member is None or s.member == member)
        ]
        self._end(ending)
        return len(ending)

    def forget(self, objects: list[Object]) -> None:
        """Objects gone from every source: their streams end with them."""
        self._end([s for s in self.streams if s.obj in objects])

    def kinds(self) -> list[str]:
        """The kinds of the streams in progress, for Ctrl-C to end them."""
        return sorted({s.kind for s in self.streams})

    def _end(self, streams: list[Stream]) -> None:
        for stream in streams:
            self.streams.remove(stream)
            for query, feed in list(self._feeds.items()):
                held = feed.by_name.get(stream.obj.name, [])
                if stream in held:
                    held.remove(stream)
                    if not held:
                        del feed.by_name[stream.obj.name]
                    if not feed.by_name:
                        feed.subscription.close()
                        del self._feeds[query]
        if streams:
            self._on_change()

    # -- what the change logs bring, in the shell's drain ------------------------------------------

    def _logger(self, feed: Feed) -> Log:
        by_name = feed.by_name

        def logged(records: list[LogRecord]) -> None:
            """One owner's commit (or piece of kernel work): to the streams of each object."""
            for kind, time, owner, _, found in records:
                if kind == "set":
                    for stream in by_name.get(owner.name, ()):
                        assert stream.changed is not None
                        stream.changed(time, found)
            if self._lines:  # one write for the whole commit: echo keeps up with fast producers
                self._say("\n".join(self._lines))
                self._lines.clear()

        return logged

    def _echo(self, stream: Stream, props: list[PropertyMeta], as_csv: bool) -> Change:
        wanted = {p.stl_name: p for p in props}
        path, virtual, lines = stream.path, self._virtual, self._lines

        def show(time: int, found: dict[str, Any]) -> None:
            for stl_name, value in found.items():
                meta = wanted.get(stl_name)
                if meta is None:
                    continue
                text = json_text(meta.type, value)
                if as_csv:
                    lines.append(f"{_seconds(time)},{_csv_field(text)}")
                else:
                    lines.append(f"[{time_text(time, virtual)}] {path}.{stl_name} = {text}")

        return show

    def _measure(self, stream: Stream) -> Change:
        codec = class_codec(stream.obj.META)
        times, sizes, window, member = stream.times, stream.sizes, stream.window, stream.member

        def count(time: int, found: dict[str, Any]) -> None:
            if member is not None:
                if member not in found:
                    return
                found = {member: found[member]}
            times.append(time)
            # What this change puts on a wire: the transport encodes it with the same codec.
            sizes.append(len(codec.encode_properties(found)))
            if len(times) > window:
                times.popleft()
                sizes.popleft()
            stream.fresh += 1

        return count

    # -- reports, in the shell's cycle -------------------------------------------------------------

    def tick(self, now: int) -> None:
        """Print the reports of ``hz`` and ``bw`` that are due at wall time ``now``."""
        for stream in self.streams:
            if stream.kind == "echo" or now < stream.due:
                continue
            stream.due = now + REPORT_NS
            if stream.fresh == 0:
                self._say(f"{stream.target}: no new changes")
                continue
            stream.fresh = 0
            if len(stream.times) < 2:
                continue  # one change has no interval yet
            report = _rate if stream.kind == "hz" else _bandwidth
            self._say(f"{stream.target}: {report(stream)}")


def _rate(stream: Stream) -> str:
    times = list(stream.times)
    intervals = [(b - a) / 1e9 for a, b in itertools.pairwise(times)]
    mean = sum(intervals) / len(intervals)
    spread = math.sqrt(sum((x - mean) ** 2 for x in intervals) / len(intervals))
    rate = 1 / mean if mean > 0 else math.inf
    return (
        f"rate {rate:.2f} Hz  min {min(intervals):.4f} s  max {max(intervals):.4f} s"
        f"  std {spread:.5f} s  window {len(times)}"
    )


def _bandwidth(stream: Stream) -> str:
    times, sizes = list(stream.times), list(stream.sizes)
    span = (times[-1] - times[0]) / 1e9
    # The first change opens the span: the bytes of the others crossed it.
    per_second = sum(sizes[1:]) / span if span > 0 else math.inf
    return (
        f"{_bytes(per_second)}/s  mean {_bytes(sum(sizes) / len(sizes))}"
        f"  min {_bytes(min(sizes))}  max {_bytes(max(sizes))}  window {len(times)}"
    )


def _bytes(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1000 or unit == "MB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.2f} {unit}"
        count /= 1000
    raise AssertionError("unreachable")


def _seconds(ns: int) -> str:
    seconds, rest = divmod(ns, 10**9)
    return f"{seconds}.{rest:09d}"


def _csv_field(text: str) -> str:
    """RFC 4180 quoting: JSON strings, arrays and structs hold quotes and commas."""
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


# -- the commands ----------------------------------------------------------------------------------


def _options(text: str, flags: tuple[str, ...], usage: str) -> tuple[dict[str, str], str]:
    """``--flag`` and ``--window N`` options before the one target."""
    words = text.split()
    options: dict[str, str] = {}
    while words and words[0].startswith("--"):
        word = words.pop(0)
        if word not in flags:
            raise CommandError(f"unknown option '{word}'", f"usage: {usage}")
        if word == "--window":
            if not words:
                raise CommandError("--window takes a number of changes", f"usage: {usage}")
            options[word] = words.pop(0)
        else:
            options[word] = ""
    if len(words) != 1:
        raise CommandError(f"usage: {usage}")
    return options, words[0]


def _window(options: dict[str, str]) -> int:
    text = options.get("--window", str(DEFAULT_WINDOW))
    try:
        window = int(text)
    except ValueError:
        raise CommandError(f"--window takes a number of changes, got '{text}'") from None
    if window < 2:
        raise CommandError(f"--window takes a number of changes >= 2, got {window}")
    return window


def _properties(path: str, obj: Object, prop: str | None) -> list[PropertyMeta]:
    """The dynamic properties a stream follows (all of them when ``prop`` is None)."""
    if obj.bus is None:
        raise CommandError(f"{path} is on no bus: it has no change log")
    if prop is None:
        chosen = [p for p in obj.META.all_properties if p.dynamic]
        if not chosen:
            raise CommandError(f"{path} has no properties that change")
        return chosen
    meta = obj.META.property(prop)
    if meta is None:
        hint = did_you_mean(prop, (p.stl_name for p in obj.META.all_properties))
        raise CommandError(f"property '{prop}' not found in {path}{hint}")
    if not meta.dynamic:
        raise CommandError(f"property '{prop}' of {path} is static: it never changes")
    return [meta]


def _stream(
    console: Console, kind: str, target: str, window: int, as_csv: bool = False
) -> Generator[Wait, None, Stream]:
    obj, prop = yield from console.target(target)
    path = console.sources.path_of(obj)
    if as_csv and prop is None:
        raise CommandError("echo --csv takes one property: <obj>.<property>")
    props = _properties(path, obj, prop)
    streams = console.streams
    if streams.active(kind, obj, prop):
        raise CommandError(f"already {kind} {path}{'.' + prop if prop else ''}")
    stream = Stream(kind, obj, path, prop, window)
    streams.start(stream, props, as_csv)
    return stream


ECHO_USAGE = "echo [--csv] <obj>[.<property>]"
HZ_USAGE = "hz [--window N] <obj>[.<property>]"
BW_USAGE = "bw [--window N] <obj>[.<property>]"


def echo(console: Console, text: str) -> Steps:
    """``echo [--csv] <obj>[.<property>]``."""
    options, target = _options(text, ("--csv",), ECHO_USAGE)
    as_csv = "--csv" in options
    stream = yield from _stream(console, "echo", target, DEFAULT_WINDOW, as_csv)
    if as_csv:
        console.say("time,value")  # a header, and no other line, for what reads the CSV
    else:
        console.say(f"echoing {stream.target}")


def hz(console: Console, text: str) -> Steps:
    """``hz [--window N] <obj>[.<property>]``."""
    options, target = _options(text, ("--window",), HZ_USAGE)
    stream = yield from _stream(console, "hz", target, _window(options))
    console.say(f"measuring the rate of {stream.target}")


def bw(console: Console, text: str) -> Steps:
    """``bw [--window N] <obj>[.<property>]``."""
    options, target = _options(text, ("--window",), BW_USAGE)
    stream = yield from _stream(console, "bw", target, _window(options))
    console.say(f"measuring the bandwidth of {stream.target}")


def stopper(kind: str) -> Callable[[Console, str], Steps]:
    """``unecho`` / ``unhz`` / ``unbw`` [<obj>[.<property>]]: without a target, all of them."""

    def stop(console: Console, text: str) -> Steps:
        obj, member = (yield from console.target(text)) if text else (None, None)
        if console.streams.stop(kind, obj, member) == 0:
            raise CommandError(f"no {kind} of {text or 'anything'} in progress")
        console.say(f"stopped {kind} of {text or 'all'}")

    return stop
