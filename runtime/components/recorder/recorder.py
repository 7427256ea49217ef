"""The shipped ``recorder`` component (runtime.md §9.2): every committed change to a file.

Its subscriptions use the change-log mode: the owner of each matched object queues one record
per commit (the changed properties), one per event, and the object's addition (full state) and
removal, into the recorder's work queue, where they are never dropped, in the order they
happened. Each cycle writes what its drain brought as one sorted batch; the
kernel gives the recorder one last drain after every other component has stopped, and unload
writes that too and closes the files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from sengen.runtime import Component, Duration
from sengen.runtime.components.recorder.recording import Record, RecordingWriter
from sengen.runtime.kernel.extension import ClassMeta, Log, LogRecord, Owner, Subscription, values

if TYPE_CHECKING:
    from sengen.runtime import RunApi


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class RecordingConfig(_Strict):
    name: str
    file: str
    selections: list[str] = Field(min_length=1)
    auto_start: bool = Field(default=True, alias="autoStart")


class RecorderConfig(_Strict):
    """The ``recorder`` entry's own keys."""

    freq_hz: float = Field(default=30.0, alias="freqHz", gt=0)
    recordings: list[RecordingConfig] = Field(default_factory=list)


class Recording:
    """One file and the selections that feed it."""

    def __init__(self, config: RecordingConfig) -> None:
        self.config = config
        self.writer: RecordingWriter | None = None
        self.subscriptions: list[Subscription] = []
        self.pending: list[Record] = []
        self._sequence = 0
        # The selection that records an object: one object matched by two selections is
        # recorded once.
        self._holder: dict[Owner, int] = {}

    def start(self, api: RunApi) -> None:
        self.writer = RecordingWriter(Path(self.config.file), self.config.selections)
        for index, query in enumerate(self.config.selections):
            subscription = api.select(query, log=self._logger(index))
            self.subscriptions.append(subscription)

    def _logger(self, index: int) -> Log:
        def logged(records: list[LogRecord]) -> None:
            for record in records:
                self._logged(index, record)

        return logged

    def _logged(self, index: int, record: LogRecord) -> None:
        kind, time, obj, class_name, found = record
        holder = self._holder.get(obj)
        if kind == "add":
            if holder is not None:
                return
            self._holder[obj] = index
            state = _json_values(obj.META, found)
            self._add(time, kind, obj, {"class": class_name, "state": state})
        elif holder == index:
            if kind == "set":
                self._add(time, kind, obj, {"values": _json_values(obj.META, found)})
            elif kind == "event":
                meta = obj.META.event(class_name)
                assert meta is not None
                types = {a.stl_name: a.type for a in meta.args}
                named = {k: values.to_config(types[k], v) for k, v in found.items()}
                self._add(time, kind, obj, {"event": class_name, "args": named})
            else:
                del self._holder[obj]
                self._add(time, kind, obj, {})

    def _add(self, time: int, kind: str, obj: Owner, data: dict[str, Any]) -> None:
        self._sequence += 1
        bus = obj.bus or ""
        self.pending.append(Record(time, kind, bus, obj.name, self._sequence, data))

    def flush(self) -> None:
        if self.writer is not None and self.pending:
            batch, self.pending = self.pending, []
            self.writer.write_batch(batch)
            self.writer.flush()

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            self.writer.close()


def _json_values(meta: ClassMeta, found: dict[str, Any]) -> dict[str, Any]:
    result = {}
    for name, value in found.items():
        prop = meta.property(name)
        assert prop is not None
        result[name] = values.to_config(prop.type, value)
    return result


class Recorder(Component):
    """Records the selected objects' committed changes and events to JSON Lines files."""

    config_model = RecorderConfig
    drains_last = True

    def __init__(self, config: RecorderConfig) -> None:
        self.period = Duration.from_hz(config.freq_hz)
        self.recordings = [Recording(c) for c in config.recordings]

    def run(self, api: RunApi) -> None:
        for recording in self.recordings:
            if recording.config.auto_start:
                recording.start(api)
        api.exec_loop(self.period, self._flush)

    def _flush(self) -> None:
        for recording in self.recordings:
            recording.flush()

    def unload(self, api: RunApi) -> None:
        for recording in self.recordings:
            recording.close()
