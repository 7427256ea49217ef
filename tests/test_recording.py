"""The recorder component and ``sengen record`` (runtime.md §9.2): a run of examples/plant to an
archive a third the size of the old JSON Lines, valid for generic MCAP tools; the control object;
a SIGKILL and a full disk; configurations refused before start; info, show, export, compare."""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import mcap.reader
import pytest
from example_projects import copy_example, importable, sengen_run
from mcap.opcode import Opcode

from sengen.cli.main import main
from sengen.runtime import Duration, PreloadError
from sengen.runtime.archive import ArchiveError, ArchiveReader
from sengen.runtime.archive import writer as writer_module
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.sen.kernel.recorder import RecordingState
from sengen.testing import TestKernel

#: ``sengen run`` of examples/plant for 10 s of virtual time recorded in the JSON Lines format
#: this one replaced (the commit before it): 62,438 bytes. The archive must be a third of that.
OLD_JSONL_BYTES = 62_438

PLANT_OBJECTS = ("local/plant/feed", "local/plant/level", "local/plant/tank")


def recorder(*recordings: str, mode: str = "virtualTime") -> str:
    entries = "".join(f"      - {r}\n" for r in recordings)
    return (
        f"include: plant.yaml\nkernel: {{runMode: {mode}}}\n"
        f"load:\n  - name: recorder\n    freqHz: 30\n    recordings:\n{entries}"
    )


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("plant", tmp_path_factory.mktemp("plant"))
    with importable(folder):
        yield folder


@pytest.fixture(scope="module")
def archive(plant: Path) -> Path:
    """10 s of the plant under virtual time."""
    (plant / "rec.yaml").write_text(
        recorder("{name: r, file: run.mcap, selections: ['SELECT * FROM local.plant']}")
    )
    ran = sengen_run(plant, "rec.yaml", "--until", "10s")
    assert ran.returncode == 0, ran.stderr
    return plant / "run.mcap"


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_ten_seconds_of_the_plant_take_a_third_of_the_old_size_and_suit_mcap_tools(
    archive: Path,
) -> None:
    size = archive.stat().st_size
    assert size <= OLD_JSONL_BYTES / 3, size
    validators: dict[int, jsonschema.Draft202012Validator] = {}
    topics = set()
    with archive.open("rb") as stream:
        for schema, channel, message in mcap.reader.make_reader(stream).iter_messages():
            assert schema is not None
            if schema.id not in validators:
                validators[schema.id] = jsonschema.Draft202012Validator(json.loads(schema.data))
            validators[schema.id].validate(json.loads(message.data))
            topics.add(channel.topic)
    assert set(PLANT_OBJECTS) <= topics
    with ArchiveReader(archive) as reader:
        info = reader.info()
        # Every commit of the tank (50 Hz for 10 s, the first at its addition) is there.
        tank = [r for r in reader.records(objects=["local/plant/tank"]) if r.kind == "state"]
        assert len(tank) == 499 and [r.time_ns for r in tank][:2] == [20_000_000, 40_000_000]
        assert info.objects == PLANT_OBJECTS and not info.cut_short
        assert info.classes == ("plant.Controller", "plant.Pump", "plant.Tank")
        assert info.counts["added"] == 3 and info.counts["event"] > 0
        assert (info.start_ns, info.end_ns) == (0, 9_980_000_000)
        middle = reader.state_at(5 * 10**9)
        assert set(middle) == set(PLANT_OBJECTS)
        assert middle["local/plant/tank"].values["level"] == pytest.approx(
            [r for r in tank if r.time_ns <= 5 * 10**9][-1].values["level"]
        )


def test_two_virtual_time_runs_write_the_same_bytes(plant: Path, archive: Path) -> None:
    again = sengen_run(plant, "rec.yaml", "--until", "10s")
    assert again.returncode == 0, again.stderr
    assert archive.read_bytes() == (plant / "run.mcap").read_bytes()


