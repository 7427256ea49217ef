"""``examples/calculators``: a client that discovers calculators by subscription and calls them
asynchronously; answers and failures travel back at the owners' commits (runtime.md §3.9,
§4.1). Run headless for one second with ``sengen run``, then stepped on the test kernel, where
the arrival of every answer is exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from example_projects import clean_log, copy_example, importable, matches, sengen_run

from sengen.runtime import CallFailed
from sengen.testing import TestKernel


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("calculators", tmp_path_factory.mktemp("calculators"))
    with importable(folder):
        yield folder


def test_calculators_yaml_runs_for_one_second(example: Path) -> None:
    ran = sengen_run(example, "calculators.yaml", "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    (client,) = matches(
        r"INFO sengen\.component\.office: accountant: (\d+) round\(s\) of calls, (\d+) answered,"
        r" (\d+) failed, (\d+) alarm\(s\), (\d+) wrong",
        lines,
    )
    rounds, answered, failed, alarms, wrong = map(int, client.groups())
    calculators = matches(
        r"INFO sengen\.component\.(desk|drawer): (\w+) \((.+)\): (\d+) operation\(s\),"
        r" display (.+)",
        lines,
    )
    assert sorted((m[2], m[3]) for m in calculators) == [("casio", "Casio fx-82"), ("hp", "HP 12C")]
    # Both calculators were found and used, every answer was right, and each division by zero
    # failed its call and was heard as an event.
    assert rounds > 0 and answered > 0
    assert wrong == 0
    assert failed <= 2 * (rounds // 3)
    # A calculator's commit sends the event before the failed answer: a client stopping in
    # between has heard one alarm more than it counted failures.
    assert failed <= alarms <= failed + 1
    # Three calls per calculator per round; the client, in group 2, stops before the
    # calculators, so no answer is lost, though the last rounds may not have been run.
    operations = sum(int(m[4]) for m in calculators)
    assert answered + failed <= operations <= 2 * 3 * rounds


def test_every_answer_arrives_in_the_client_drain_after_the_calculator_ran_the_call(
    example: Path,
) -> None:
    with TestKernel.from_file(example / "calculators.yaml") as tk:
        # Typed Any: the generated classes are not there when mypy checks this file.
        client: Any = tk.object("local.office.accountant")
        casio: Any = tk.object("local.calculators.casio")
        hp: Any = tk.object("local.calculators.hp")
        tk.advance("1 s")  # every cycle due before 1 s
        # The calculators publish at t = 0; the client finds them in its drain at 0.1 s and
        # sends round r (add(r, r), addToDisplay(0.5), divide(r, r % 3)) at its commit at
        # r · 0.1 s, for r = 1 … 9.
        assert client.calculators == 2
        # casio (20 Hz) runs round r at r · 0.1 s + 50 ms: all nine rounds by 0.95 s. Round 9
        # divides by zero: the display keeps 9 + 9 + 0.5.
        assert (casio.operations, casio.display) == (27, 18.5)
        # hp (5 Hz) runs at 0.2 s the round sent at 0.1 s, then two rounds at each of 0.4,
        # 0.6 and 0.8 s: rounds 1 … 7, the last showing 7 / 1.
        assert (hp.operations, hp.display) == (21, 7.0)
        # Answers reach the client in its drain after the calculator's commit, by 0.9 s: casio
        # rounds 1 … 8 (answered at 0.2 … 0.9 s) and hp rounds 1 … 7; rounds 3 and 6 of each
        # divide by zero.
        assert (client.answered, client.failed, client.alarms, client.wrong) == (41, 4, 4, 0)
        assert tk.call(casio, "add", 0.25, 0.5) == 0.75
        with pytest.raises(CallFailed, match="ZeroDivisionError"):
            tk.call(casio, "divide", 1.0, 0.0)
