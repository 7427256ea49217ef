"""The shipped ``recorder`` component (runtime.md §9.2): selected objects to MCAP archives.

Each configured recording has its selections, its archive and a control object (``Recording``,
named after it, on ``controlBus``) to start and stop it and read its statistics. Everything that
can be checked is checked with the configuration (the queries, the archive's folder), so a bad
recording is one line before anything starts; an archive that cannot be created at start-up fails
the recorder's ``load`` (exit 1), before any component runs. The kernel gives the recorder one
last drain after every other component has stopped, and unload writes that too and finishes the
archives.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, field_validator, model_validator

from sengen.runtime import Component, Duration
from sengen.runtime.archive import ArchiveError
from sengen.runtime.components.recorder.recording import Recording
from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.extension import (
    BusAddress,
    QueryError,
    fail,
    parse_query,
    writable_file_problem,
)

if TYPE_CHECKING:
    from sengen.runtime import RunApi


class RecorderError(SengenError, ValueError):
    """A recording that cannot start: its archive cannot be created."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


def _duration(value: object) -> Duration:
    if isinstance(value, Duration):
        return value
    if not isinstance(value, str):
        raise fail(f"invalid Duration '{value}' (expected e.g. '1 s')")
    try:
        found = Duration.parse(value)
    except SengenError as error:
        raise fail(str(error)) from None
    if found.ns <= 0:
        raise fail(f"invalid Duration '{value}' (must be greater than 0)")
    return found


_Duration = Annotated[Duration, PlainValidator(_duration)]


class RecordingConfig(_Strict):
    name: str = Field(min_length=1)
    file: str = Field(min_length=1)
    selections: list[str] = Field(min_length=1)
    auto_start: bool = Field(default=True, alias="autoStart")
    compression: Literal["zstd", "lz4", "none"] = "zstd"
    keyframe_period: _Duration = Field(default=Duration(10**9), alias="keyframePeriod")
    flush_period: _Duration = Field(default=Duration(10**9), alias="flushPeriod")
    chunk_size: int = Field(default=1 << 18, alias="chunkSize", gt=0)
    split_size: int | None = Field(default=None, alias="splitSize", gt=0)
    split_duration: _Duration | None = Field(default=None, alias="splitDuration")

    @field_validator("selections")
    @classmethod
    def _queries(cls, selections: list[str]) -> list[str]:
        for query in selections:
            try:
                parse_query(query)
            except QueryError as error:
                first = str(error).splitlines()[0]
                raise fail(f"invalid selection {query!r}: {first}") from None
        return selections

    @field_validator("file")
    @classmethod
    def _file(cls, file: str) -> str:
        problem = writable_file_problem(Path(file))
        if problem is not None:
            raise fail(f"cannot record to {file}: {problem}")
        return file


class RecorderConfig(_Strict):
    """The ``recorder`` entry's own keys."""

    freq_hz: float = Field(default=30.0, alias="freqHz", gt=0)
    control_bus: BusAddress = Field(default="local.kernel", alias="controlBus")
    recordings: list[RecordingConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> RecorderConfig:
        for key in ("name", "file"):
            seen: set[str] = set()
            for recording in self.recordings:
                value = getattr(recording, key)
                if value in seen:
                    raise fail(f"two recordings with the {key} {value!r}")
                seen.add(value)
        return self


class Recorder(Component):
    """Records the selected objects' committed changes and events to MCAP archives."""

    config_model = RecorderConfig
    drains_last = True

    def __init__(self, config: RecorderConfig) -> None:
        self.config = config
        self.period = Duration.from_hz(config.freq_hz)
        self.recordings: list[Recording] = []

    def load(self, api: RunApi) -> None:
        """Creates the archives of the recordings that start at once: one that cannot be
        created fails the start (exit 1), before any component runs."""
        for config in self.config.recordings:
            recording = Recording(config, api)
            self.recordings.append(recording)
            if config.auto_start:
                try:
                    recording.create(config.file)
                except ArchiveError as error:
                    self._close_all()
                    raise RecorderError(f"recording {config.name}: {error}") from None

    def run(self, api: RunApi) -> None:
        source = api.get_source(self.config.control_bus)
        for recording in self.recordings:
            if recording.writer is not None:
                recording.subscribe()
            recording.show()
            source.add(recording.control)
        api.exec_loop(self.period, self._cycle)

    def _cycle(self) -> None:
        for recording in self.recordings:
            recording.flush()
            recording.show()

    def _close_all(self) -> None:
        for recording in self.recordings:
            recording.stop()

    def unload(self, api: RunApi) -> None:
        self._close_all()
