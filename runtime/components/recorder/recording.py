"""Recording files of the recorder component (spec: runtime.md §9.2).

A recording is JSON Lines in UTF-8: a header line, then one record per committed change. The writer
orders each batch and fixes every key order itself, so equal input gives byte-identical files; the
reader validates strictly, so ``record show`` and ``record compare`` never work on a half-understood
file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from sengen.runtime.errors import SengenError

__all__ = [
    "FORMAT",
    "KINDS",
    "VERSION",
    "Record",
    "RecordingError",
    "RecordingWriter",
    "compare",
    "read_recording",
    "show",
]

FORMAT = "sengen-recording"
VERSION = 1

#: The record kinds in their sort order (add < set < event < remove).
KINDS: tuple[str, ...] = ("add", "set", "event", "remove")
_KIND_ORDER: Mapping[str, int] = {kind: index for index, kind in enumerate(KINDS)}

#: The kind-specific keys of each kind, in the order they are written.
_DATA_KEYS: Mapping[str, tuple[str, ...]] = {
    "add": ("class", "state"),
    "set": ("values",),
    "event": ("event", "args"),
    "remove": (),
}
#: The JSON type each kind-specific key must have.
_DATA_TYPES: Mapping[str, type] = {
    "class": str,
    "state": dict,
    "values": dict,
    "event": str,
    "args": dict,
}
_COMMON_KEYS: tuple[str, ...] = ("t", "kind", "bus", "object")
_HEADER_KEYS: tuple[str, ...] = ("format", "version", "selections")


class RecordingError(SengenError, ValueError):
    """A recording that cannot be read; the message names the file and, when known, the line."""

    def __init__(self, path: Path | str, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {problem}")


def _is_int(value: object) -> bool:
    # bool is an int subclass in Python, but true/false are not JSON numbers.
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Record:
    """One record before writing; ``seq`` only breaks sort ties and is not written."""

    t: int
    kind: str
    bus: str
    object: str
    seq: int
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Checked here so a writer can never produce a file its own reader rejects.
        if self.kind not in _KIND_ORDER:
            raise ValueError(f"unknown record kind {self.kind!r}")
        if not _is_int(self.t):
            raise ValueError(f"record time must be an int, not {self.t!r}")
        if not isinstance(self.bus, str) or not isinstance(self.object, str):
            raise ValueError("record bus and object must be strings")
        expected = _DATA_KEYS[self.kind]
        if set(self.data) != set(expected):
            raise ValueError(
                f"a {self.kind!r} record needs the data keys {list(expected)}, "
                f"got {sorted(self.data)}"
            )
        for key in expected:
            value = self.data[key]
            wanted = _DATA_TYPES[key]
            ok = isinstance(value, str) if wanted is str else isinstance(value, Mapping)
            if not ok:
                raise ValueError(f"record key {key!r} has the wrong type: {value!r}")

    def sort_key(self) -> tuple[int, str, str, int, int]:
        return (self.t, self.bus, self.object, _KIND_ORDER[self.kind], self.seq)

    def to_json(self) -> dict[str, Any]:
        """The record as written: common keys first, then the kind's keys, in a fixed order."""
        out: dict[str, Any] = {
            "t": self.t,
            "kind": self.kind,
            "bus": self.bus,
            "object": self.object,
        }
        for key in _DATA_KEYS[self.kind]:
            value = self.data[key]
            out[key] = dict(value) if isinstance(value, Mapping) else value
        return out


def _json_default(value: object) -> Any:
    # Read-only mappings and tuples-of-pairs views are common in the runtime; write them as objects.
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"value of type {type(value).__name__} is not JSON serialisable")


def _dumps(value: Any) -> str:
    """The one JSON form of a line: fixed separators, no ASCII escaping, no NaN/Infinity."""
    return json.dumps(
        value,
        ensure_ascii=False,
        separators=(", ", ": "),
        allow_nan=False,
        default=_json_default,
    )


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class RecordingWriter:
    """Writes a recording; the header goes out at once so even an empty run leaves a valid file."""

    def __init__(self, path: Path | str, selections: Sequence[str]) -> None:
        if isinstance(selections, str) or not all(isinstance(s, str) for s in selections):
            raise ValueError("selections must be a sequence of query strings")
        self.path = Path(path)
        self.selections: tuple[str, ...] = tuple(selections)
        self.records_written = 0
        # The writer owns the file across recorder cycles; close() and __exit__ release it.
        self._file: TextIO | None = open(  # noqa: SIM115
            self.path, "w", encoding="utf-8", newline="\n"
        )
        header = {"format": FORMAT, "version": VERSION, "selections": list(self.selections)}
        self._file.write(_dumps(header) + "\n")

    @property
    def closed(self) -> bool:
        return self._file is None

    def write_batch(self, records: Iterable[Record]) -> None:
        """Writes one recorder cycle's records, sorted by (t, bus, object, kind, seq)."""
        if self._file is None:
            raise ValueError(f"recording {self.path} is closed")
        ordered = sorted(records, key=Record.sort_key)
        # Serialise everything first: a bad value must not leave half a batch in the file.
        text = "".join(_dumps(record.to_json()) + "\n" for record in ordered)
        self._file.write(text)
        self.records_written += len(ordered)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


# --------------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class _Line:
    number: int
    text: str
    value: dict[str, Any]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A duplicated key would make "exactly these keys" ambiguous; JSON parsers disagree on it.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _parse_line(path: Path | str, number: int, text: str) -> dict[str, Any]:
    try:
        value = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_reject_constant)
    except ValueError as error:  # JSONDecodeError is a ValueError
        detail = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
        raise RecordingError(path, number, f"invalid JSON: {detail}") from None
    if not isinstance(value, dict):
        raise RecordingError(path, number, "expected a JSON object")
    return value


