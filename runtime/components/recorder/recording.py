"""One recording of the recorder (runtime.md §9.2): its selections, its archive, its control
object.

Its subscriptions use the change-log mode: the owner of each matched object queues one record per
commit (the changed properties), one per event, and the object's addition (full state) and
removal, into the recorder's work queue, where they are never dropped, in the order they
happened. Each recorder cycle writes what its drain brought as one batch sorted by (time, address,
kind, arrival), so that a virtual-time run gives byte-identical archives. A failing archive (a full
disk) stops this recording with one ERROR line; the recorder and the rest of the system go on.
"""

from __future__ import annotations

import contextlib
import logging
import time as time_module
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sengen.runtime.archive import ArchiveError, ArchiveWriter
from sengen.runtime.kernel.extension import (
    ClassMeta,
    Log,
    LogRecord,
    NativeMeta,
    Owner,
    QuantityMeta,
    RecordingBase,
    RecordingState,
    Subscription,
    TypeMeta,
    json_form,
    resolve_alias,
)

if TYPE_CHECKING:
    from sengen.runtime import RunApi
    from sengen.runtime.components.recorder.recorder import RecordingConfig

_log = logging.getLogger("sengen.component.recorder")

#: Sort order of the kinds of one object at one time.
_KIND_ORDER = {"add": 0, "set": 1, "event": 2, "remove": 3}
# A pending record is (time, address, kind order, arrival, data): sorted as it is, as no two
# have the same arrival (the data is never compared).

Convert = Callable[[Any], Any]
# Natives whose Python value is already its JSON form (f32 is not: it is written shortest).
_AS_IS = {"bool", "string", "u8", "u16", "u32", "u64", "i16", "i32", "i64", "f64"}


def _converter(meta: TypeMeta) -> Convert | None:
    """How a value of ``meta`` becomes JSON as the shell writes it; None: it already is."""
    resolved = resolve_alias(meta)
    if isinstance(resolved, QuantityMeta):
        resolved = resolved.value_type
    if isinstance(resolved, NativeMeta) and resolved.qualified_name in _AS_IS:
        return None
    return lambda value: json_form(meta, value)


# Per class, the converter of each property; None when every value is its own JSON form.
_CONVERTERS: dict[ClassMeta, dict[str, Convert | None] | None] = {}


def _json_values(meta: ClassMeta, found: dict[str, Any]) -> dict[str, Any]:
    try:
        converters = _CONVERTERS[meta]
    except KeyError:
        found_converters = {p.stl_name: _converter(p.type) for p in meta.all_properties}
        as_is = all(c is None for c in found_converters.values())
        converters = _CONVERTERS[meta] = None if as_is else found_converters
    if converters is None:
        return found  # a fresh dict per record from the owner: kept as it is
    result = {}
    for name, value in found.items():
        convert = converters[name]
        result[name] = value if convert is None else convert(value)
    return result


def _json_args(meta: ClassMeta, event: str, found: dict[str, Any]) -> dict[str, Any]:
    event_meta = meta.event(event)
    assert event_meta is not None
    types = {a.stl_name: a.type for a in event_meta.args}
    return {name: json_form(types[name], value) for name, value in found.items()}


def address_of(obj: Owner) -> str:
    """``session/bus/object``: an object's address as an archive topic."""
    session, _, bus = (obj.bus or "").partition(".")
    return f"{session}/{bus}/{obj.name}"


class RecordingControl(RecordingBase):
    """The ``Recording`` object: its calls run in the recorder's drain, on its thread."""

    def __init__(self, recording: Recording) -> None:
        super().__init__(recording.config.name)
        self.recording = recording

    def start_impl(self, name: str) -> None:
        self.recording.start(name or self.recording.config.file)

    def stop_impl(self) -> None:
        self.recording.stop()


