"""Where a replay stands in its archive, and which records it replays when.

The player knows nothing of the kernel: each cycle the replayer gives it the kernel time, and it
hands the records that became due to a :class:`Stage`, which owns the objects. While it plays, the
archive time follows the kernel time from an anchor (the kernel time and archive time at which
playing last started, or the rate last changed), scaled by the rate; under virtual time that
clock is the stepped one, so a replay is deterministic.

Records of one time keep their order. An addition carries the object's full state when it was
published. Objects added at the archive's start are published before the first cycle, as a
component publishes its objects before its loop, and the changes recorded at that time come in
the first cycle: a recording of the replay then holds the same additions and changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from sengen.runtime.errors import SengenError

__all__ = ["Archive", "Player", "Record", "SeekError", "Stage"]

STOPPED, PLAYING, PAUSED = "stopped", "playing", "paused"


class SeekError(SengenError, ValueError):
    """A time outside the archive, or a rate that is not a positive number."""


class Record(Protocol):
    """One archive record (:class:`sengen.runtime.archive.Record`)."""

    @property
    def kind(self) -> str: ...
    @property
    def time_ns(self) -> int: ...
    @property
    def address(self) -> str: ...
    @property
    def class_name(self) -> str: ...
    @property
    def values(self) -> Mapping[str, Any]: ...
    @property
    def event(self) -> str | None: ...


class Archive(Protocol):
    """What the player reads of an archive (:class:`sengen.runtime.archive.ArchiveReader`)."""

    def records(self, start_ns: int | None = None) -> Iterator[Record]: ...

    def state_at(self, time_ns: int) -> Mapping[str, Record]: ...


class Stage(Protocol):
    """The replayed objects, by address; additions are published by :meth:`publish`."""

    def create(self, address: str, class_name: str) -> None: ...
    def load(self, address: str, values: Mapping[str, Any]) -> None: ...
    def emit(self, address: str, event: str, values: Mapping[str, Any]) -> None: ...
    def remove(self, address: str) -> None: ...
    def publish(self) -> None: ...
    def classes(self) -> Mapping[str, str]: ...


class Player:
    """The replay's position, state and rate, and the records still to replay."""

    def __init__(
        self, archive: Archive, stage: Stage, start_ns: int, end_ns: int, rate: float = 1.0
    ) -> None:
        self.archive = archive
        self.stage = stage
        self.start_ns, self.end_ns = start_ns, end_ns
        self.state = STOPPED
        self.rate = check_rate(rate)
        self.loop = False
        self.position = start_ns  # every record up to here is replayed
        self.ended = False  # came to the end without looping
        self._anchor: tuple[int, int] | None = None  # (kernel time, archive time)
        self._records: Iterator[Record] = iter(())
        self._held: list[Record] = []  # records of the current time still to replay

    # -- control ---------------------------------------------------------------------------------

    def begin(self, at_ns: int | None = None, paused: bool = False) -> None:
        """Publish the objects of ``at_ns`` (the start by default), then play unless ``paused``."""
        if at_ns is None or at_ns == self.start_ns:
            self._open_at_start()
        else:
            self._jump(self.check_time(at_ns))
        self.stage.publish()
        self.state = PAUSED if paused else PLAYING
        self._anchor = None
        self.ended = False

    def play(self) -> None:
        if self.state == STOPPED:
            self.begin()
        elif self.ended:  # at the end: from the beginning again
            self._jump(self.start_ns)
            self.stage.publish()
        self.state = PLAYING
        self._anchor = None
        self.ended = False

    def pause(self) -> None:
        if self.state == PLAYING:
            self.state = PAUSED

    def stop(self) -> None:
        for address in list(self.stage.classes()):
            self.stage.remove(address)
        self.state = STOPPED
        self.position = self.start_ns
        self._records, self._held = iter(()), []

    def seek(self, time_ns: int) -> None:
        """Every object takes its state at ``time_ns``; playing goes on from there."""
        self._jump(self.check_time(time_ns))
        self.stage.publish()
        self._anchor = None
        self.ended = False
        if self.state == STOPPED:
            self.state = PAUSED

    def advance(self, delta_ns: int) -> None:
        """Replay ``delta_ns`` of the archive at once, then stay paused."""
        if delta_ns < 0:
            raise SeekError("advance: the duration cannot be negative")
        if self.state == STOPPED:
            self.begin(paused=True)
        self._replay_until(min(self.position + delta_ns, self.end_ns))
        self.state = PAUSED
        self._anchor = None

    def set_rate(self, rate: float) -> None:
        self.rate = check_rate(rate)
        self._anchor = None  # the new rate counts from now

    def check_time(self, time_ns: int) -> int:
        if not self.start_ns <= time_ns <= self.end_ns:
            raise SeekError(
                f"time {time_ns} ns is outside the archive, which runs from {self.start_ns}"
                f" to {self.end_ns} ns"
            )
        return time_ns

    # -- the cycle -------------------------------------------------------------------------------

    def cycle(self, kernel_ns: int) -> None:
        """Replay what became due by kernel time ``kernel_ns``."""
        if self.state != PLAYING:
            return
        if self._anchor is None:
            self._anchor = (kernel_ns, self.position)
        since, origin = kernel_ns - self._anchor[0], self._anchor[1]
        elapsed = since if self.rate == 1.0 else int(since * self.rate)
        target = origin + elapsed
        if target < self.end_ns:
            self._replay_until(target)
            return
        self._replay_until(self.end_ns)
        if self.loop:
            self._jump(self.start_ns)
            self.stage.publish()
            self._anchor = (kernel_ns, self.start_ns)
        else:
            self.state = PAUSED
            self.ended = True

    # -- records ---------------------------------------------------------------------------------

    def _open_at_start(self) -> None:
        """The additions of the start time go out before the first cycle; the start time's
        other records wait for it."""
        self._records = self.archive.records(start_ns=self.start_ns)
        self._held = []
        for record in self._records:
            if record.time_ns > self.start_ns:
                self._held.append(record)
                break
            if record.kind == "added":
                self._apply(record)
            else:
                self._held.append(record)
        self.position = self.start_ns

    def _jump(self, time_ns: int) -> None:
        """Every object as it was at ``time_ns``; the records after it are next."""
        wanted = self.archive.state_at(time_ns)
        stage = self.stage
        for address, class_name in list(stage.classes().items()):
            found = wanted.get(address)
            if found is None or found.class_name != class_name:
                stage.remove(address)
        present = stage.classes()
        for address, record in wanted.items():
            if address not in present:
                stage.create(address, record.class_name)
            stage.load(address, record.values)
        self._records = (r for r in self.archive.records(start_ns=time_ns) if r.time_ns > time_ns)
        self._held = []
        self.position = time_ns

    def _replay_until(self, target: int) -> None:
        """Every record up to ``target``, then the additions among them are published."""
        while True:
            if self._held:
                record = self._held[0]
                if record.time_ns > target:
                    break
                self._held.pop(0)
            else:
                found = next(self._records, None)
                if found is None:
                    break
                if found.time_ns > target:
                    self._held.append(found)
                    break
                record = found
            self._apply(record)
        self.stage.publish()
        self.position = max(self.position, target)

    def _apply(self, record: Record) -> None:
        stage, address, kind = self.stage, record.address, record.kind
        if kind == "added":
            stage.create(address, record.class_name)
            stage.load(address, record.values)
        elif kind == "state":
            stage.load(address, record.values)
        elif kind == "event":
            stage.emit(address, record.event or "", record.values)
        elif kind == "removed":
            stage.remove(address)


def check_rate(rate: float) -> float:
    if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
        raise SeekError(f"invalid rate {rate!r}: a replay's rate is a number greater than 0")
    return float(rate)