def _check_keys(path: Path | str, number: int, value: dict[str, Any], keys: Sequence[str]) -> None:
    missing = [key for key in keys if key not in value]
    extra = sorted(key for key in value if key not in keys)
    problems = []
    if missing:
        problems.append("missing key" + ("s " if len(missing) > 1 else " ") + ", ".join(missing))
    if extra:
        problems.append("unexpected key" + ("s " if len(extra) > 1 else " ") + ", ".join(extra))
    if problems:
        raise RecordingError(path, number, "; ".join(problems))


def _check_header(path: Path | str, number: int, header: dict[str, Any]) -> None:
    if header.get("format") != FORMAT:
        raise RecordingError(path, number, f"not a recording: header format is not {FORMAT!r}")
    version = header.get("version")
    if not _is_int(version) or version != VERSION:
        raise RecordingError(path, number, f"unsupported recording version {version!r}")
    _check_keys(path, number, header, _HEADER_KEYS)
    selections = header["selections"]
    if not isinstance(selections, list) or not all(isinstance(s, str) for s in selections):
        raise RecordingError(path, number, "header selections must be a list of strings")


def _check_record(path: Path | str, number: int, record: dict[str, Any]) -> None:
    kind = record.get("kind")
    if not isinstance(kind, str) or kind not in _KIND_ORDER:
        raise RecordingError(
            path, number, f"unknown record kind {kind!r} (expected one of {', '.join(KINDS)})"
        )
    _check_keys(path, number, record, _COMMON_KEYS + _DATA_KEYS[kind])
    if not _is_int(record["t"]):
        raise RecordingError(path, number, "record key t must be an integer")
    for key in ("bus", "object"):
        if not isinstance(record[key], str):
            raise RecordingError(path, number, f"record key {key} must be a string")
    for key in _DATA_KEYS[kind]:
        wanted = _DATA_TYPES[key]
        if not isinstance(record[key], wanted):
            what = "a string" if wanted is str else "an object"
            raise RecordingError(path, number, f"record key {key} must be {what}")


def _load(path: Path | str) -> list[_Line]:
    """All lines of a valid recording, with their text kept for ``compare``'s report."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise RecordingError(path, None, f"cannot read: {error.strerror or error}") from None
    chunks = data.split(b"\n")
    if chunks and chunks[-1] == b"":
        chunks.pop()  # the newline that ends the last line
    if not chunks:
        raise RecordingError(path, 1, "missing header (empty file)")
    lines: list[_Line] = []
    for index, chunk in enumerate(chunks):
        number = index + 1
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as error:
            raise RecordingError(
                path, number, f"not valid UTF-8 (byte offset {error.start} in the line)"
            ) from None
        text = text.removesuffix("\r")
        value = _parse_line(path, number, text)
        if number == 1:
            _check_header(path, number, value)
        else:
            _check_record(path, number, value)
        lines.append(_Line(number, text, value))
    return lines


def read_recording(path: Path | str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Reads and validates a recording: its header and its records, in file order."""
    lines = _load(path)
    return lines[0].value, [line.value for line in lines[1:]]


# ----------------------------------------------------------------------------------------- tools


def _detail(record: Mapping[str, Any]) -> str:
    kind = record["kind"]
    if kind == "add":
        return f"{record['class']} {_compact(record['state'])}"
    if kind == "set":
        return _compact(record["values"])
    if kind == "event":
        return f"{record['event']} {_compact(record['args'])}"
    return ""


def _table(rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """Aligned rows: every column but the last padded to its widest cell, two spaces apart."""
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    out = []
    for row in rows:
        cells = [
            cell.rjust(width) if right[column] else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=False))
        ]
        cells.append(row[-1])
        out.append("  ".join(cells).rstrip())
    return out


def show(path: Path | str, out: TextIO, err: TextIO) -> int:
    """``sengen record show``: the recording as a table, one row per record."""
    try:
        _, records = read_recording(path)
    except RecordingError as error:
        print(f"sengen: error: {error}", file=err)
        return 1
    rows = [["t (ns)", "kind", "bus", "object", "detail"]]
    for record in records:
        rows.append(
            [str(record["t"]), record["kind"], record["bus"], record["object"], _detail(record)]
        )
    for line in _table(rows, right=[True, False, False, False]):
        print(line, file=out)
    return 0


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: object key order is formatting, but 1, 1.0 and true are different values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
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


def compare(a: Path | str, b: Path | str, out: TextIO, err: TextIO) -> int:
    """``sengen record compare``: 0 when both recordings hold the same values, line by line."""
    try:
        lines_a = _load(a)
        lines_b = _load(b)
    except RecordingError as error:
        print(f"sengen: error: {error}", file=err)
        return 1
    for index in range(max(len(lines_a), len(lines_b))):
        line_a = lines_a[index] if index < len(lines_a) else None
        line_b = lines_b[index] if index < len(lines_b) else None
        if line_a is not None and line_b is not None and _json_equal(line_a.value, line_b.value):
            continue
        print(f"first difference at line {index + 1}:", file=out)
        print(f"  A: {line_a.text if line_a is not None else '<end of file>'}", file=out)
        print(f"  B: {line_b.text if line_b is not None else '<end of file>'}", file=out)
        return 1
    print(f"recordings are identical ({len(lines_a) - 1} records)", file=out)
    return 0
