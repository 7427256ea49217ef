"""Recording files (runtime.md §9.2): writer order, determinism, strict reading, show, compare."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from sengen.runtime.components.recorder.recording import (
    Record,
    RecordingError,
    RecordingWriter,
    compare,
    read_recording,
    show,
)

HEADER = '{"format": "sengen-recording", "version": 1, "selections": ["SELECT * FROM local.a"]}'


def sample_records() -> list[Record]:
    return [
        Record(
            0, "add", "local.a", "lamp", 0, {"class": "demo.Lamp", "state": {"on": False, "w": 1.5}}
        ),
        Record(10, "set", "local.a", "lamp", 1, {"values": {"on": True}}),
        Record(10, "event", "local.a", "lamp", 2, {"event": "switched", "args": {"to": "ön"}}),
        Record(20, "remove", "local.a", "lamp", 3, {}),
    ]


def write(path: Path, *batches: list[Record], selections: tuple[str, ...] = ("q",)) -> Path:
    with RecordingWriter(path, list(selections)) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return path


def run_show(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = show(path, out, err)
    return code, out.getvalue(), err.getvalue()


def run_compare(a: Path, b: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = compare(a, b, out, err)
    return code, out.getvalue(), err.getvalue()


def write_text(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------- writer


def test_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", sample_records(), selections=("SELECT * FROM local.a",))
    header, records = read_recording(path)
    assert header == {
        "format": "sengen-recording",
        "version": 1,
        "selections": ["SELECT * FROM local.a"],
    }
    assert records == [
        {
            "t": 0,
            "kind": "add",
            "bus": "local.a",
            "object": "lamp",
            "class": "demo.Lamp",
            "state": {"on": False, "w": 1.5},
        },
        {"t": 10, "kind": "set", "bus": "local.a", "object": "lamp", "values": {"on": True}},
        {
            "t": 10,
            "kind": "event",
            "bus": "local.a",
            "object": "lamp",
            "event": "switched",
            "args": {"to": "ön"},
        },
        {"t": 20, "kind": "remove", "bus": "local.a", "object": "lamp"},
    ]


def test_header_is_written_at_once_and_text_is_utf8(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = RecordingWriter(path, ["a", "b"])
    writer.flush()
    assert path.read_text(encoding="utf-8") == (
        '{"format": "sengen-recording", "version": 1, "selections": ["a", "b"]}\n'
    )
    writer.write_batch(sample_records()[2:3])
    writer.close()
    writer.close()  # idempotent
    assert writer.closed
    raw = path.read_bytes()
    assert "ön".encode() in raw  # not \u00f6
    assert b"\r" not in raw
    assert raw.endswith(b"\n")
    with pytest.raises(ValueError, match="closed"):
        writer.write_batch([])


def test_key_order_is_fixed_and_seq_is_not_written(tmp_path: Path) -> None:
    # Data given in the "wrong" order still comes out as class, state.
    record = Record(5, "add", "b", "o", 99, {"state": {"z": 1, "a": 2}, "class": "C"})
    path = write(tmp_path / "r.jsonl", [record])
    line = path.read_text(encoding="utf-8").splitlines()[1]
    assert line == '{"t": 5, "kind": "add", "bus": "b", "object": "o", "class": "C", ' + (
        '"state": {"z": 1, "a": 2}}'
    )
    assert "seq" not in line and "99" not in line


def test_batch_sort_order(tmp_path: Path) -> None:
    records = [
        Record(2, "set", "b1", "x", 0, {"values": {"v": "t2"}}),
        Record(1, "remove", "b1", "x", 0, {}),
        Record(1, "event", "b1", "x", 0, {"event": "e", "args": {}}),
        Record(1, "set", "b1", "x", 7, {"values": {"v": "seq7"}}),
        Record(1, "set", "b1", "x", 3, {"values": {"v": "seq3"}}),
        Record(1, "add", "b1", "x", 9, {"class": "C", "state": {}}),
        Record(1, "set", "b1", "a", 50, {"values": {"v": "object a"}}),
        Record(1, "set", "a0", "z", 60, {"values": {"v": "bus a0"}}),
        Record(0, "remove", "zz", "zz", 99, {}),
    ]
    path = write(tmp_path / "r.jsonl", records)
    _, written = read_recording(path)
    summary = [
        (r["t"], r["bus"], r["object"], r["kind"], r.get("values", {}).get("v")) for r in written
    ]
    assert summary == [
        (0, "zz", "zz", "remove", None),
        (1, "a0", "z", "set", "bus a0"),
        (1, "b1", "a", "set", "object a"),
        (1, "b1", "x", "add", None),
        (1, "b1", "x", "set", "seq3"),
        (1, "b1", "x", "set", "seq7"),
        (1, "b1", "x", "event", None),
        (1, "b1", "x", "remove", None),
        (2, "b1", "x", "set", "t2"),
    ]


def test_batches_are_sorted_separately(tmp_path: Path) -> None:
    late = Record(9, "set", "b", "o", 0, {"values": {"n": 1}})
    early = Record(1, "set", "b", "o", 0, {"values": {"n": 2}})
    _, written = read_recording(write(tmp_path / "r.jsonl", [late], [early]))
    assert [r["t"] for r in written] == [9, 1]


def test_equal_input_gives_identical_bytes(tmp_path: Path) -> None:
    records = sample_records()
    a = write(tmp_path / "a.jsonl", list(reversed(records)))
    b = write(tmp_path / "b.jsonl", records)
    assert a.read_bytes() == b.read_bytes()
    assert len(a.read_bytes().splitlines()) == 5


def test_read_only_mappings_are_written_as_objects(tmp_path: Path) -> None:
    state = MappingProxyType({"inner": MappingProxyType({"k": [1, 2]})})
    record = Record(0, "add", "b", "o", 0, {"class": "C", "state": state})
    _, written = read_recording(write(tmp_path / "r.jsonl", [record]))
    assert written[0]["state"] == {"inner": {"k": [1, 2]}}


@pytest.mark.parametrize(
    ("kind", "data", "problem"),
    [
        ("update", {}, "unknown record kind"),
        ("set", {}, "data keys"),
        ("remove", {"values": {}}, "data keys"),
        ("add", {"class": "C", "state": {}, "extra": 1}, "data keys"),
        ("event", {"event": 3, "args": {}}, "wrong type"),
    ],
)
def test_bad_records_are_refused_before_writing(
    kind: str, data: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        Record(0, kind, "b", "o", 0, data)


def test_nan_is_refused_and_leaves_no_partial_batch(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, []) as writer:
        good = Record(0, "set", "b", "o", 0, {"values": {"x": 1}})
        bad = Record(1, "set", "b", "o", 1, {"values": {"x": float("nan")}})
        with pytest.raises(ValueError):
            writer.write_batch([good, bad])
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    read_recording(path)  # still a valid (empty) recording


# ------------------------------------------------------------------------------------------ show


def test_show_table(tmp_path: Path) -> None:
    records = [
        *sample_records(),
        Record(1234567, "set", "local.long.bus", "o", 9, {"values": {"a": [1, 2]}}),
    ]
    code, out, err = run_show(write(tmp_path / "r.jsonl", records))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 6
    assert lines[0].split() == ["t", "(ns)", "kind", "bus", "object", "detail"]
    # Columns: t right-aligned to 7 characters ("1234567"), kind padded to 6 ("remove"),
    # bus to 14 ("local.long.bus"), object to 6 ("object"), two spaces apart.
    assert lines[0] == " t (ns)  kind    bus             object  detail"
    assert lines[1] == '      0  add     local.a         lamp    demo.Lamp {"on":false,"w":1.5}'
    assert lines[2] == '     10  set     local.a         lamp    {"on":true}'
    assert lines[3] == '     10  event   local.a         lamp    switched {"to":"ön"}'
    assert lines[4] == "     20  remove  local.a         lamp"
    assert lines[5] == '1234567  set     local.long.bus  o       {"a":[1,2]}'
    detail = lines[0].index("detail")
    assert lines[1][detail:].startswith("demo.Lamp") and lines[5][detail:].startswith("{")
    assert lines[1][detail - 2 : detail] == "  "


def test_show_empty_recording(tmp_path: Path) -> None:
    code, out, _ = run_show(write(tmp_path / "r.jsonl"))
    assert code == 0
    assert out == "t (ns)  kind  bus  object  detail\n"


def test_show_malformed(tmp_path: Path) -> None:
    path = write_text(tmp_path / "bad.jsonl", HEADER, "{not json")
    code, out, err = run_show(path)
    assert code == 1 and out == ""
    assert err.startswith(f"sengen: error: {path}:2: invalid JSON")


# --------------------------------------------------------------------------------------- compare


def test_compare_identical_despite_formatting(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", sample_records(), selections=("SELECT * FROM local.a",))
    # Same values, other formatting and key order.
    lines = [json.loads(line) for line in a.read_text(encoding="utf-8").splitlines()]
    b = tmp_path / "b.jsonl"
    b.write_text(
        "".join(json.dumps(v, sort_keys=True, separators=(",", ":")) + "\n" for v in lines),
        encoding="utf-8",
    )
    assert a.read_bytes() != b.read_bytes()
    code, out, err = run_compare(a, b)
    assert (code, out, err) == (0, "recordings are identical (4 records)\n", "")


SET_PREFIX = '{"t": 10, "kind": "set", "bus": "local.a", "object": "lamp", '


def test_compare_reports_first_difference(tmp_path: Path) -> None:
    records = sample_records()
    a = write(tmp_path / "a.jsonl", records)
    changed = [*records]
    changed[1] = Record(10, "set", "local.a", "lamp", 1, {"values": {"on": False}})
    changed[3] = Record(21, "remove", "local.a", "lamp", 3, {})
    b = write(tmp_path / "b.jsonl", changed)
    code, out, _ = run_compare(a, b)
    assert code == 1
    assert out.splitlines() == [
        "first difference at line 3:",
        "  A: " + SET_PREFIX + '"values": {"on": true}}',
        "  B: " + SET_PREFIX + '"values": {"on": false}}',
    ]


def test_compare_header_difference(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", selections=("q1",))
    b = write(tmp_path / "b.jsonl", selections=("q2",))
    code, out, _ = run_compare(a, b)
    assert code == 1
    assert out.splitlines()[0] == "first difference at line 1:"
    assert '"q1"' in out.splitlines()[1] and '"q2"' in out.splitlines()[2]


def test_compare_distinguishes_int_and_float(tmp_path: Path) -> None:
    a = write_text(
        tmp_path / "a.jsonl",
        HEADER,
        '{"t":1,"kind":"set","bus":"b","object":"o",' '"values":{"x":1}}',
    )
    b = write_text(
        tmp_path / "b.jsonl",
        HEADER,
        '{"t":1,"kind":"set","bus":"b","object":"o",' '"values":{"x":1.0}}',
    )
    code, out, _ = run_compare(a, b)
    assert code == 1 and "line 2" in out


def test_compare_different_lengths(tmp_path: Path) -> None:
    records = sample_records()
    a = write(tmp_path / "a.jsonl", records)
    b = write(tmp_path / "b.jsonl", records[:2])
    code, out, _ = run_compare(a, b)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "first difference at line 4:"
    assert lines[1].startswith('  A: {"t": 10, "kind": "event"')
    assert lines[2] == "  B: <end of file>"
    code, out, _ = run_compare(b, a)
    assert code == 1
    assert out.splitlines()[1] == "  A: <end of file>"


def test_compare_malformed(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", sample_records())
    bad = write_text(tmp_path / "bad.jsonl", HEADER, '{"t": 0, "kind": "add"}')
    code, out, err = run_compare(good, bad)
    assert code == 1 and out == ""
    assert err.startswith(f"sengen: error: {bad}:2: missing keys")


# ------------------------------------------------------------------------------------- malformed

RECORD = '{"t": 1, "kind": "remove", "bus": "b", "object": "o"}'


@pytest.mark.parametrize(
    ("lines", "line", "problem"),
    [
        (["{oops"], 1, "invalid JSON"),
        (["[1, 2]"], 1, "expected a JSON object"),
        ([RECORD], 1, "not a recording"),
        (['{"format": "other", "version": 1, "selections": []}'], 1, "not a recording"),
        (['{"format": "sengen-recording", "version": 2, "selections": []}'], 1, "version 2"),
        (['{"format": "sengen-recording", "version": true, "selections": []}'], 1, "version"),
        (['{"format": "sengen-recording", "version": 1}'], 1, "missing key selections"),
        (['{"format": "sengen-recording", "version": 1, "selections": [1]}'], 1, "selections"),
        (
            ['{"format": "sengen-recording", "version": 1, "selections": [], "host": "x"}'],
            1,
            "unexpected key host",
        ),
        ([HEADER, RECORD, "not json"], 3, "invalid JSON"),
        ([HEADER, RECORD, ""], 3, "invalid JSON"),
        ([HEADER, '{"t": 1, "kind": "remove", "bus": "b"}'], 2, "missing key object"),
        ([HEADER, '{"t": 1, "kind": "remove", "bus": "b", "object": "o", "seq": 1}'], 2, "seq"),
        ([HEADER, '{"t": 1, "kind": "set", "bus": "b", "object": "o"}'], 2, "missing key values"),
        ([HEADER, '{"t": 1, "kind": "update", "bus": "b", "object": "o"}'], 2, "unknown record"),
        ([HEADER, '{"t": 1, "bus": "b", "object": "o"}'], 2, "unknown record kind None"),
        ([HEADER, '{"t": "1", "kind": "remove", "bus": "b", "object": "o"}'], 2, "t must be"),
        ([HEADER, '{"t": 1.0, "kind": "remove", "bus": "b", "object": "o"}'], 2, "t must be"),
        ([HEADER, '{"t": 1, "kind": "remove", "bus": 3, "object": "o"}'], 2, "bus must be"),
        (
            [HEADER, '{"t": 1, "kind": "set", "bus": "b", "object": "o", "values": []}'],
            2,
            "values must be an object",
        ),
        (
            [HEADER, '{"t": 1, "kind": "add", "bus": "b", "object": "o", "class": 1, "state": {}}'],
            2,
            "class must be a string",
        ),
        ([HEADER, RECORD.replace('"o"}', '"o", "object": "p"}')], 2, "duplicate key"),
        (
            [HEADER, '{"t": 1, "kind": "set", "bus": "b", "object": "o", "values": {"x": NaN}}'],
            2,
            "NaN",
        ),
    ],
)
def test_malformed_files(tmp_path: Path, lines: list[str], line: int, problem: str) -> None:
    path = write_text(tmp_path / "bad.jsonl", *lines)
    with pytest.raises(RecordingError) as caught:
        read_recording(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert problem in caught.value.problem
    code, out, err = run_show(path)
    assert code == 1 and out == ""
    assert err == f"sengen: error: {path}:{line}: {caught.value.problem}\n"


def test_empty_file_is_missing_header(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    code, _, err = run_show(path)
    assert code == 1
    assert err == f"sengen: error: {path}:1: missing header (empty file)\n"


def test_non_utf8_bytes(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        HEADER.encode() + b"\n" + RECORD.replace("o", "\xf6").encode("latin-1") + b"\n"
    )
    code, _, err = run_show(path)
    assert code == 1
    assert err.startswith(f"sengen: error: {path}:2: not valid UTF-8")


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.jsonl"
    code, out, err = run_show(path)
    assert code == 1 and out == ""
    assert err.startswith(f"sengen: error: {path}: cannot read")
    code, _, err = run_compare(path, path)
    assert code == 1 and "cannot read" in err


def test_file_without_final_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(HEADER + "\n" + RECORD, encoding="utf-8")
    header, records = read_recording(path)
    assert header["selections"] == ["SELECT * FROM local.a"]
    assert records == [{"t": 1, "kind": "remove", "bus": "b", "object": "o"}]


def test_show_into_a_pipe_closed_early_is_not_an_error(tmp_path: Path) -> None:
    """``sengen record show FILE | head``: the reader leaving is no internal error."""
    import subprocess
    import sys

    many = [
        Record(t, "set", "local.a", "lamp", t, {"values": {"on": t % 2 == 0}})
        for t in range(20_000)
    ]
    path = write(tmp_path / "long.jsonl", many)
    show = subprocess.Popen(
        [sys.executable, "-m", "sengen", "record", "show", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert show.stdout is not None and show.stderr is not None
    show.stdout.readline()
    show.stdout.close()  # as head does after its lines
    errors = show.stderr.read().decode()
    assert show.wait(timeout=60) == 0, errors
    assert "internal error" not in errors
