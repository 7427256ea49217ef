"""Opening an archive: what it holds and where, from its summary or, when it was cut short, from
one pass over what was flushed.

A complete archive is opened from its summary alone (chunk index, channels, statistics, metadata
index), so ``record info`` reads a few KB of a file of any size. An archive whose writer never
finished (killed, disk full) has no summary: the pass stops at the first record that is cut off or
whose chunk fails its CRC, and everything before it is read as usual, with ``cut_short`` set.
"""

from __future__ import annotations

import io
import os
import stat
import struct
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import lz4.frame  # type: ignore[import-untyped]
import mcap.records
import zstandard
from mcap.data_stream import ReadDataStream
from mcap.exceptions import McapError
from mcap.opcode import Opcode
from mcap.reader import SeekingReader
from mcap.records import Channel, Chunk, Footer, Header, Metadata, Schema
from mcap.stream_reader import breakup_chunk, get_chunk_data_stream

from sengen.runtime.archive import layout
from sengen.runtime.archive.layout import ArchiveError
from sengen.runtime.archive.mcapfile import MAGIC as _MAGIC
from sengen.runtime.archive.mcapfile import MESSAGE as _MESSAGE

_RECORD_HEAD = struct.Struct("<BQ")
#: One message as the reader uses it: (log time, channel id, data).
Message = tuple[int, int, bytes]
_FOOTER_SIZE = 9 + 8 + 8 + 4
# How much of a chunk a seek decompresses to find whether a keyframe starts it.
_PEEK = 1024
# What reading a damaged chunk raises: mcap's errors, zstd's, lz4's (RuntimeError), short data.
_DAMAGED = (McapError, zstandard.ZstdError, RuntimeError, ValueError, struct.error)


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where one chunk starts in the file, and the times of its first and last message."""

    offset: int
    start: int
    end: int


@dataclass(slots=True)
class Index:
    path: Path
    size: int
    header: Header
    cut_short: bool
    chunks: list[ChunkRef] = field(default_factory=list)
    channels: dict[int, Channel] = field(default_factory=dict)
    schemas: dict[int, Schema] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    metadata: list[Metadata] = field(default_factory=list)
    compressions: set[str] = field(default_factory=set)
    start: int = 0
    end: int = 0


def open_file(path: Path) -> IO[bytes]:
    """The archive's file, if it is a regular file that can be read (a FIFO would block)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ArchiveError(f"{path}: not a regular file")
        return open(path, "rb")  # the reader owns it until close()
    except OSError as error:
        raise ArchiveError(f"{path}: cannot read: {error.strerror or error}") from None


def build(path: Path, stream: IO[bytes]) -> Index:
    """The index of the archive in ``stream``; an :class:`ArchiveError` for anything else."""
    size = os.fstat(stream.fileno()).st_size
    try:
        header, data_start = _header(path, stream)
        index = Index(path, size, header, cut_short=True)
        if not _from_summary(index, stream):
            _scan(index, stream, data_start)
    except (McapError, struct.error, UnicodeDecodeError, ValueError, EOFError) as error:
        if isinstance(error, ArchiveError):
            raise
        raise ArchiveError(f"{path}: damaged archive ({error})") from None
    return index


def _header(path: Path, stream: IO[bytes]) -> tuple[Header, int]:
    if stream.read(len(_MAGIC)) != _MAGIC:
        raise ArchiveError(f"{path}: not an MCAP archive")
    head = stream.read(_RECORD_HEAD.size)
    if len(head) < _RECORD_HEAD.size:
        raise ArchiveError(f"{path}: cut short before its header")
    opcode, length = _RECORD_HEAD.unpack(head)
    if opcode != Opcode.HEADER or length > 1 << 20:
        raise ArchiveError(f"{path}: not an MCAP archive (no header)")
    body = stream.read(length)
    if len(body) < length:
        raise ArchiveError(f"{path}: cut short in its header")
    header = Header.read(ReadDataStream(io.BytesIO(body)))
    if header.profile != layout.PROFILE:
        profile = header.profile or "none"
        raise ArchiveError(f"{path}: an MCAP file but not a sengen archive (profile {profile!r})")
    return header, stream.tell()


def _from_summary(index: Index, stream: IO[bytes]) -> bool:
    """Fills ``index`` from the summary; False when there is none (the writer did not finish)."""
    if index.size < len(_MAGIC) * 2 + _FOOTER_SIZE:
        return False
    stream.seek(index.size - len(_MAGIC))
    if stream.read(len(_MAGIC)) != _MAGIC:
        return False
    stream.seek(index.size - len(_MAGIC) - _FOOTER_SIZE)
    opcode, _ = _RECORD_HEAD.unpack(stream.read(_RECORD_HEAD.size))
    if opcode != Opcode.FOOTER:
        return False
    footer = Footer.read(ReadDataStream(stream))
    if footer.summary_start == 0:
        return False
    summary = SeekingReader(stream).get_summary()
    if summary is None or summary.statistics is None:
        return False
    index.cut_short = False
    for ref in summary.chunk_indexes:
        index.chunks.append(
            ChunkRef(ref.chunk_start_offset, ref.message_start_time, ref.message_end_time)
        )
        index.compressions.add(ref.compression or "none")
    index.channels = dict(summary.channels)
    index.schemas = dict(summary.schemas)
    index.counts = dict(summary.statistics.channel_message_counts)
    index.start = summary.statistics.message_start_time
    index.end = summary.statistics.message_end_time
    for entry in summary.metadata_indexes:
        stream.seek(entry.offset + _RECORD_HEAD.size)
        index.metadata.append(Metadata.read(ReadDataStream(stream)))
    return True


