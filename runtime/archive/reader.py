"""Reading an archive: its summary, its records in time order, the state of everything at a time.

Records stream chunk by chunk: only the chunks whose times overlap are held together (one, when
the recorder wrote in time order), so reading is bounded by the chunk size, not the file size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any

import msgspec

from sengen.runtime.archive import index as _index
from sengen.runtime.archive import layout
from sengen.runtime.archive.index import ChunkRef, Message
from sengen.runtime.archive.layout import ArchiveError

if TYPE_CHECKING:
    from sengen.runtime.objects.meta import ClassMeta

_decode = msgspec.json.Decoder().decode
_CHUNKS_KEPT = 8


@dataclass(frozen=True, slots=True)
class Record:
    """One recorded fact.

    ``kind`` is ``"added"`` (``values``: the full state), ``"state"`` (the properties one commit
    changed; the full state in :meth:`ArchiveReader.state_at`), ``"event"`` (``event`` names it,
    ``values`` are its arguments) or ``"removed"`` (no values). ``values`` are JSON values by STL
    name, as the shell writes them.
    """

    kind: str
    time_ns: int
    address: str
    class_name: str
    values: Mapping[str, Any] = field(default_factory=dict)
    event: str | None = None


@dataclass(frozen=True, slots=True)
class ArchiveInfo:
    """What ``sengen record info`` prints: from the summary only."""

    path: str
    name: str
    selections: tuple[str, ...]
    start_ns: int
    end_ns: int
    classes: tuple[str, ...]
    objects: tuple[str, ...]
    counts: Mapping[str, int]
    size: int
    compression: str
    keyframe_period_ns: int
    cut_short: bool

    @property
    def duration_ns(self) -> int:
        return self.end_ns - self.start_ns


@dataclass(frozen=True, slots=True)
class _Channel:
    kind: str
    address: str
    class_name: str
    event: str | None


class ArchiveReader:
    """An archive opened for reading; close it (or use ``with``) to release the file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._stream = _index.open_file(self.path)
        try:
            self._index = _index.build(self.path, self._stream)
            schemas = self._index.schemas
            self._channels = {
                cid: _Channel(
                    channel.metadata.get("sengen.kind", ""),
                    channel.metadata.get("address", channel.topic),
                    channel.metadata.get("class")
                    or (schema.name if (schema := schemas.get(channel.schema_id)) else ""),
                    channel.metadata.get("event"),
                )
                for cid, channel in self._index.channels.items()
            }
        except BaseException:
            self._stream.close()
            raise
        self._descriptions: dict[str, bytes] = {}
        self._info: dict[str, str] = {}
        for metadata in self._index.metadata:
            if metadata.name == layout.TYPE_METADATA:
                found = metadata.metadata
                self._descriptions.setdefault(found["class"], found["description"].encode())
            elif metadata.name == layout.INFO_METADATA and not self._info:
                self._info = dict(metadata.metadata)
        self._types: dict[str, ClassMeta] | None = None
        self._chunks: dict[int, bytes] = {}
        # Properties per class of a state channel, by channel and by schema.
        self._counts: dict[int, int] = {}
        self._schema_counts: dict[int, int] = {}

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- summary ----------------------------------------------------------------------------

    @property
    def start_ns(self) -> int:
        return self._index.start

    @property
    def end_ns(self) -> int:
        return self._index.end

    @property
    def cut_short(self) -> bool:
        return self._index.cut_short

    def info(self) -> ArchiveInfo:
        counts = dict.fromkeys(layout.KINDS, 0)
        for cid, count in self._index.counts.items():
            channel = self._channels.get(cid)
            if channel is not None and channel.kind in counts:
                counts[channel.kind] += count
        # An addition's full state is a message on the state channel too: not a change.
        counts[layout.STATE] -= counts[layout.ADDED]
        objects = sorted({c.address for c in self._channels.values() if c.kind == layout.STATE})
        try:
            selections = tuple(json.loads(self._info.get("selections", "[]")))
            period = int(self._info.get("keyframe_period_ns", "0"))
        except ValueError:
            raise ArchiveError(f"{self.path}: damaged archive (its sengen metadata)") from None
        return ArchiveInfo(
            path=str(self.path),
            name=self._info.get("name", ""),
            selections=selections,
            start_ns=self._index.start,
            end_ns=self._index.end,
            classes=tuple(sorted(self._descriptions)),
            objects=tuple(objects),
            counts=MappingProxyType(counts),
            size=self._index.size,
            compression=", ".join(sorted(self._index.compressions)) or "none",
            keyframe_period_ns=period,
            cut_short=self._index.cut_short,
        )

    @property
    def descriptions(self) -> Mapping[str, bytes]:
        """The STL type description of every recorded class, as the transport sends them."""
        return MappingProxyType(self._descriptions)

    @property
    def types(self) -> Mapping[str, ClassMeta]:
        """Every recorded class, built from its description (scope ``<remote>``, stand-in value
        classes): what :func:`sengen.runtime.objects.describe.dynamic_proxy` takes."""
        # Loaded here: reading records and the summary needs none of the object layer.
        from sengen.runtime.objects.describe import DescriptionError, read

        if self._types is None:
            types = {}
            for name, description in self._descriptions.items():
                try:
                    types[name] = read(description)
                except DescriptionError as error:
                    raise ArchiveError(f"{self.path}: class {name}: {error}") from None
            self._types = types
        return MappingProxyType(self._types)

    def check_types(self, loaded: Callable[[str], ClassMeta | None]) -> None:
        """An :class:`ArchiveError` naming the first recorded class whose loaded STL differs;
        ``loaded`` finds a class by qualified name (None: not loaded, nothing to clash with)."""
        for name, meta in sorted(self.types.items()):
            current = loaded(name)
            if current is not None and current.type_hash != meta.type_hash:
                raise ArchiveError(
                    f"{self.path}: class {name} was recorded with another definition than the "
                    "loaded STL's"
                )

    # -- records ----------------------------------------------------------------------------

    def records(
        self,
        start_ns: int | None = None,
        end_ns: int | None = None,
        objects: Collection[str] | None = None,
    ) -> Iterator[Record]:
        """The records with ``start_ns <= time_ns <= end_ns`` (of ``objects``, by address), in
        time order (ties in the order they were written)."""
        wanted = None if objects is None else frozenset(objects)
        pending: dict[str, str] = {}  # additions waiting for their full state
        for time, channel_id, data in self._messages(start_ns, end_ns):
            channel = self._channels.get(channel_id)
            if channel is None or channel.kind == layout.KEYFRAME:
                continue
            if channel.kind in (layout.ADDED, layout.REMOVED):
                body = self._decode(data, time)
                address = body.get("address")
                if not isinstance(address, str) or (wanted is not None and address not in wanted):
                    continue
                if channel.kind == layout.ADDED:
                    pending[address] = str(body.get("class", ""))
                else:
                    yield Record(layout.REMOVED, time, address, str(body.get("class", "")))
                continue
            if wanted is not None and channel.address not in wanted:
                continue
            values = self._decode(data, time)
            if channel.kind == layout.STATE:
                kind = layout.ADDED if pending.pop(channel.address, None) is not None else "state"
                yield Record(kind, time, channel.address, channel.class_name, values)
            elif channel.kind == layout.EVENT:
                yield Record(
                    layout.EVENT, time, channel.address, channel.class_name, values, channel.event
                )

    def _decode(self, data: bytes, time: int) -> dict[str, Any]:
        try:
            value = _decode(data)
        except msgspec.DecodeError:
            value = None
        if not isinstance(value, dict):
            raise ArchiveError(f"{self.path}: damaged message at {time} ns (not a JSON object)")
        return value

    def _messages(self, start_ns: int | None, end_ns: int | None) -> Iterator[Message]:
        """Messages in time order: chunks whose times overlap are read and sorted together."""
        refs = [
            ref
            for ref in self._index.chunks
            if (start_ns is None or ref.end >= start_ns) and (end_ns is None or ref.start <= end_ns)
        ]
        refs.sort(key=lambda ref: (ref.start, ref.offset))
        group: list[ChunkRef] = []
        group_end = 0
        for ref in refs:
            if group and ref.start >= group_end:
                yield from self._group(group, start_ns, end_ns)
                group = []
            group.append(ref)
            group_end = ref.end if len(group) == 1 else max(group_end, ref.end)
        if group:
            yield from self._group(group, start_ns, end_ns)

    def _group(
        self, group: list[ChunkRef], start_ns: int | None, end_ns: int | None
    ) -> Iterator[Message]:
        found: list[Message] = []
        for ref in sorted(group, key=lambda ref: ref.offset):
            found.extend(self._chunk(ref))
        found.sort(key=itemgetter(0))  # stable: ties keep file order
        for message in found:
            if (start_ns is None or message[0] >= start_ns) and (
                end_ns is None or message[0] <= end_ns
            ):
                yield message

    def _chunk(self, ref: ChunkRef) -> list[Message]:
        return _index.messages(self._index, ref, self._data(ref))

    def _data(self, ref: ChunkRef) -> bytes:
        """A chunk's records, uncompressed; the last few are kept, as a seek reads the chunks
        from its keyframe on twice (looking back for the keyframe, then reading on from it)."""
        found = self._chunks.get(ref.offset)
        if found is None:
            found = _index.chunk_data(self._index, self._stream, ref)
            if len(self._chunks) >= _CHUNKS_KEPT:
                del self._chunks[next(iter(self._chunks))]
            self._chunks[ref.offset] = found
        return found

    # -- seeking ----------------------------------------------------------------------------

    def check_time(self, time_ns: int) -> None:
        """An :class:`ArchiveError` when ``time_ns`` is outside the archive's time range."""
        if not self._index.start <= time_ns <= self._index.end:
            raise ArchiveError(
                f"{self.path}: time {time_ns} ns is outside the archive "
                f"({self._index.start} .. {self._index.end} ns)"
            )

    def state_at(self, time_ns: int) -> dict[str, Record]:
        """The state of every object present at ``time_ns`` (after the records of that time), by
        address, each a ``"state"`` record with its full values and the time of its last
        change; read from the nearest keyframe before it."""
        self.check_time(time_ns)
        first, start, found = self._keyframe(time_ns)
        # address -> [time of the last change, class, values]: no record object is built before
        # the answer.
        state: dict[str, list[Any]] = {
            address: [start, entry["class"], entry["values"]] for address, entry in found.items()
        }
        channels = self._channels
        applied = {cid for cid, c in channels.items() if c.kind in (layout.STATE, layout.REMOVED)}
        # The keyframe starts its chunk, and the chunks after it follow in time: the records up
        # to the time are those of the chunks from the keyframe's on that start before it.
        wanted = _index.Columns([], [], [])
        for ref in self._index.chunks[first:]:
            if ref.start > time_ns:
                break
            _index.columns(self._index, ref, self._data(ref), wanted, applied, time_ns)
        return self._latest(wanted, state)

    def _latest(self, wanted: _index.Columns, state: dict[str, list[Any]]) -> dict[str, Record]:
        """``state`` (a keyframe's) after the ``wanted`` records. They are read backwards,
        decoding only each object's latest records up to a full state: in a dense recording
        most records of a keyframe period are superseded, and decoding is what a seek costs."""
        channels = self._channels
        latest: dict[str, list[Any]] = {}
        done: set[str] = set()  # complete in ``latest``, or removed
        times, ids, blobs = wanted.times, wanted.channels, wanted.data
        for at in range(len(times) - 1, -1, -1):
            channel = channels[ids[at]]
            address = channel.address
            if channel.kind == layout.REMOVED:
                address = str(self._decode(blobs[at], times[at]).get("address"))
                if address not in done:
                    done.add(address)
                    state.pop(address, None)
                continue
            if address in done:
                continue
            values = self._decode(blobs[at], times[at])
            entry = latest.get(address)
            if entry is None:
                entry = latest[address] = [times[at], channel.class_name, values]
            else:
                older = values
                older.update(entry[2])
                entry[2] = older
            if len(entry[2]) >= self._property_count(ids[at]):
                done.add(address)
        for address, entry in latest.items():
            base = state.get(address)
            if address not in done and base is not None:
                base[2].update(entry[2])
                entry[2] = base[2]
            state[address] = entry
        return {
            address: Record("state", time, address, class_name, values)
            for address, (time, class_name, values) in state.items()
        }

    def _property_count(self, channel_id: int) -> int:
        """How many properties the class of a state channel has: a state with as many is full."""
        found = self._counts.get(channel_id)
        if found is None:
            channel = self._index.channels[channel_id]
            found = self._schema_counts.get(channel.schema_id)  # one decode per class
            if found is None:
                schema = self._index.schemas.get(channel.schema_id)
                try:
                    found = len(_decode(schema.data).get("properties", {})) if schema else 0
                except (msgspec.DecodeError, AttributeError):
                    raise ArchiveError(f"{self.path}: damaged schema of {channel.topic}") from None
                found = self._schema_counts[channel.schema_id] = found or 1 << 30
            self._counts[channel_id] = found
        return found

    def _keyframe(self, time_ns: int) -> tuple[int, int, dict[str, Any]]:
        """The latest keyframe at or before ``time_ns``: the index of its chunk, its time and its
        objects (0, 0 and none before the first keyframe). The writer starts a chunk with each
        keyframe, so only the first message of each chunk, looking back, is read."""
        keyframes = {cid for cid, c in self._channels.items() if c.kind == layout.KEYFRAME}
        chunks = self._index.chunks
        for position in range(len(chunks) - 1, -1, -1):
            ref = chunks[position]
            if ref.start > time_ns:
                continue
            head = _index.first_message(self._index, self._stream, ref)
            if head is None:
                found = _index.messages(self._index, ref, self._data(ref), first=True)
                head = (found[0][0], found[0][1]) if found else None
            if head is not None and head[1] in keyframes:
                time, _, data = _index.messages(self._index, ref, self._data(ref), first=True)[0]
                objects = self._decode(data, time).get("objects")
                if not isinstance(objects, dict):
                    raise ArchiveError(f"{self.path}: damaged keyframe at {time} ns")
                return position, time, objects
        return 0, 0, {}
