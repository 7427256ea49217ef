"""Archives of recorded objects: MCAP files any MCAP tool opens (runtime.md §9.2).

Used by the recorder (writing), the replayer and ``sengen record`` (reading); components import
it directly, as it holds no kernel state. The API (stable)::

    from sengen.runtime.archive import ArchiveReader, ArchiveError, ArchiveInfo, Record

    reader = ArchiveReader(path)   # ArchiveError (a SengenError, one line) when the file is
                                   # missing, not a regular file, not MCAP, not a sengen archive,
                                   # or damaged; an archive cut short opens (info().cut_short)
    reader.info() -> ArchiveInfo   # path, name, selections, start_ns, end_ns, duration_ns,
                                   # classes, objects (addresses), counts (per kind), size,
                                   # compression, keyframe_period_ns, cut_short
    reader.types -> Mapping[str, ClassMeta]   # per recorded class, built from its STL type
                                   # description (objects.describe.read): dynamic_proxy() takes it
    reader.descriptions -> Mapping[str, bytes]  # the descriptions themselves
    reader.check_types(lookup)     # ArchiveError when a recorded class clashes with the loaded
                                   # one; lookup(qualified_name) -> ClassMeta | None
    reader.records(start_ns=None, end_ns=None, objects=None) -> Iterator[Record]
                                   # time order (ties: write order), streaming, bounds inclusive
    reader.check_time(t_ns)        # ArchiveError when t is outside [start_ns, end_ns]
    reader.state_at(t_ns) -> dict[str, Record]   # address -> "state" record with the full
                                   # values, after every record at or before t (nearest keyframe)
    reader.close() / with ArchiveReader(path) as reader: ...

    Record(kind, time_ns, address, class_name, values, event)
        kind: "added" (values = full state) | "state" (changed properties) | "event"
              (event = its name, values = its arguments) | "removed" (no values)
        address: "session/bus/object"; values: JSON values by STL name, as the shell writes them

    ArchiveWriter(path, name=..., selections=[...], compression="zstd"|"lz4"|"none",
                  keyframe_period_ns=10**9, chunk_bytes=1 << 18, split_bytes=None, split_ns=None)
        .added(t, address, class_meta, values) .changed(t, address, values)
        .event(t, address, event, args) .removed(t, address) .flush() .close()
        .records .bytes_written .parts
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sengen.runtime.archive.layout import KINDS, ArchiveError
from sengen.runtime.archive.reader import ArchiveInfo, ArchiveReader, Record

if TYPE_CHECKING:
    from sengen.runtime.archive.writer import ArchiveWriter, part_path

_WRITER = frozenset({"ArchiveWriter", "part_path"})


def __getattr__(name: str) -> Any:
    """The writer's names, loaded on first use: reading (``sengen record info``) needs none of
    the object layer, nor mcap's writer, which alone costs a third of that command's start."""
    if name in _WRITER:
        from sengen.runtime.archive import writer

        return getattr(writer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KINDS",
    "ArchiveError",
    "ArchiveInfo",
    "ArchiveReader",
    "ArchiveWriter",
    "Record",
    "part_path",
]