def _scan(index: Index, stream: IO[bytes], position: int) -> None:
    """One pass over an unfinished archive, up to its last whole, valid record."""
    first = True
    while position + _RECORD_HEAD.size <= index.size:
        stream.seek(position)
        opcode, length = _RECORD_HEAD.unpack(stream.read(_RECORD_HEAD.size))
        end = position + _RECORD_HEAD.size + length
        if end > index.size or opcode in (Opcode.DATA_END, Opcode.FOOTER):
            break
        if opcode == Opcode.CHUNK:
            try:
                chunk = Chunk.read(ReadDataStream(stream))
                records = breakup_chunk(chunk, validate_crc=True)
            except _DAMAGED:
                break  # a chunk cut off or damaged by the crash: what follows cannot be trusted
            index.compressions.add(chunk.compression or "none")
            index.chunks.append(
                ChunkRef(position, chunk.message_start_time, chunk.message_end_time)
            )
            for record in records:
                if isinstance(record, Channel):
                    index.channels[record.id] = record
                elif isinstance(record, Schema):
                    index.schemas[record.id] = record
                elif isinstance(record, mcap.records.Message):
                    index.counts[record.channel_id] = index.counts.get(record.channel_id, 0) + 1
            if first:
                index.start, first = chunk.message_start_time, False
            index.start = min(index.start, chunk.message_start_time)
            index.end = max(index.end, chunk.message_end_time)
        elif opcode == Opcode.METADATA:
            index.metadata.append(Metadata.read(ReadDataStream(stream)))
        position = end


def chunk_data(index: Index, stream: IO[bytes], ref: ChunkRef) -> bytes:
    """The records of one chunk, uncompressed; a damaged chunk is an :class:`ArchiveError`."""
    try:
        stream.seek(ref.offset + _RECORD_HEAD.size)
        chunk = Chunk.read(ReadDataStream(stream))
        uncompressed, size = get_chunk_data_stream(chunk, validate_crc=True)
        return bytes(uncompressed.read(size))
    except _DAMAGED as error:
        raise ArchiveError(f"{index.path}: damaged chunk at byte {ref.offset} ({error})") from None


def first_message(index: Index, stream: IO[bytes], ref: ChunkRef) -> tuple[int, int] | None:
    """The time and channel of the first message of a chunk, decompressing only the chunk's
    first KB (None when the chunk's first records, schemas and channels, fill more)."""
    try:
        stream.seek(ref.offset + _RECORD_HEAD.size)
        chunk = Chunk.read(ReadDataStream(stream))
        if chunk.compression == "zstd":
            start = zstandard.ZstdDecompressor().stream_reader(chunk.data).read(_PEEK)
        elif chunk.compression == "lz4":
            start = lz4.frame.LZ4FrameDecompressor().decompress(chunk.data, max_length=_PEEK)
        else:
            start = chunk.data[:_PEEK]
    except _DAMAGED as error:
        raise ArchiveError(f"{index.path}: damaged chunk at byte {ref.offset} ({error})") from None
    position = 0
    while position + _MESSAGE.size <= len(start):
        opcode, length, channel, _, log_time, _ = _MESSAGE.unpack_from(start, position)
        if opcode == Opcode.MESSAGE:
            return log_time, channel
        position += _RECORD_HEAD.size + length
    return None


def messages(
    index: Index,
    ref: ChunkRef,
    data: bytes,
    channels: Container[int] | None = None,
    until: int | None = None,
    first: bool = False,
) -> list[Message]:
    """The messages in ``data`` (chunk ``ref``'s records) in file order, each as (log time,
    channel id, data): of ``channels`` only and up to time ``until``, when given; the first
    message only, when ``first``."""
    found = Columns([], [], [])
    columns(index, ref, data, found, channels, until, first)
    return list(zip(found.times, found.channels, found.data, strict=True))


@dataclass(frozen=True, slots=True)
class Columns:
    """Messages as three lists: a seek collects thousands, and ints and bytes in lists are no
    work for the garbage collector, where a tuple per message is."""

    times: list[int]
    channels: list[int]
    data: list[bytes]


def columns(
    index: Index,
    ref: ChunkRef,
    data: bytes,
    into: Columns,
    channels: Container[int] | None = None,
    until: int | None = None,
    first: bool = False,
) -> None:
    """Appends the messages in ``data`` to ``into``, as :func:`messages` selects them.

    The chunk's records are walked here rather than by ``mcap.stream_reader.breakup_chunk``,
    which builds an object per record through a dozen calls: a seek reads whole chunks, and this
    is five times faster for the messages it skips and for those it keeps."""
    times, ids, blobs = into.times.append, into.channels.append, into.data.append
    size = len(data)
    position = 0
    head, message = _RECORD_HEAD.unpack_from, _MESSAGE.unpack_from
    last = until if until is not None else 1 << 64
    try:
        # Most records are messages: one unpack reads a message's head whole; the others (the
        # schemas and channels of the chunk) are at least that long too, or the last ones.
        while position < size:
            if position + _MESSAGE.size <= size:
                opcode, length, channel, _, log_time, _ = message(data, position)
            else:
                (opcode, length), channel, log_time = head(data, position), 0, 0
            end = position + _RECORD_HEAD.size + length
            if opcode == Opcode.MESSAGE:
                if log_time <= last and (channels is None or channel in channels):
                    times(log_time)
                    ids(channel)
                    blobs(data[position + _MESSAGE.size : end])
                if first:
                    break
            position = end
    except struct.error as error:
        raise ArchiveError(f"{index.path}: damaged chunk at byte {ref.offset} ({error})") from None
