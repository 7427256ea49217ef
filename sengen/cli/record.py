"""``sengen record info/show/export/compare``: the recorder's archives from the command line.

Every command streams: an archive is read chunk by chunk (``info`` reads only its summary), so a
file of any size is read in bounded memory. An archive that cannot be read, a time outside it or
an object it does not hold is one line and exit 1; a difference found by ``compare`` is exit 1 too.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import sys
from collections.abc import Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any

from sengen.errors import UsageError

if TYPE_CHECKING:
    from sengen.runtime.archive import ArchiveInfo, ArchiveReader, Record

__all__ = ["add_record_parser"]

EXIT_OK = 0
EXIT_BAD_INPUT = 1


def add_record_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    record = commands.add_parser("record", help="the recorder's archives: info, show, export")
    sub = record.add_subparsers(dest="record_command", required=True)
    info = sub.add_parser("info", help="what an archive holds (from its index)")
    info.add_argument("file", metavar="FILE")
    info.add_argument("--format", choices=("text", "json"), default="text")
    info.set_defaults(handler=_info)
    show = sub.add_parser("show", help="print an archive's records as a table")
    export = sub.add_parser("export", help="write an archive's records as CSV or JSON Lines")
    for command in (show, export):
        command.add_argument("file", metavar="FILE")
        command.add_argument(
            "--object", action="append", metavar="ADDRESS", help="session/bus/object (repeatable)"
        )
        command.add_argument(
            "--start", metavar="T", help="from this far into the archive, e.g. 2.5s"
        )
        command.add_argument("--end", metavar="T", help="up to this far into the archive")
    show.add_argument(
        "--property", action="append", metavar="NAME", help="only these properties (repeatable)"
    )
    show.set_defaults(handler=_show)
    export.add_argument(
        "--format",
        choices=("csv", "jsonl"),
        default="csv",
        help="csv: a row per change with every property of its object; jsonl: a line per record",
    )
    export.add_argument("-o", "--output", metavar="OUT", help="the file to write (stdout)")
    export.set_defaults(handler=_export)
    compare = sub.add_parser("compare", help="compare the records of two archives")
    compare.add_argument("a", metavar="A")
    compare.add_argument("b", metavar="B")
    compare.set_defaults(handler=_compare)
    for command in (info, show, export, compare):
        command.add_argument(
            "--debug", action="store_true", help="show tracebacks of internal errors"
        )


def _fail(problem: object) -> int:
    print(f"sengen: error: {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT


# -- info ---------------------------------------------------------------------------------------


def _size(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    raise AssertionError("unreachable")


def _info(args: argparse.Namespace) -> int:
    from sengen.runtime import Duration
    from sengen.runtime.archive import ArchiveError, ArchiveReader

    try:
        with ArchiveReader(args.file) as reader:
            info = reader.info()
    except ArchiveError as error:
        return _fail(error)
    if args.format == "json":
        document = {
            "file": info.path,
            "name": info.name,
            "selections": list(info.selections),
            "start_ns": info.start_ns,
            "end_ns": info.end_ns,
            "duration_ns": info.duration_ns,
            "classes": list(info.classes),
            "objects": list(info.objects),
            "records": dict(info.counts),
            "size": info.size,
            "compression": info.compression,
            "keyframe_period_ns": info.keyframe_period_ns,
            "cut_short": info.cut_short,
        }
        print(json.dumps(document, indent=2))
        return EXIT_OK
    counts = ", ".join(f"{kind} {count}" for kind, count in info.counts.items())
    rows = [
        ("file", f"{info.path} ({_size(info.size)}, {info.compression})"),
        ("name", info.name),
        ("selections", "; ".join(info.selections)),
        ("duration", str(Duration(info.duration_ns))),
        ("time range", f"{info.start_ns} .. {info.end_ns} ns"),
        ("classes", f"{len(info.classes)}: {', '.join(info.classes)}"),
        ("objects", f"{len(info.objects)}: {', '.join(info.objects)}"),
        ("records", f"{sum(info.counts.values())} ({counts})"),
        ("cut short", _cut_short(info)),
    ]
    for label, text in rows:
        print(f"{label:<11} {text}".rstrip())
    return EXIT_OK


def _cut_short(info: ArchiveInfo) -> str:
    if not info.cut_short:
        return "no"
    return "yes: the recorder did not finish it; it is read up to its last whole chunk"


# -- selecting records --------------------------------------------------------------------------


def _time(reader: ArchiveReader, text: str | None, option: str) -> int | None:
    """``--start``/``--end``: an offset into the archive, checked against its time range."""
    from sengen.runtime import Duration, TimeValueError
    from sengen.runtime.archive import ArchiveError

    if text is None:
        return None
    try:
        offset = Duration.parse(text)
    except TimeValueError as error:
        raise UsageError(f"{option}: {error}") from None
    time = reader.start_ns + offset.ns
    try:
        reader.check_time(time)
    except ArchiveError:
        duration = Duration(reader.end_ns - reader.start_ns)
        raise ArchiveError(
            f"{option} {text} is outside {reader.path}, which lasts {duration}"
        ) from None
    return time


def _selected(reader: ArchiveReader, args: argparse.Namespace) -> Iterator[Record]:
    from sengen.runtime.archive import ArchiveError

    objects = args.object
    if objects:
        known = set(reader.info().objects)
        for address in objects:
            if address not in known:
                raise ArchiveError(f"{reader.path} holds no object {address!r}")
    start = _time(reader, args.start, "--start")
    end = _time(reader, args.end, "--end")
    return reader.records(start_ns=start, end_ns=end, objects=objects)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _detail(record: Record, properties: set[str] | None) -> str | None:
    values = record.values
    if properties is not None:
        if record.kind not in ("added", "state"):
            return None
        values = {k: v for k, v in values.items() if k in properties}
        if not values:
            return None
    if record.kind == "added":
        return f"{record.class_name} {_compact(dict(values))}"
    if record.kind == "event":
        return f"{record.event} {_compact(dict(values))}"
    return _compact(dict(values)) if record.kind == "state" else ""


def _show(args: argparse.Namespace) -> int:
    from sengen.runtime.archive import ArchiveError, ArchiveReader

    properties = set(args.property) if args.property else None
    try:
        with ArchiveReader(args.file) as reader:
            records = _selected(reader, args)  # checks the arguments before any output
            width = max([len("object"), *(len(a) for a in reader.info().objects)])
            print(f"{'t (ns)':>20}  {'kind':<7}  {'object':<{width}}  detail".rstrip())
            for record in records:
                detail = _detail(record, properties)
                if detail is None:
                    continue
                line = (
                    f"{record.time_ns:>20}  {record.kind:<7}  {record.address:<{width}}  {detail}"
                )
                print(line.rstrip())
    except ArchiveError as error:
        return _fail(error)
    return EXIT_OK


# -- export -------------------------------------------------------------------------------------


def _export(args: argparse.Namespace) -> int:
    from sengen.runtime.archive import ArchiveError, ArchiveReader

    try:
        with ArchiveReader(args.file) as reader:
            records = _selected(reader, args)
            if args.output is None:
                _write(reader, records, args.format, sys.stdout)
            else:
                try:
                    with open(args.output, "w", encoding="utf-8", newline="") as out:
                        _write(reader, records, args.format, out)
                except OSError as error:
                    return _fail(f"cannot write {args.output}: {error.strerror or error}")
    except ArchiveError as error:
        return _fail(error)
    return EXIT_OK


def _write(reader: ArchiveReader, records: Iterator[Record], form: str, out: IO[str]) -> None:
    if form == "jsonl":
        for record in records:
            line: dict[str, Any] = {
                "t": record.time_ns,
                "kind": record.kind,
                "object": record.address,
                "class": record.class_name,
            }
            if record.event is not None:
                line["event"] = record.event
            if record.kind != "removed":
                line["values"] = dict(record.values)
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        return
    _write_csv(reader, records, out)


def _write_csv(reader: ArchiveReader, records: Iterator[Record], out: IO[str]) -> None:
    """One row per addition or change, with the object's whole state after it: every property of
    every recorded class is a column (empty where the object's class has no such property);
    structured values are JSON text."""
    columns: dict[str, None] = {}
    for meta in reader.types.values():
        for prop in meta.all_properties:
            columns.setdefault(prop.stl_name, None)
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["t_ns", "object", "class", *columns])
    state: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.kind == "removed":
            state.pop(record.address, None)
            continue
        if record.kind == "event":
            continue
        values = state.setdefault(record.address, {})
        values.update(record.values)
        writer.writerow(
            [record.time_ns, record.address, record.class_name]
            + [_cell(values.get(name)) for name in columns]
        )


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return _compact(value)
    return value


# -- compare ------------------------------------------------------------------------------------


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: object key order is formatting, but 1, 1.0 and true are different values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping):
        return (
            isinstance(b, Mapping)
            and a.keys() == b.keys()
            and all(_json_equal(a[key], b[key]) for key in a)
        )
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    return type(a) is type(b) and a == b


def _same(a: Record, b: Record) -> bool:
    return (
        (a.kind, a.time_ns, a.address, a.class_name, a.event)
        == (b.kind, b.time_ns, b.address, b.class_name, b.event)
    ) and _json_equal(a.values, b.values)


def _text(record: Record | None) -> str:
    if record is None:
        return "<end of archive>"
    detail = _detail(record, None) or ""
    return f"{record.time_ns} {record.kind} {record.address} {detail}".rstrip()


def _canonical(records: Iterator[Record]) -> Iterator[Record]:
    """The records of each time ordered by object, stably (one object's records keep theirs):
    what objects did at one time has no order between objects, and the order a recorder received
    it in (a removal at shut-down comes last) is not part of what was recorded (a replay of the
    archive, recorded, gives the same records in another order)."""
    for _, same_time in itertools.groupby(records, key=lambda record: record.time_ns):
        yield from sorted(same_time, key=lambda record: record.address)


def _compare(args: argparse.Namespace) -> int:
    from sengen.runtime.archive import ArchiveError, ArchiveReader

    try:
        with ArchiveReader(args.a) as a, ArchiveReader(args.b) as b:
            count = 0
            for count, (x, y) in enumerate(
                itertools.zip_longest(_canonical(a.records()), _canonical(b.records())), start=1
            ):
                if x is not None and y is not None and _same(x, y):
                    continue
                print(f"first difference at record {count}:")
                print(f"  A: {_text(x)}")
                print(f"  B: {_text(y)}")
                return EXIT_BAD_INPUT
    except ArchiveError as error:
        return _fail(error)
    print(f"archives are identical ({count} records)")
    return EXIT_OK
