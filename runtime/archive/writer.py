"""Writing an archive (runtime.md §9.2): records in, MCAP out (the layout is in :mod:`.layout`).

The writer is fed in time order (the recorder sorts each cycle's records) and keeps the current
state of every recorded object, which it writes as a keyframe whenever a record crosses a multiple
of the keyframe period. Nothing in the file depends on the wall clock or on the machine, so equal
input gives byte-identical files. Every failure of the file system (a bad path, a full disk) is an
:class:`ArchiveError` with one line naming the file.
"""

from __future__ import annotations

import contextlib
import json
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from sengen.runtime.archive import layout
from sengen.runtime.archive.layout import ArchiveError
from sengen.runtime.archive.mcapfile import McapFile
from sengen.runtime.archive.schema import class_schema, event_schema
from sengen.runtime.objects.meta import ClassMeta

_encode = msgspec.json.Encoder().encode


def part_path(path: Path, part: int) -> Path:
    """The file of split part ``part`` (0 is ``path`` itself, then ``name-001.mcap``, ...)."""
    return path if part == 0 else path.with_name(f"{path.stem}-{part:03d}{path.suffix}")


def _problem(error: OSError) -> str:
    return error.strerror or str(error)


class ArchiveWriter:
    """One recording's archive, possibly split into parts by size or duration."""

    def __init__(
        self,
        path: Path | str,
        *,
        name: str,
        selections: Sequence[str],
        compression: str = "zstd",
        keyframe_period_ns: int = 1_000_000_000,
        chunk_bytes: int = 1 << 18,
        split_bytes: int | None = None,
        split_ns: int | None = None,
    ) -> None:
        if compression not in layout.COMPRESSIONS:
            raise ArchiveError(f"unknown compression {compression!r} (zstd, lz4 or none)")
        self.path = Path(path)
        self.name = name
        self.selections = tuple(selections)
        self.compression = compression
        self.keyframe_period_ns = keyframe_period_ns
        self.chunk_bytes = chunk_bytes
        self.split_bytes = split_bytes
        self.split_ns = split_ns
        self.splits = split_bytes is not None or split_ns is not None
        #: Messages written (keyframes not counted) and bytes in finished parts.
        self.records = 0
        self._bytes_done = 0
        self.parts: list[Path] = []
        # address -> (class, values): what a keyframe writes.
        self._state: dict[str, tuple[ClassMeta, dict[str, Any]]] = {}
        self._next_keyframe: int | None = None
        self._part_start = 0
        self._stream: IO[bytes] | None = None
        self._mcap: McapFile | None = None
        self._open(part_path(self.path, 0))

    # -- files ------------------------------------------------------------------------------

    def _open(self, path: Path) -> None:
        try:
            # A FIFO or a device would block or never end: only a regular file (or none) is taken.
            if path.exists() and not stat.S_ISREG(path.stat().st_mode):
                raise ArchiveError(f"cannot write archive {path}: not a regular file")
            path.parent.mkdir(parents=True, exist_ok=True)
            stream = open(path, "wb")  # noqa: SIM115 (owned across cycles, closed by close())
        except OSError as error:
            raise ArchiveError(f"cannot write archive {path}: {_problem(error)}") from None
        self._stream = stream
        self.parts.append(path)
        self._schemas: dict[str, int] = {}
        self._channels: dict[tuple[str, str], int] = {}
        self._part_offset = 0
        # Chunk CRCs (a reader tells a damaged chunk from a valid one) and no per-message
        # index: readers find chunks by time, and a message index costs 16 uncompressed bytes
        # per message, as much as the compressed messages themselves.
        self._mcap = McapFile(stream, self.chunk_bytes, self.compression)
        self._guard(self._start)
        # A part's size counts its records, not its header and type descriptions.
        self._part_offset = self._guard(stream.tell)

    def _start(self) -> None:
        assert self._mcap is not None
        self._mcap.start(profile=layout.PROFILE, library=layout.LIBRARY)
        info = {
            "version": layout.FORMAT_VERSION,
            "name": self.name,
            "selections": json.dumps(list(self.selections)),
            "keyframe_period_ns": str(self.keyframe_period_ns),
            "part": str(len(self.parts) - 1),
        }
        self._mcap.add_metadata(layout.INFO_METADATA, info)
        generic = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
        lifecycle = {
            **generic,
            "properties": {"address": {"type": "string"}, "class": {"type": "string"}},
            "required": ["address", "class"],
            "additionalProperties": False,
        }
        keyframe = {**generic, "properties": {"objects": {"type": "object"}}}
        for topic, kind, schema in (
            (layout.ADDED_TOPIC, layout.ADDED, lifecycle),
            (layout.REMOVED_TOPIC, layout.REMOVED, lifecycle),
            (layout.KEYFRAME_TOPIC, layout.KEYFRAME, keyframe),
        ):
            schema_id = self._schema(f"sengen.{kind}", schema)
            self._channels[(topic, "")] = self._mcap.register_channel(
                topic, layout.MESSAGE_ENCODING, schema_id, {"sengen.kind": kind}
            )

    def _guard(self, action: Any, *args: Any) -> Any:
        """Runs a write, turning a file-system failure into one line naming the file."""
        try:
            return action(*args)
        except OSError as error:
            raise ArchiveError(
                f"cannot write archive {self.parts[-1]}: {_problem(error)}"
            ) from None

    @property
    def bytes_written(self) -> int:
        """Bytes written so far, over all parts (what is still buffered in a chunk excluded)."""
        if self._stream is None or self._stream.closed:
            return self._bytes_done
        return self._bytes_done + self._stream.tell()

    def flush(self) -> None:
        """Writes the chunk in progress, so that a crash keeps everything written so far."""
        if self._mcap is not None:
            self._guard(self._mcap.flush)

    def close(self) -> None:
        """Writes the summary (index, statistics) and closes the file; idempotent."""
        mcap, stream = self._mcap, self._stream
        self._mcap = self._stream = None
        if mcap is None or stream is None:
            return
        try:
            mcap.finish()
            self._bytes_done += stream.tell()
        except OSError as error:
            raise ArchiveError(
                f"cannot write archive {self.parts[-1]}: {_problem(error)}"
            ) from None
        finally:
            with contextlib.suppress(OSError):  # the error that matters was raised above
                stream.close()

    # -- schemas and channels ---------------------------------------------------------------

    def _schema(self, name: str, schema: Mapping[str, Any]) -> int:
        found = self._schemas.get(name)
        if found is None:
            assert self._mcap is not None
            data = json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()
            found = self._mcap.register_schema(name, layout.SCHEMA_ENCODING, data)
            self._schemas[name] = found
        return found

    def _class(self, meta: ClassMeta) -> int:
        name = meta.qualified_name
        found = self._schemas.get(name)
        if found is None:
            assert self._mcap is not None
            # Loaded here, so that reading archives (sengen record) does not load the object
            # layer's proxies; a writer's process has them anyway.
            from sengen.runtime.objects.describe import describe

            description = describe(meta).decode()
            self._mcap.add_metadata(
                layout.TYPE_METADATA, {"class": name, "description": description}
            )
            found = self._schema(name, class_schema(meta))
        return found

    def _state_channel(self, address: str, meta: ClassMeta) -> int:
        key = (address, meta.qualified_name)
        found = self._channels.get(key)
        if found is None:
            assert self._mcap is not None
            schema_id = self._class(meta)
            # The topic is the address and the schema's name the class: the summary holds a
            # channel per object, and each string more in it is more for `record info` to read.
            metadata = {"sengen.kind": layout.STATE}
            found = self._mcap.register_channel(
                address, layout.MESSAGE_ENCODING, schema_id, metadata
            )
            self._channels[key] = found
        return found

    def _event_channel(self, address: str, meta: ClassMeta, event: str) -> int:
        topic = f"{address}/{event}"
        key = (topic, meta.qualified_name)
        found = self._channels.get(key)
        if found is None:
            assert self._mcap is not None
            event_meta = meta.event(event)
            if event_meta is None:
                raise ArchiveError(f"class {meta.qualified_name} has no event {event!r}")
            schema_id = self._schema(
                f"{meta.qualified_name}.{event}", event_schema(meta, event_meta)
            )
            metadata = {
                "sengen.kind": layout.EVENT,
                "address": address,
                "class": key[1],
                "event": event,
            }
            found = self._mcap.register_channel(topic, layout.MESSAGE_ENCODING, schema_id, metadata)
            self._channels[key] = found
        return found

    # -- records ----------------------------------------------------------------------------

    def _message(self, channel: int, time: int, data: bytes) -> None:
        assert self._mcap is not None
        self._mcap.add_message(channel, time, data)

    def _before(self, time: int) -> None:
        """What a record at ``time`` needs first: a new part, a keyframe."""
        if self._mcap is None:
            raise ArchiveError(f"archive {self.path} is closed")
        if self.splits:
            if self._next_keyframe is None:
                self._part_start = time
            elif (self.split_ns is not None and time - self._part_start >= self.split_ns) or (
                self.split_bytes is not None
                and self._stream is not None
                and self._stream.tell() - self._part_offset >= self.split_bytes
            ):
                self._split(time)
        period = self.keyframe_period_ns
        if self._next_keyframe is None:
            self._next_keyframe = (time // period + 1) * period
        elif time >= self._next_keyframe:
            boundary = time // period * period
            self._keyframe(boundary)
            self._next_keyframe = boundary + period

    def _keyframe(self, time: int) -> None:
        """Writes a keyframe as the first message of a new chunk: a seek finds it by reading
        the first message of the chunks before its time, not the whole chunks."""
        assert self._mcap is not None
        self._mcap.flush()
        objects = {
            address: {"class": meta.qualified_name, "values": values}
            for address, (meta, values) in self._state.items()
        }
        channel = self._channels[(layout.KEYFRAME_TOPIC, "")]
        self._message(channel, time, _encode({"objects": objects}))

    def _split(self, time: int) -> None:
        """Closes this part and opens the next, which starts with a keyframe at ``time``."""
        self.close()
        self._open(part_path(self.path, len(self.parts)))
        self._part_start = time
        self._guard(self._keyframe, time)

    def added(self, time: int, address: str, meta: ClassMeta, values: dict[str, Any]) -> None:
        """An object's addition with its full state (JSON values by STL name)."""
        self._guard(self._added, time, address, meta, values)

    def _added(self, time: int, address: str, meta: ClassMeta, values: dict[str, Any]) -> None:
        self._before(time)
        channel = self._state_channel(address, meta)
        lifecycle = self._channels[(layout.ADDED_TOPIC, "")]
        self._message(lifecycle, time, _encode({"address": address, "class": meta.qualified_name}))
        self._message(channel, time, _encode(values))
        self._state[address] = (meta, dict(values))
        self.records += 1

    def changed(self, time: int, address: str, values: dict[str, Any]) -> None:
        """The properties one commit changed (the most frequent record: no helper calls)."""
        try:
            if self._next_keyframe is None or time >= self._next_keyframe or self.splits:
                self._before(time)
            meta, state = self._state[address]
            channel = self._channels.get((address, meta.qualified_name))
            if channel is None:
                channel = self._state_channel(address, meta)
            mcap = self._mcap
            if mcap is None:
                raise ArchiveError(f"archive {self.path} is closed")
            mcap.add_message(channel, time, _encode(values))
        except OSError as error:
            raise ArchiveError(
                f"cannot write archive {self.parts[-1]}: {_problem(error)}"
            ) from None
        state.update(values)
        self.records += 1

    def event(self, time: int, address: str, event: str, args: dict[str, Any]) -> None:
        """An event and its arguments."""
        self._guard(self._event, time, address, event, args)

    def _event(self, time: int, address: str, event: str, args: dict[str, Any]) -> None:
        self._before(time)
        meta, _ = self._state[address]
        self._message(self._event_channel(address, meta, event), time, _encode(args))
        self.records += 1

    def removed(self, time: int, address: str) -> None:
        """An object's removal."""
        self._guard(self._removed, time, address)

    def _removed(self, time: int, address: str) -> None:
        self._before(time)
        meta, _ = self._state.pop(address)
        lifecycle = self._channels[(layout.REMOVED_TOPIC, "")]
        self._message(lifecycle, time, _encode({"address": address, "class": meta.qualified_name}))
        self.records += 1
