"""Archives as lists of plain records, for the tests that check what a run recorded.

``read_recording`` gives an archive's summary and its records in time order, each a dict in the
shape these tests assert on: ``t``, ``kind`` (``add``, ``set``, ``event``, ``remove``), ``bus``
(``session.bus``), ``object``, and per kind ``class`` and ``state``, ``values``, or ``event`` and
``args``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sengen.runtime.archive import ArchiveInfo, ArchiveReader, Record

_KINDS = {"added": "add", "state": "set", "event": "event", "removed": "remove"}


def plain(record: Record) -> dict[str, Any]:
    session, bus, name = record.address.split("/", 2)
    out: dict[str, Any] = {
        "t": record.time_ns,
        "kind": _KINDS[record.kind],
        "bus": f"{session}.{bus}",
        "object": name,
    }
    if record.kind == "added":
        out.update({"class": record.class_name, "state": dict(record.values)})
    elif record.kind == "state":
        out["values"] = dict(record.values)
    elif record.kind == "event":
        out.update({"event": record.event, "args": dict(record.values)})
    return out


def read_recording(path: Path | str) -> tuple[ArchiveInfo, list[dict[str, Any]]]:
    with ArchiveReader(path) as reader:
        return reader.info(), [plain(record) for record in reader.records()]
