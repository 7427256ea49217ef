"""``examples/stepped``: a simulation under ``runMode: virtualTime`` driven by the master clock
(``clockMaster: true``; runtime.md §6.3, §1.12). ``sengen run --until 1s`` advances the master
by one second of virtual time, so the number of cycles is exact and two runs record the same
bytes; on the test kernel the ball's first steps and its first bounce are checked against the
physics.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from example_projects import clean_log, copy_example, importable, matches, sengen_run
from recording_support import read_recording

from sengen.testing import TestKernel

BOUNCE = (
    r"INFO sengen\.component\.instruments: ball bounced at ([0-9.]+) s at ([0-9.]+) m/s,"
    r" after a highest sample of ([0-9.]+) m"
)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("stepped", tmp_path_factory.mktemp("stepped"))
    with importable(folder):
        yield folder


def test_one_second_of_virtual_time_runs_exactly_its_cycles(example: Path) -> None:
    ran = sengen_run(example, "stepped.yaml", "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    # advanceTime(1 s) runs every cycle due in [0, 1 s): 100 of the ball (every 10 ms, the
    # last at 0.99 s) and 10 of the altimeter, which samples from 0.1 s, once it found the ball.
    (ball,) = matches(
        r"INFO sengen\.component\.physics: ball: (\d+) cycle\(s\) up to ([0-9.]+) s,"
        r" height ([0-9.]+) m, (\d+) bounce\(s\)",
        lines,
    )
    assert (ball[1], ball[2], ball[4]) == ("100", "0.990", "1")
    (altimeter,) = matches(
        r"INFO sengen\.component\.instruments: altimeter: (\d+) sample\(s\)", lines
    )
    assert altimeter[1] == "9"
    # Dropped from 1 m at 9.81 m/s2: the floor is reached after sqrt(2 / 9.81) = 0.4515 s, in
    # the step that ends at or after that, and the altimeter heard it.
    (bounce,) = matches(BOUNCE, lines)
    assert float(bounce[1]) == 0.45
    assert math.isclose(float(bounce[2]), math.sqrt(2 * 9.81), rel_tol=0.01)


def test_two_runs_record_the_same_bytes(example: Path) -> None:
    first = sengen_run(example, "record.yaml", "--until", "1s")
    assert first.returncode == 0, first.stderr
    (example / "ball.mcap").rename(example / "first.mcap")
    second = sengen_run(example, "record.yaml", "--until", "1s")
    assert second.returncode == 0, second.stderr
    assert (example / "first.mcap").read_bytes() == (example / "ball.mcap").read_bytes()
    compared = subprocess.run(
        [sys.executable, "-m", "sengen", "record", "compare", "first.mcap", "ball.mcap"],
        cwd=example,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert compared.returncode == 0, compared.stdout + compared.stderr
    # The ball's addition, a change in each of its cycles but the first (which moves nothing),
    # its bounce and its removal at the end.
    _, records = read_recording(example / "ball.mcap")
    kinds = Counter(record.get("kind") for record in records)
    assert kinds == {"add": 1, "set": 99, "event": 1, "remove": 1}
    assert [r["t"] for r in records if r["kind"] == "set"] == [k * 10**7 for k in range(1, 100)]
    # The logs differ at most in the order of the components' last lines, never in a bounce.
    bounces = [[m[0] for m in matches(BOUNCE, clean_log(r.stderr))] for r in (first, second)]
    assert bounces[0] == bounces[1] and len(bounces[0]) == 1


def test_the_ball_moves_only_when_stepped_and_bounces_on_time(example: Path) -> None:
    with TestKernel.from_file(example / "stepped.yaml") as tk:
        # Typed Any: the generated classes are not there when mypy checks this file.
        ball: Any = tk.object("local.lab.ball")
        assert tk.get_time().ns == 0 and (ball.height, ball.velocity) == (1.0, 0.0)
        tk.step()  # t = 0: the first cycle has no elapsed time, so nothing moves
        assert (ball.height, ball.velocity) == (1.0, 0.0)
        tk.step()  # t = 10 ms: one step of 10 ms
        velocity = -9.81 * 0.01
        assert (ball.height, ball.velocity) == (1.0 + velocity * 0.01, velocity)
        steps = tk.run_until(lambda: ball.bounces == 1, max_steps=100)
        # Every step is 10 ms, the ball's period (the altimeter's cycles fall on every tenth);
        # the bounce happens in the first step that ends after 0.4515 s.
        bounced_at = tk.get_time().ns - 10_000_000  # the time of the cycle just run
        assert bounced_at == 450_000_000 and steps == 44
        assert ball.height == 0.0 and ball.velocity > 0.0
