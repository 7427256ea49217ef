"""The MCAP file a writer fills: mcap's own records for everything but the messages.

``mcap.writer.Writer`` builds a ``Message`` object and makes a dozen calls per message (statistics,
a message index this layout does not write, one call per field): at the recorder's 50,000
records/s that was more than half of its thread. Here a message is one ``struct`` pack appended
to the chunk in progress; the chunks, their index, the statistics, the metadata and the summary
are mcap's record classes, written as the MCAP spec lays them out (summary offsets included).
"""

from __future__ import annotations

import struct
import zlib
from typing import IO, Final

import lz4.frame  # type: ignore[import-untyped]
import zstandard
from mcap.data_stream import RecordBuilder
from mcap.opcode import Opcode
from mcap.records import (
    Channel,
    Chunk,
    ChunkIndex,
    DataEnd,
    Footer,
    Header,
    McapRecord,
    Metadata,
    MetadataIndex,
    Schema,
    Statistics,
    SummaryOffset,
)

#: The MCAP spec's magic bytes, at both ends of the file.
MAGIC: Final = b"\x89MCAP0\r\n"
# A message record's head: opcode, length, channel id, sequence, log time, publish time.
MESSAGE: Final = struct.Struct("<BQHIQQ")
_MESSAGE_FIELDS: Final = 2 + 4 + 8 + 8


class McapFile:
    """One MCAP file being written: chunked, chunk CRCs, chunk and metadata indexes."""

    def __init__(self, stream: IO[bytes], chunk_bytes: int, compression: str) -> None:
        self.stream = stream
        self.chunk_bytes = chunk_bytes
        self.compression = compression
        self._schemas: list[Schema] = []
        self._channels: list[Channel] = []
        self._chunk = bytearray()
        self._chunk_messages = 0
        self._chunk_start = self._chunk_end = 0
        self._chunk_indexes: list[ChunkIndex] = []
        self._metadata_indexes: list[MetadataIndex] = []
        self._counts: dict[int, int] = {}
        self._messages = 0
        self._start = self._end = 0
        self._chunks = 0

    def _write(self, *records: McapRecord) -> int:
        """Writes records straight to the file; their length."""
        builder = RecordBuilder()
        for record in records:
            record.write(builder)
        data: bytes = builder.end()  # type: ignore[no-untyped-call]
        self.stream.write(data)
        return len(data)

    def start(self, profile: str, library: str) -> None:
        self.stream.write(MAGIC)
        self._write(Header(profile=profile, library=library))

    def add_metadata(self, name: str, data: dict[str, str]) -> None:
        offset = self.stream.tell()
        length = self._write(Metadata(name=name, metadata=data))
        self._metadata_indexes.append(MetadataIndex(offset=offset, length=length, name=name))

    def register_schema(self, name: str, encoding: str, data: bytes) -> int:
        schema = Schema(id=len(self._schemas) + 1, name=name, encoding=encoding, data=data)
        self._schemas.append(schema)
        self._in_chunk(schema)
        return schema.id

    def register_channel(
        self, topic: str, encoding: str, schema_id: int, metadata: dict[str, str]
    ) -> int:
        channel = Channel(
            id=len(self._channels) + 1,
            topic=topic,
            message_encoding=encoding,
            schema_id=schema_id,
            metadata=metadata,
        )
        self._channels.append(channel)
        self._counts[channel.id] = 0
        self._in_chunk(channel)
        return channel.id

    def _in_chunk(self, record: McapRecord) -> None:
        builder = RecordBuilder()
        record.write(builder)
        self._chunk += builder.end()  # type: ignore[no-untyped-call]

    def add_message(self, channel: int, time: int, data: bytes) -> None:
        """One message (log time = publish time = ``time``): the writer's most frequent call."""
        chunk = self._chunk
        if self._chunk_messages:
            if time < self._chunk_start:
                self._chunk_start = time
            if time > self._chunk_end:
                self._chunk_end = time
        else:
            self._chunk_start = self._chunk_end = time
        self._chunk_messages += 1
        self._counts[channel] += 1
        chunk += MESSAGE.pack(Opcode.MESSAGE, _MESSAGE_FIELDS + len(data), channel, 0, time, time)
        chunk += data
        if len(chunk) > self.chunk_bytes:
            self._finish_chunk()

    def _finish_chunk(self) -> None:
        if not self._chunk_messages:
            return
        data = bytes(self._chunk)
        if self.compression == "zstd":
            compressed = zstandard.compress(data)
        elif self.compression == "lz4":
            compressed = lz4.frame.compress(data)
        else:
            compressed = data
        chunk = Chunk(
            compression="" if self.compression == "none" else self.compression,
            data=compressed,
            message_start_time=self._chunk_start,
            message_end_time=self._chunk_end,
            uncompressed_crc=zlib.crc32(data),
            uncompressed_size=len(data),
        )
        offset = self.stream.tell()
        length = self._write(chunk)
        self._chunk_indexes.append(
            ChunkIndex(
                message_start_time=chunk.message_start_time,
                message_end_time=chunk.message_end_time,
                chunk_start_offset=offset,
                chunk_length=length,
                message_index_offsets={},
                message_index_length=0,
                compression=chunk.compression,
                compressed_size=len(compressed),
                uncompressed_size=len(data),
            )
        )
        if self._messages:
            self._start = min(self._start, self._chunk_start)
            self._end = max(self._end, self._chunk_end)
        else:
            self._start, self._end = self._chunk_start, self._chunk_end
        self._messages += self._chunk_messages
        self._chunks += 1
        self._chunk.clear()
        self._chunk_messages = 0

    def flush(self) -> None:
        """Writes the chunk in progress and hands the file's buffer to the system."""
        self._finish_chunk()
        self.stream.flush()

    def finish(self) -> None:
        """The summary: schemas, channels, statistics, chunk and metadata indexes, their
        offsets, the footer and the closing magic. The stream stays open."""
        self._finish_chunk()
        self._write(DataEnd(data_section_crc=0))
        summary_start = self.stream.tell()
        statistics = Statistics(
            message_count=self._messages,
            schema_count=len(self._schemas),
            channel_count=len(self._channels),
            attachment_count=0,
            metadata_count=len(self._metadata_indexes),
            chunk_count=self._chunks,
            message_start_time=self._start,
            message_end_time=self._end,
            channel_message_counts=dict(self._counts),
        )
        groups: list[tuple[int, list[McapRecord]]] = [
            (Opcode.SCHEMA, list(self._schemas)),
            (Opcode.CHANNEL, list(self._channels)),
            (Opcode.STATISTICS, [statistics]),
            (Opcode.CHUNK_INDEX, list(self._chunk_indexes)),
            (Opcode.METADATA_INDEX, list(self._metadata_indexes)),
        ]
        offsets: list[McapRecord] = []
        position = summary_start
        for opcode, records in groups:
            if records:
                length = self._write(*records)
                offsets.append(SummaryOffset(opcode, position, length))
                position += length
        summary_offset_start = position
        self._write(*offsets)
        self._write(
            Footer(
                summary_start=summary_start,
                summary_offset_start=summary_offset_start,
                summary_crc=0,
            )
        )
        self.stream.write(MAGIC)
