"""Reading the recorder's archives from Python: a streaming reader with seek.

::

    from sengen.recording import open_archive

    with open_archive("run.mcap") as archive:
        print(archive.info())                       # time range, objects, counts, cut short
        for record in archive.records(objects=["local/plant/tank"]):
            print(record.time_ns, record.kind, record.values)
        state = archive.state_at(archive.start_ns + 5 * 10**9)   # every object at t = 5 s

Records come in time order, read chunk by chunk (a file of any size is read in bounded memory);
``state_at`` reads from the nearest keyframe. Each name is the one of
:mod:`sengen.runtime.archive`, loaded on first use, so that importing this module costs nothing.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sengen.runtime.archive import ArchiveError, ArchiveInfo, ArchiveReader, Record

__all__ = ["ArchiveError", "ArchiveInfo", "ArchiveReader", "Record", "open_archive"]

_HOMES = {name: "sengen.runtime.archive" for name in __all__ if name != "open_archive"}


def open_archive(path: str | Path) -> ArchiveReader:
    """The archive at ``path``, opened; an :class:`ArchiveError` (one line) when it cannot be
    read. Close it, or use it in a ``with`` block."""
    from sengen.runtime.archive import ArchiveReader

    return ArchiveReader(path)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
