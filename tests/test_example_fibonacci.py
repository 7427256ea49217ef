"""``examples/fibonacci``: a deferred method (``Dispatcher.term``, deferred by the example's
codegen settings) completed later with the answers of workers in two other components.

The test kernel runs the example's configuration in virtual time; the terms are checked against
a computation of the test's own.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from example_projects import clean_log, copy_example, importable, matches, sengen_run

from sengen.runtime.errors import CallFailed
from sengen.testing import TestKernel

CONFIG = "fibonacci.yaml"
DISPATCHER = "local.fib.dispatcher"
WORKERS = ("local.workers.fast", "local.workers.slow")


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("fibonacci", tmp_path_factory.mktemp("fibonacci"), "settings.json")
    with importable(folder):
        yield folder


def _term(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def _questions(folder: Path) -> list[int]:
    build = yaml.safe_load((folder / CONFIG).read_text())["build"]
    questions: list[int] = build[0]["objects"][0]["questions"]
    return questions


def test_the_settings_make_only_the_dispatchers_term_deferred(example: Path) -> None:
    with TestKernel.from_file(example / CONFIG) as tk:
        methods = [
            tk.object(DISPATCHER).META.method("term"),
            tk.object(WORKERS[0]).META.method("term"),
        ]
        assert [m.deferred if m is not None else None for m in methods] == [True, False]


def test_a_call_before_any_worker_is_found_waits_for_one(example: Path) -> None:
    with TestKernel.from_file(example / CONFIG) as tk:
        dispatcher: Any = tk.object(DISPATCHER)
        call = dispatcher.term(30)  # from the test, before the first step
        tk.step()
        # The dispatcher took the call in its first cycle, before the workers were visible.
        assert (dispatcher.workers, dispatcher.waiting, call.done()) == (0, 1, False)
        tk.run_until(call.done, max_steps=20)
        assert call.result() == _term(30)
        assert (dispatcher.workers, dispatcher.waiting) == (len(WORKERS), 0)


def test_each_answer_waits_for_two_workers_in_other_components(example: Path) -> None:
    with TestKernel.from_file(example / CONFIG) as tk:
        dispatcher: Any = tk.object(DISPATCHER)
        workers: list[Any] = [tk.object(w) for w in WORKERS]
        student: Any = tk.object("local.fib.ada")
        # Once the student has had its answers, the workers work for this test alone.
        tk.run_until(lambda: student.answered == len(_questions(example)), max_steps=200)
        direct = dispatcher.term(1)
        steps_direct = tk.run_until(direct.done, max_steps=20)
        assert direct.result() == 1
        for n in (2, 10, 47, 93):
            before = [w.answered for w in workers]
            call = dispatcher.term(n)
            steps = tk.run_until(call.done, max_steps=40)
            assert call.result() == _term(n)
            # One previous term from each worker, then the sum: later than a direct answer.
            assert [w.answered for w in workers] == [b + 1 for b in before]
            assert steps > steps_direct
        # Beyond u64: the promise is completed with an error at once.
        with pytest.raises(CallFailed, match=r"F\(94\) does not fit"):
            tk.call(dispatcher, "term", 94)
        assert dispatcher.waiting == 0


def test_the_student_gets_every_answer(example: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="sengen.component.student")
    questions = _questions(example)
    with TestKernel.from_file(example / CONFIG) as tk:
        student: Any = tk.object("local.fib.ada")
        tk.run_until(lambda: student.answered == len(questions), max_steps=200)
        assert student.asked == len(questions)
    lines = [r.getMessage() for r in caplog.records if r.name == "sengen.component.student"]
    answers = {int(m[1]): int(m[2]) for m in matches(r"F\((\d+)\) = (\d+), .*", lines)}
    failures = [int(m[1]) for m in matches(r"F\((\d+)\) failed after .*", lines)]
    assert answers == {n: _term(n) for n in questions if n <= 93}
    assert failures == [n for n in questions if n > 93]


@pytest.mark.slow
def test_the_configuration_runs_for_a_second(example: Path) -> None:
    ran = sengen_run(example, CONFIG, "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    student = r"INFO sengen\.component\.student: "
    answers = matches(student + r"F\((\d+)\) = (\d+), answered in \d+ ms", lines)
    assert answers and all(int(m[2]) == _term(int(m[1])) for m in answers)
    failed = matches(student + r"F\((\d+)\) failed after \d+ ms: .*", lines)
    (summary,) = matches(
        student + r"student ada summary: (\d+) question\(s\) asked, (\d+) answered", lines
    )
    asked, answered = int(summary[1]), int(summary[2])
    assert answered == len(answers) + len(failed)
    assert Counter(int(m[1]) for m in answers + failed) <= Counter(_questions(example)[:asked])
    workers = matches(
        r"INFO sengen\.component\.(\w+): worker \1 summary: (\d+) term\(s\) computed", lines
    )
    assert sorted(m[1] for m in workers) == sorted(w.rpartition(".")[2] for w in WORKERS)
    # Two terms from the workers per answer through them (n >= 2), at most two per question.
    through = sum(1 for m in answers if int(m[1]) >= 2)
    assert 2 * through <= sum(int(m[2]) for m in workers) <= 2 * asked