def test_record_info_text_and_json(archive: Path) -> None:
    code, out, err = cli("record", "info", str(archive))
    assert code == 0 and err == ""
    text = out.replace("cut short", "cut_short").replace("time range", "time_range")
    lines = dict(line.split(None, 1) for line in text.splitlines())
    assert lines["duration"] == "9980 ms"
    assert lines["time_range"] == "0 .. 9980000000 ns"
    assert lines["objects"].startswith("3: local/plant/feed, local/plant/level, local/plant/tank")
    assert lines["cut_short"] == "no" and "zstd" in lines["file"]
    assert lines["records"].startswith(f"{sum(ArchiveReader(archive).info().counts.values())} (")
    code, out, _ = cli("record", "info", str(archive), "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["cut_short"] is False and document["records"]["added"] == 3


def test_record_info_starts_lean(archive: Path) -> None:
    """``record info`` reads a summary: it loads none of the compiler, the configuration models,
    the object layer or mcap's writer (each costs tens of ms of a fresh process)."""
    ran = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sengen", "record", "info", str(archive)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    loaded = {line.rsplit("|", 1)[-1].strip() for line in ran.stderr.splitlines()}
    assert "sengen.runtime.archive.reader" in loaded
    heavy = ("pydantic", "lark", "jinja2", "sengen.stl", "sengen.runtime.objects", "mcap.writer")
    assert not [n for n in loaded if n.split(".")[0] in heavy or n.startswith(heavy)]


def test_record_show_filters_by_object_property_and_time(archive: Path) -> None:
    code, out, _ = cli(
        "record",
        "show",
        str(archive),
        "--object",
        "local/plant/tank",
        "--property",
        "level",
        "--start",
        "1s",
        "--end",
        "1100ms",
    )
    assert code == 0
    rows = out.splitlines()
    assert rows[0].split() == ["t", "(ns)", "kind", "object", "detail"]
    times = [int(row.split()[0]) for row in rows[1:]]
    assert times == [1_000_000_000 + k * 20_000_000 for k in range(6)]
    assert all('{"level":' in row and "local/plant/tank" in row for row in rows[1:])


def test_record_export_csv_and_jsonl(archive: Path, tmp_path: Path) -> None:
    out = tmp_path / "tank.csv"
    code, _, err = cli(
        "record", "export", str(archive), "--object", "local/plant/tank", "-o", str(out)
    )
    assert code == 0, err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 500 and rows[0]["t_ns"] == "0" and rows[0]["area"] == "1.0"
    # Each row holds the whole state: the static area stays in every row.
    assert {row["area"] for row in rows} == {"1.0"}
    assert [float(row["level"]) for row in rows[:2]] == [0.1, 0.096]
    code, text, _ = cli("record", "export", str(archive), "--format", "jsonl", "--end", "0s")
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and [line["kind"] for line in lines] == ["added"] * 3
    assert lines[2]["values"]["level"] == 0.1 and lines[2]["class"] == "plant.Tank"


def test_record_compare(archive: Path, plant: Path, tmp_path: Path) -> None:
    assert cli("record", "compare", str(archive), str(archive))[:2] == (
        0,
        f"archives are identical ({sum(ArchiveReader(archive).info().counts.values())} records)\n",
    )
    (plant / "other.yaml").write_text(
        recorder("{name: r, file: other.mcap, selections: ['SELECT * FROM local.plant']}")
    )
    ran = sengen_run(plant, "other.yaml", "--until", "2s")
    assert ran.returncode == 0, ran.stderr
    code, out, _ = cli("record", "compare", str(archive), str(plant / "other.mcap"))
    # The same up to where the shorter run removed its objects at its end.
    lines = out.splitlines()
    assert code == 1 and lines[0].startswith("first difference at record ")
    assert lines[1].startswith("  A: ") and " state local/plant/" in lines[1]
    assert lines[2].startswith("  B: ") and " removed local/plant/" in lines[2]


def test_bad_archives_and_arguments_are_one_line_exit_1(archive: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(archive.read_bytes()[:300])
    cases = [
        (("show", str(fifo)), "not a regular file"),
        (("info", str(tmp_path / "none.mcap")), "No such file"),
        (("show", str(archive), "--object", "local/plant/nosuch"), "holds no object"),
        (("show", str(archive), "--start", "11s"), "--start 11s is outside"),
        (("export", str(archive), "--end", "20 s"), "--end 20 s is outside"),
        (("compare", str(archive), str(tmp_path)), "not a regular file"),
    ]
    for args, problem in cases:
        code, out, err = cli("record", *args)
        assert code == 1 and out == "" and err.count("\n") == 1 and problem in err, (args, err)
    code, out, _ = cli("record", "info", str(cut))  # cut short: read as far as it goes
    assert code == 0 and "cut short   yes" in out


def test_the_control_object_starts_and_stops_recordings_and_counts(
    plant: Path, tmp_path: Path
) -> None:
    first, second = tmp_path / "one.mcap", tmp_path / "two.mcap"
    text = recorder(
        f"{{name: r, file: '{first}', selections: ['SELECT * FROM local.plant'],"
        " autoStart: false}",
        f"{{name: tanks, file: '{tmp_path / 'tanks.mcap'}',"
        " selections: ['SELECT plant.Tank FROM local.plant']}",
    ).replace("include: plant.yaml", f"include: {plant / 'plant.yaml'}")
    with TestKernel.from_yaml(text) as tk:
        control: Any = tk.object("local.kernel.r")
        tanks: Any = tk.object("local.kernel.tanks")
        tk.step(3)
        assert control.state == RecordingState.idle and control.records == 0
        assert tanks.state == RecordingState.recording
        tk.call(control, "start", "")
        tk.step(40)
        assert control.state == RecordingState.recording and control.objects == 3
        assert control.records > 20 and control.bytes_ > 0 and control.drops == 0
        tk.call(control, "stop")
        tk.step()
        assert control.state == RecordingState.idle
        written = control.records
        tk.call(control, "start", str(second))
        tk.step(5)
        assert control.file == str(second) and tanks.objects == 1
    with ArchiveReader(first) as reader:
        assert sum(reader.info().counts.values()) == written and not reader.cut_short
    with ArchiveReader(second) as reader:  # a new archive: every object added again
        first_seen: dict[str, str] = {}
        for record in reader.records():
            first_seen.setdefault(record.address, record.kind)
        assert first_seen == dict.fromkeys(PLANT_OBJECTS, "added")
    with ArchiveReader(tmp_path / "tanks.mcap") as reader:
        assert reader.info().objects == ("local/plant/tank",)


def test_a_full_disk_stops_the_recording_with_one_error_and_the_plant_runs_on(
    plant: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refused: list[int] = []

    class Full(io.BufferedWriter):
        """A disk that fills up as the second chunk is written: however much the plant
        changes, the first chunk (with the additions) is on disk and the second is not."""

        chunks = 0
        full = False

        def write(self, data: Any) -> int:
            chunk = bytes(data[:1]) == bytes([Opcode.CHUNK])
            if self.full or (chunk and self.chunks):
                self.full = True
                refused.append(len(data))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            self.chunks += chunk
            return super().write(data)

    # The archive's file as the writer opens it: every byte of the archive goes through it.
    monkeypatch.setattr(
        writer_module, "open", lambda path, mode: Full(io.FileIO(path, mode)), raising=False
    )
    path = tmp_path / "full.mcap"
    text = recorder(
        f"{{name: r, file: '{path}', selections: ['SELECT * FROM local.plant'],"
        " flushPeriod: 100 ms}"
    ).replace("include: plant.yaml", f"include: {plant / 'plant.yaml'}")
    caplog.set_level(logging.INFO)
    assert Kernel(load_config_text(text)).run(Duration.parse("3 s")) == 0
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [f"recording r stopped: cannot write archive {path}: No space left on device"]
    # The chunk that filled the disk and the one attempt to finish the archive, nothing after:
    # a recorder that swallowed the error would go on writing at every flush.
    assert len(refused) == 2, refused
    summaries = [r.getMessage() for r in caplog.records if "summary" in r.getMessage()]
    assert any("tank tank summary: 150 cycle(s)" in line for line in summaries), summaries
    with ArchiveReader(path) as reader:  # what was flushed before the disk filled up
        assert reader.cut_short and reader.info().counts["added"] == 3


def test_a_sigkilled_recorder_leaves_an_archive_read_up_to_its_last_flush(
    plant: Path, tmp_path: Path
) -> None:
    path = tmp_path / "killed.mcap"
    (plant / "killed.yaml").write_text(
        recorder(
            f"{{name: r, file: '{path}', selections: ['SELECT * FROM local.plant'],"
            " flushPeriod: 50 ms}",
            mode="realTime",
        )
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "sengen", "run", "killed.yaml"],
        cwd=plant,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        seen = 0
        deadline = time.monotonic() + 30
        while seen < 40 and time.monotonic() < deadline:  # the flushed chunks are the signal
            time.sleep(0.05)
            with contextlib.suppress(ArchiveError), ArchiveReader(path) as reader:
                seen = reader.info().counts["state"]
        assert seen >= 40, "the recorder flushed nothing"
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL, stderr
    with ArchiveReader(path) as reader:
        info = reader.info()
        records = list(reader.records())
        assert info.cut_short and info.counts["state"] >= seen
        assert [r.kind for r in records[:3]] == ["added"] * 3
        assert [r.time_ns for r in records] == sorted(r.time_ns for r in records)
        assert set(reader.state_at(info.end_ns)) == set(PLANT_OBJECTS)
    code, out, _ = cli("record", "info", str(path))
    assert code == 0 and "cut short   yes" in out


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            "{name: r, file: x.mcap, selections: ['SELECT * FROM']}",
            "recordings[0].selections: invalid selection 'SELECT * FROM': ",
        ),
        (
            "{name: r, file: PLANT/plant.yaml/x.mcap, selections: ['SELECT * FROM local.plant']}",
            "recordings[0].file: cannot record to PLANT/plant.yaml/x.mcap:"
            " 'PLANT/plant.yaml/x.mcap' cannot be created: 'PLANT/plant.yaml' is not a folder",
        ),
        (
            "{name: r, file: x.mcap, selections: ['SELECT * FROM local.plant'],"
            " keyframePeriod: 0 s}",
            "recordings[0].keyframePeriod: invalid Duration '0 s' (must be greater than 0)",
        ),
        (
            "{name: r, file: x.mcap, selections: ['SELECT * FROM local.plant'],"
            " compression: gzip}",
            "recordings[0].compression: ",
        ),
        (
            "{name: r, file: x.mcap, selections: ['SELECT * FROM local.plant']}\n      - "
            "{name: r, file: y.mcap, selections: ['SELECT * FROM local.plant']}",
            "two recordings with the name 'r'",
        ),
    ],
)
def test_bad_recordings_are_refused_with_the_configuration(
    plant: Path, entry: str, problem: str
) -> None:
    text = recorder(entry.replace("PLANT", str(plant))).replace(
        "include: plant.yaml", f"include: {plant / 'plant.yaml'}"
    )
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    (line,) = caught.value.problems
    assert problem.replace("PLANT", str(plant)) in line, line


