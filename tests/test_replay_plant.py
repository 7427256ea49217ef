"""Issue 23's replay acceptance on ``examples/plant``: a virtual-time run recorded, replayed in
a process that does not import the plant's generated package, the replay recorded, and
``sengen record compare`` finds both archives identical; a seek to the middle, then play, gives
the states the original had at those times.

The example is copied into a temporary folder with its STL generated beside it (as
``test_example_plant`` does); the replay runs in another folder, without ``gen``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sengen
from sengen.runtime import TimeStamp
from sengen.runtime.archive import ArchiveReader
from sengen.testing import TestKernel

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plant"
SELECTION = "SELECT * FROM local.plant"


def _sengen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _recorder(file: str) -> str:
    return (
        "load:\n"
        "  - name: recorder\n"
        f"    recordings: [{{name: run, file: {file}, selections: ['{SELECTION}']}}]\n"
    )


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The archive of a 2 s virtual-time run of the plant."""
    folder = tmp_path_factory.mktemp("plant")
    for name in ("plant.yaml", "plant_impl.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    config = "include: [plant.yaml]\nkernel: {runMode: virtualTime, logConfig: {level: warn}}\n"
    (folder / "record.yaml").write_text(config + _recorder("run.mcap"))
    ran = _sengen("run", "record.yaml", "--until", "2s", cwd=folder)
    assert ran.returncode == 0, ran.stderr
    return folder / "run.mcap"


def test_a_recorded_replay_is_identical_to_the_original(original: Path, tmp_path: Path) -> None:
    (tmp_path / "record.yaml").write_text(_recorder("replay.mcap"))
    ran = _sengen("replay", str(original), "record.yaml", "--local", "--virtual", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    compared = _sengen("record", "compare", str(original), "replay.mcap", cwd=tmp_path)
    assert compared.returncode == 0, compared.stdout
    with ArchiveReader(original) as reader:
        counts = reader.info().counts
    assert counts["state"] > 50 and counts["event"] >= 1  # the plant did something


def _fold(archive: Path, until: int) -> dict[str, dict[str, Any]]:
    """Every object's state at ``until``, from the records one by one (not from keyframes)."""
    state: dict[str, dict[str, Any]] = {}
    with ArchiveReader(archive) as reader:
        for record in reader.records(end_ns=until):
            if record.kind == "added":
                state[record.address] = dict(record.values)
            elif record.kind == "state":
                state[record.address].update(record.values)
            elif record.kind == "removed":
                del state[record.address]
    return state


@pytest.fixture
def replay(original: Path) -> Iterator[TestKernel]:
    config = f"load:\n  - name: replayer\n    archive: '{original}'\n    paused: true\n"
    with TestKernel.from_yaml(config) as kernel:
        yield kernel


def _replayed(tk: TestKernel) -> dict[str, dict[str, Any]]:
    """The replayed objects' states, as the archive writes them."""
    from sengen.runtime.kernel.extension import json_form

    return {
        f"local/plant/{obj.name}": {
            p.stl_name: json_form(p.type, getattr(obj, p.py_name)) for p in obj.META.all_properties
        }
        for obj in tk.objects("local.plant")
    }


def test_seek_to_the_middle_then_play_gives_the_original_states(
    original: Path, replay: TestKernel
) -> None:
    tk = replay
    tk.step()
    control: Any = tk.object("local.kernel.replay")
    middle = (control.start_time.ns + control.end_time.ns) // 2 + 3_000_000
    tk.call(control, "seek", TimeStamp(middle))
    tk.step()
    assert control.time == TimeStamp(middle)
    assert _replayed(tk) == _fold(original, middle)
    tk.call(control, "play")
    tk.step(17)
    position = control.time.ns
    assert position > middle
    assert _replayed(tk) == _fold(original, position)
