"""The shipped ``recorder`` component (runtime.md §9.2): every committed change to a file.

Its subscriptions use the change-log mode: the owner of each matched object queues one record
per commit (the changed properties), plus the object's addition (full state) and removal, into
the recorder's work queue, where they are never dropped; events arrive through event
connections on the proxies. Each cycle writes what its drain brought as one sorted batch; the
kernel gives the recorder one last drain after every other component has stopped, and unload
writes that too and closes the files.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from sengen.runtime import values
from sengen.runtime.component import Component
from sengen.runtime.discovery import LogRecord, Subscription
from sengen.runtime.duration import Duration
from sengen.runtime.events import Connection, EventInfo
from sengen.runtime.meta import ClassMeta, EventMeta
from sengen.runtime.objects import NativeObject, Object

from sengen.recording import Record, RecordingWriter

if TYPE_CHECKING:
    from sengen.runtime.runner import RunApi


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
        # recorded once, and its events are heard through one set of connections.
        self._holder: dict[NativeObject, int] = {}
        self._listening: dict[Object, tuple[list[Connection], int]] = {}

    def start(self, api: RunApi) -> None:
        self.writer = RecordingWriter(Path(self.config.file), self.config.selections)
        for index, query in enumerate(self.config.selections):
            subscription = api.select(query, self._added, self._removed, log=self._logger(index))
            self.subscriptions.append(subscription)

    def _logger(self, index: int) -> Callable[[LogRecord], None]:
        return lambda record: self._logged(index, record)

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
            else:
                del self._holder[obj]
                self._add(time, kind, obj, {})

    def _added(self, views: list[Object]) -> None:
        for view in views:
            held = self._listening.get(view)
            if held is not None:
                self._listening[view] = (held[0], held[1] + 1)
                continue
            connections = []
            for meta in view.META.all_events:
                connection = view._connect_event(meta, self._event_logger(view, meta), True)
                connection.droppable = False  # a recording misses nothing in-process
                connections.append(connection)
            self._listening[view] = (connections, 1)

    def _removed(self, views: list[Object]) -> None:
        """An object that stops matching (or leaves) is no longer heard."""
        for view in views:
            connections, count = self._listening.pop(view, ([], 0))
            if count > 1:
                self._listening[view] = (connections, count - 1)
                continue
            for connection in connections:
                connection.close()

    def _event_logger(self, view: Object, meta: EventMeta) -> Callable[..., None]:
        def record(info: EventInfo, *args: Any) -> None:
            pairs = zip(meta.args, args, strict=True)
            named = {a.stl_name: values.to_config(a.type, v) for a, v in pairs}
            self._add(info.creation_time, "event", view, {"event": meta.stl_name, "args": named})

        return record

    def _add(self, time: int, kind: str, obj: Object, data: dict[str, Any]) -> None:
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