def test_sengen_run_refuses_a_bad_recording_before_start(plant: Path) -> None:
    (plant / "bad.yaml").write_text(
        recorder("{name: r, file: x.mcap, selections: ['SELECT * FROM']}")
    )
    for args in (("--check",), ("--until", "1s")):
        ran = sengen_run(plant, "bad.yaml", *args)
        assert ran.returncode == 1, ran.stderr
        assert "invalid selection 'SELECT * FROM'" in ran.stderr, ran.stderr
        assert "Traceback" not in ran.stderr and "summary" not in ran.stderr, ran.stderr
    assert not (plant / "x.mcap").exists()


def test_an_archive_that_cannot_be_created_fails_the_start(
    plant: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refused(path: Any, mode: str) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writer_module, "open", refused, raising=False)
    text = recorder(
        f"{{name: r, file: '{tmp_path / 'x.mcap'}', selections: ['SELECT * FROM local.plant']}}"
    ).replace("include: plant.yaml", f"include: {plant / 'plant.yaml'}")
    assert Kernel(load_config_text(text)).run(Duration.parse("1 s")) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    # Bad input: one line, no traceback.
    assert errors[0] == (
        f"error while loading component recorder: recording r: cannot write archive"
        f" {tmp_path / 'x.mcap'}: Permission denied"
    )
    assert not any("summary" in r.getMessage() for r in caplog.records)  # nothing ran
