"""The ``examples/replay_stats`` walk-through: a station recorded under virtual time, its archive
replayed (in a process that imports no generated package) into a component whose CSV must hold
exactly the statistics of the archive's own records.

The example is copied into a temporary folder with its STL generated beside it, as the other
example tests do.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

import sengen
from sengen.runtime.archive import ArchiveReader

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "replay_stats"


def _sengen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replay_stats")
    for name in ("station.yaml", "record.yaml", "stats.yaml", "stats.py", "weather_impl.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    return folder


def _expected(archive: Path) -> dict[str, list[object]]:
    """Each thermometer's statistics from the records: every temperature it had on its bus,
    but the one committed at the instant it left (which no subscriber sees)."""
    readings: dict[str, list[tuple[int, float]]] = defaultdict(list)
    frosts: dict[str, int] = defaultdict(int)
    left: dict[str, int] = {}
    with ArchiveReader(archive) as reader:
        for record in reader.records():
            name = record.address.rsplit("/", 1)[1]
            if record.kind in ("added", "state") and "temperature" in record.values:
                readings[name].append((record.time_ns, record.values["temperature"]))
            elif record.kind == "event":
                frosts[name] += 1
            elif record.kind == "removed":
                left[name] = record.time_ns
    found: dict[str, list[object]] = {}
    for name, timed in readings.items():
        seen = [t for at, t in timed if at != left.get(name)]
        mean = round(sum(seen) / len(seen), 3)
        found[name] = [len(seen), min(seen), mean, max(seen), frosts[name]]
    return found


def test_a_replay_into_a_statistic_gives_the_archive_s_statistics(station: Path) -> None:
    recorded = _sengen("run", "record.yaml", "--until", "30s", cwd=station)
    assert recorded.returncode == 0, recorded.stderr
    info = _sengen("record", "info", "station.mcap", cwd=station)
    assert info.returncode == 0 and "weather.Thermometer" in info.stdout, info.stdout
    shutil.rmtree(station / "gen")  # the replay must not need the generated package
    replayed = _sengen("replay", "station.mcap", "stats.yaml", "--local", "--virtual", cwd=station)
    assert replayed.returncode == 0, replayed.stderr
    with open(station / "stats.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["thermometer", "samples", "min", "mean", "max", "frosts"]
    found = {
        row[0]: [int(row[1]), float(row[2]), float(row[3]), float(row[4]), int(row[5])]
        for row in rows[1:]
    }
    expected = _expected(station / "station.mcap")
    assert found == expected
    assert set(found) == {"garden", "roof"} and all(v[4] > 0 for v in found.values())