class Recording:
    """One archive at a time and the selections that feed it."""

    def __init__(self, config: RecordingConfig, api: RunApi) -> None:
        self.config = config
        self.api = api
        self.virtual = api.kernel_clock is not None
        self.writer: ArchiveWriter | None = None
        self.subscriptions: list[Subscription] = []
        self.pending: list[tuple[Any, ...]] = []
        self.file = config.file
        self.error = ""
        self.drops = 0
        #: Records and bytes of the archive being (or last) written.
        self.written = (0, 0)
        self._sequence = 0
        self._last_flush: int | None = None
        # The selection that records an object, and its address: one object matched by two
        # selections is recorded once.
        self._holder: dict[Owner, tuple[int, str]] = {}
        self.control = RecordingControl(self)
        self.control.set_next_file(self.file)

    @property
    def state(self) -> RecordingState:
        if self.writer is not None:
            return RecordingState.recording
        return RecordingState.failed if self.error else RecordingState.idle

    # -- start and stop ----------------------------------------------------------------------

    def create(self, file: str) -> None:
        """Creates the archive; an :class:`ArchiveError` (one line) when it cannot be written."""
        config = self.config
        self.writer = ArchiveWriter(
            file,
            name=config.name,
            selections=config.selections,
            compression=config.compression,
            keyframe_period_ns=config.keyframe_period.ns,
            chunk_bytes=config.chunk_size,
            split_bytes=config.split_size,
            split_ns=config.split_duration.ns if config.split_duration is not None else None,
        )
        self.file, self.error, self.written = file, "", (0, 0)
        self._holder.clear()
        self._last_flush = None

    def subscribe(self) -> None:
        """Opens the selections: every matched object arrives with its full state."""
        for index, query in enumerate(self.config.selections):
            self.subscriptions.append(self.api.select(query, log=self._logger(index)))

    def start(self, file: str) -> None:
        """``start(name)`` of the control object: a new archive, unless already recording."""
        if self.writer is not None:
            _log.warning("recording %s already writes %s", self.config.name, self.file)
            return
        try:
            self.create(file)
        except ArchiveError as error:
            self._fail(str(error))
        else:
            self.subscribe()
        self.show()

    def stop(self) -> None:
        """Writes what is pending, finishes the archive and stops listening."""
        self.flush(final=True)
        self._unsubscribe()
        writer, self.writer = self.writer, None
        if writer is not None:
            try:
                writer.close()
            except ArchiveError as error:
                self._fail(str(error))
            self.written = (writer.records, writer.bytes_written)
        self.show()

    def _unsubscribe(self) -> None:
        for subscription in self.subscriptions:
            subscription.close()
        self.subscriptions.clear()

    def _fail(self, problem: str) -> None:
        """Stops this recording after a write failure: one ERROR line, the rest goes on."""
        _log.error("recording %s stopped: %s", self.config.name, problem)
        self.error = problem
        self.drops += len(self.pending)
        self.pending.clear()
        self._unsubscribe()
        writer, self.writer = self.writer, None
        if writer is not None:
            # Already reported: the first failure is the one that matters.
            with contextlib.suppress(ArchiveError):
                writer.close()

    # -- records -----------------------------------------------------------------------------

    def _logger(self, index: int) -> Log:
        def logged(records: list[LogRecord]) -> None:
            for record in records:
                self._logged(index, record)

        return logged

    def _logged(self, index: int, record: LogRecord) -> None:
        if self.writer is None:
            return
        kind, time, obj, name, found = record
        holder = self._holder.get(obj)
        if kind == "add":
            if holder is not None:
                return
            self._holder[obj] = (index, address_of(obj))
            data: Any = (obj.META, _json_values(obj.META, found))
        elif holder is None or holder[0] != index:
            return
        elif kind == "set":
            data = _json_values(obj.META, found)
        elif kind == "event":
            data = (name, _json_args(obj.META, name, found))
        else:
            del self._holder[obj]
            data = None
        self._sequence += 1
        address = holder[1] if holder is not None else self._holder[obj][1]
        self.pending.append((time, address, _KIND_ORDER[kind], self._sequence, data))

    def flush(self, final: bool = False) -> None:
        """Writes the batch of this cycle; every ``flushPeriod``, and at the end, the chunk in
        progress goes to the file too (under virtual time the period is of record time, not of
        the wall clock, so that chunks, and so the bytes, are the same on every run)."""
        writer = self.writer
        if writer is None:
            return
        batch, self.pending = self.pending, []
        batch.sort()
        try:
            for time, address, kind, _, data in batch:
                if kind == 0:
                    writer.added(time, address, data[0], data[1])
                elif kind == 1:
                    writer.changed(time, address, data)
                elif kind == 2:
                    writer.event(time, address, data[0], data[1])
                else:
                    writer.removed(time, address)
            # Under virtual time, record time; under real time, the wall clock (a quiet system
            # still gets its last records to disk).
            now = batch[-1][0] if self.virtual and batch else None
            if not self.virtual:
                now = time_module.monotonic_ns()
            if now is not None:
                if self._last_flush is None:
                    self._last_flush = now
                elif now - self._last_flush >= self.config.flush_period.ns:
                    writer.flush()
                    self._last_flush = now
            if final:
                writer.flush()
        except ArchiveError as error:
            self.drops += len(batch)
            self._fail(str(error))

    def show(self) -> None:
        """The control object's properties, committed with the recorder's cycle."""
        control, writer = self.control, self.writer
        control.set_next_file(self.file)
        control.set_next_state(self.state)
        control.set_next_error(self.error)
        control.set_next_drops(self.drops)
        control.set_next_objects(len(self._holder) if writer is not None else 0)
        if writer is not None:
            self.written = (writer.records, writer.bytes_written)
        control.set_next_records(self.written[0])
        control.set_next_bytes(self.written[1])
