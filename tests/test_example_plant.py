"""The ``examples/plant`` system end to end: ``sengen run`` of its configuration, three
components at three rates on one bus (runtime.md §1.7, §1.12).

The example's configuration and implementation module are copied into a temporary folder with
its STL generated beside them (``gen.plant``), so the run never depends on a locally built
``examples/plant/gen``. The behaviour is asserted through the log lines the objects write;
relations only, never exact timings.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sengen

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plant"

CROSSED = re.compile(
    r"^INFO sengen\.component\.control: level (?P<level>[0-9.]+) m crossed the threshold"
    r" (?P<threshold>[0-9.]+) m at (?P<at>[0-9.]+) s$"
)
PUMP = re.compile(
    r"^INFO sengen\.component\.pumps: pump feed summary: (?P<cycles>\d+) cycle\(s\),"
    r" flow [0-9.]+ m3/s, (?P<alarms>\d+) alarm\(s\) heard$"
)
TANK = re.compile(
    r"^INFO sengen\.component\.physics: tank tank summary: (?P<cycles>\d+) cycle\(s\),"
    r" level (?P<level>[0-9.]+) m$"
)
CONTROLLER = re.compile(
    r"^INFO sengen\.component\.control: controller level summary: (?P<cycles>\d+) cycle\(s\),"
    r" (?P<crossings>\d+) crossing\(s\), max level (?P<max>[0-9.]+) m,"
    r" threshold (?P<threshold>[0-9.]+) m, (?P<commands>\d+) pump command\(s\)$"
)


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plant")
    for name in ("plant.yaml", "plant_impl.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    return folder


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sengen", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _one(pattern: re.Pattern[str], lines: list[str]) -> re.Match[str]:
    found = [m for m in map(pattern.match, lines) if m is not None]
    assert len(found) == 1, (pattern.pattern, lines)
    return found[0]


def test_the_plant_runs_at_three_rates_and_keeps_the_level_under_control(plant: Path) -> None:
    ran = _run("plant.yaml", "--until", "2s", cwd=plant)
    assert ran.returncode == 0, ran.stderr
    lines = ran.stderr.splitlines()
    # A clean run and shut-down: nothing above INFO, no traceback. The real-time loop's warnings
    # of a late wake-up (runtime.md §6.3) say that the machine was busy, not that the plant failed.
    late = re.compile(r"WARNING sengen\.kernel: \w+ missed frame \((overslept|interruption)\)$")
    assert all(
        line.startswith(("INFO ", "DEBUG ")) or late.match(line) for line in lines
    ), ran.stderr
    assert "Traceback" not in ran.stderr

    crossed, pump, tank, control = (_one(p, lines) for p in (CROSSED, PUMP, TANK, CONTROLLER))
    # The first crossing is logged once, while running, before the controller's summary.
    assert lines.index(crossed.group(0)) < lines.index(control.group(0))
    threshold = float(control["threshold"])
    assert float(crossed["threshold"]) == threshold
    assert float(crossed["level"]) >= threshold
    # From 0.1 m, filling at 0.8 - 0.2 m3/s into 1 m2 takes at least 0.67 s to reach 0.5 m.
    assert 0.5 < float(crossed["at"]) < 2.0
    assert int(control["crossings"]) >= 1
    assert float(control["max"]) >= float(crossed["level"])
    # Switched on at start, off at the crossing: through the pump's writable property.
    assert int(control["commands"]) >= 2
    # The pump heard the controller's event (at most once per crossing).
    assert 1 <= int(pump["alarms"]) <= int(control["crossings"])
    # The pump is off since the crossing: the level is not above its maximum.
    assert float(tank["level"]) <= float(control["max"])
    # 50 Hz > 20 Hz > 10 Hz.
    assert int(tank["cycles"]) > int(control["cycles"]) > int(pump["cycles"]) > 0


def test_the_configuration_checks_and_a_broken_copy_is_reported(plant: Path) -> None:
    checked = _run("plant.yaml", "--check", cwd=plant)
    assert checked.returncode == 0, checked.stderr
    text = (plant / "plant.yaml").read_text()
    assert text.count("freqHz: 20") == 1
    (plant / "broken.yaml").write_text(text.replace("freqHz: 20", "freqHz: 0"))
    broken = _run("broken.yaml", "--check", cwd=plant)
    assert broken.returncode == 1
    assert (
        "broken.yaml: build[2].freqHz: invalid frequency value '0' for pipeline 'control'"
        in broken.stderr
    )
    assert "Traceback" not in broken.stderr
