"""The shipped ``replayer`` component: an archive's objects, live again.

It publishes the recorded objects as objects of their recorded classes (built from the archive's
type descriptions, :mod:`.classes`), on their buses or the ones ``busMap`` names, gives them their
recorded states at their recorded times and re-emits their events (:mod:`.player`), so that
subscribers, queries, the shell and recorders see them as any other objects. A ``Replay`` object
(``sen.kernel.Replay``) on the kernel's bus controls it: play, pause, stop, seek, advance, the
rate and looping.

Its cycle follows the kernel's time: under virtual time it is stepped like any component, with a
period that divides every recorded time (unless ``freqHz`` sets one), so that a replay of a
virtual-time recording commits at the very times the original did.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sengen.runtime import Component, Duration, Promise, TimeStamp, TimeValueError
from sengen.runtime.archive import ArchiveError, ArchiveReader
from sengen.runtime.components.replayer.player import PAUSED, PLAYING, STOPPED, Player, SeekError
from sengen.runtime.components.replayer.stage import ObjectStage, ReplayError
from sengen.runtime.kernel.extension import BusAddress, ReplayBase, ReplayState, fail

if TYPE_CHECKING:
    from sengen.runtime import RunApi

_log = logging.getLogger("sengen.replayer")

#: Under virtual time, the step is the largest that divides every recorded time, within these.
_FINEST, _COARSEST = 1_000_000, 100_000_000
_REAL_TIME_HZ = 100.0
_STATES = {STOPPED: ReplayState.stopped, PLAYING: ReplayState.playing, PAUSED: ReplayState.paused}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class ReplayerConfig(_Strict):
    """The ``replayer`` entry's own keys."""

    archive: str
    rate: float = Field(default=1.0, gt=0)
    loop: bool = False
    start: str | None = None  # a duration: the offset from the archive's start
    paused: bool = False
    bus_map: dict[BusAddress, BusAddress] = Field(default_factory=dict, alias="busMap")
    control_bus: BusAddress = Field(default="local.kernel", alias="controlBus")
    control_name: str = Field(default="replay", alias="controlName")
    freq_hz: float | None = Field(default=None, alias="freqHz", gt=0)
    exit_at_end: bool = Field(default=False, alias="exitAtEnd")
    exit_on_error: bool = Field(default=False, alias="exitOnError")

    @field_validator("start", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                Duration.parse(value)
            except TimeValueError as error:
                raise fail(str(error)) from None
        return value


def open_archive(path: str, start: str | None = None) -> tuple[ArchiveReader, int | None]:
    """The archive to replay, and the time to begin at (``start``: a duration into it); one
    line (:class:`ArchiveError`, :class:`ReplayError`, :class:`SeekError`) for an archive that
    cannot be read, holds nothing, or ends before ``start``."""
    reader = ArchiveReader(path)
    try:
        info = reader.info()
        if not any(info.counts.values()):
            cut = " (it was cut short before its first flush)" if info.cut_short else ""
            raise ReplayError(f"{path}: the archive holds no records{cut}")
        if start is None:
            return reader, None
        begin = reader.start_ns + Duration.parse(start).ns
        if begin > reader.end_ns:
            length = Duration(reader.end_ns - reader.start_ns)
            raise SeekError(f"{path}: start {start} is past the end of the archive ({length})")
    except BaseException:
        reader.close()
        raise
    return reader, begin


class ReplayControl(ReplayBase):
    """The ``Replay`` object: its calls run in the replayer's drain, on its thread. The calls
    that can be refused (a time outside the archive, a rate that is not positive, objects whose
    names are taken) are deferred, so that their error is the caller's answer and nothing more."""

    def __init__(self, name: str, replayer: Replayer) -> None:
        super().__init__(name)
        self.replayer = replayer

    def play_impl(self, promise: Promise[None]) -> None:
        self.replayer.control(promise, self.replayer.player.play)

    def pause_impl(self) -> None:
        self.replayer.player.pause()

    def stop_impl(self) -> None:
        self.replayer.player.stop()

    def seek_impl(self, time: TimeStamp, promise: Promise[None]) -> None:
        self.replayer.control(promise, lambda: self.replayer.player.seek(time.ns))

    def advance_impl(self, delta: Duration, promise: Promise[None]) -> None:
        self.replayer.control(promise, lambda: self.replayer.player.advance(delta.ns))

    def set_rate_impl(self, rate: float, promise: Promise[None]) -> None:
        self.replayer.control(promise, lambda: self.replayer.player.set_rate(rate))

    def set_loop_impl(self, loop: bool) -> None:
        self.replayer.player.loop = loop


class Replayer(Component):
    """Replays one archive (``archive``) onto the buses it was recorded on."""

    config_model = ReplayerConfig

    def __init__(self, config: ReplayerConfig) -> None:
        self.config = config
        # Opened here, so that a missing, foreign or damaged archive, or a start outside it, is
        # one line before anything starts.
        reader, self.begin_at = open_archive(config.archive, config.start)
        self.reader = reader
        self.stage = ObjectStage(reader.descriptions.get, config.bus_map)
        self.player = Player(reader, self.stage, reader.start_ns, reader.end_ns, config.rate)
        self.player.loop = config.loop
        self.control_object: ReplayControl | None = None
        self.api: RunApi | None = None
        self.failed = False
        self.stop_requested = False

    def run(self, api: RunApi) -> None:
        config, reader = self.config, self.reader
        self.stage.api = self.api = api
        control = self.control_object = ReplayControl(config.control_name, self)
        control.set_archive(str(config.archive))
        control.set_start_time(TimeStamp(reader.start_ns))
        control.set_end_time(TimeStamp(reader.end_ns))
        self._show()
        api.get_source(config.control_bus).add(control)
        try:
            self.player.begin(self.begin_at, config.paused)
        except (ReplayError, ArchiveError) as error:
            self._fail(api, error)
        self._show()
        # A late cycle replays everything that became due meanwhile: it loses nothing, so the
        # real-time loop's warnings about it would only be noise.
        api.exec_loop(self._period(api), lambda: self._cycle(api), log_overruns=False)

    def _cycle(self, api: RunApi) -> None:
        player = self.player
        if not self.failed:
            try:
                player.cycle(api.get_time().ns)
            except (ReplayError, ArchiveError) as error:
                self._fail(api, error)
        self._show()
        if player.ended and self.config.exit_at_end and not self.stop_requested:
            self.stop_requested = True
            api.request_kernel_stop(0)

    def control(self, promise: Promise[None], action: Callable[[], None]) -> None:
        """A call of the control object: its refusal is the caller's error; a replay that cannot
        publish its objects stops, as at start."""
        try:
            action()
        except SeekError as error:
            promise.set_exception(error)
        except (ReplayError, ArchiveError) as error:
            assert self.api is not None
            self._fail(self.api, error)
            promise.set_exception(error)
        else:
            self.failed = False  # a replay that could not go on goes on once it can
            promise.set_result(None)

    def _fail(self, api: RunApi, error: Exception) -> None:
        """A replay that cannot go on stops, with one line; the rest of the system runs on."""
        _log.error("replay of %s stopped: %s", self.config.archive, error)
        self.failed = True
        self.player.stop()
        if self.config.exit_on_error and not self.stop_requested:
            self.stop_requested = True
            api.request_kernel_stop(1)

    def _show(self) -> None:
        control, player = self.control_object, self.player
        if control is None:
            return
        control.set_next_state(_STATES[player.state])
        control.set_next_time(TimeStamp(player.position))
        control.set_next_rate(player.rate)
        control.set_next_loop(player.loop)

    def _period(self, api: RunApi) -> int:
        """The cycle: ``freqHz``; under virtual time the largest step that divides every
        recorded time (the records' own times are then cycle times), else 100 Hz."""
        if self.config.freq_hz is not None:
            return Duration.from_hz(self.config.freq_hz).ns
        if api.kernel_clock is None:
            return Duration.from_hz(_REAL_TIME_HZ).ns
        start, step = self.reader.start_ns, 0
        try:
            for record in self.reader.records():
                step = math.gcd(step, record.time_ns - start)
                if 0 < step < _FINEST:
                    return _FINEST
        except ArchiveError:
            pass  # damaged further on: the replay stops there, with the error, when it gets there
        return min(step, _COARSEST) if step else _COARSEST

    def unload(self, api: RunApi) -> None:
        self.reader.close()
