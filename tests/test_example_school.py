"""``examples/school``: two components on one bus; the office creates pupils while the system
runs, the staff follow them with ``WHERE`` queries on a static property and on the fields of a
variant's structs, and teach them through calls.

The test kernel runs the example's own configuration in virtual time, so what each teacher
reports is checked exactly against the pupils' states. The kernel's timing rules these checks
rest on (runtime.md §3.9, §4.4, §5.1): a subscriber's matches, proxies and heard events at its
drain are its owners' commits of the earlier steps; a call made in a step is executed in the
owner's next cycle and answered in the caller's next cycle after that.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from example_projects import clean_log, copy_example, importable, sengen_run

from sengen.testing import TestKernel

BUS = "local.school"
CONFIG = "school.yaml"
WELCOME = re.compile(r"^(?P<teacher>\w+) welcomes (?P<pupil>.+) \(year \d\): 'Hello .+'$")


@pytest.fixture(scope="module")
def school(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("school", tmp_path_factory.mktemp("school"))
    with importable(folder):
        yield folder


def _entry(folder: Path, component: str) -> dict[str, Any]:
    """The ``build:`` entry of ``component`` in the example's configuration."""
    entries = yaml.safe_load((folder / CONFIG).read_text())["build"]
    entry: dict[str, Any] = next(e for e in entries if e["name"] == component)
    return entry


def _of_class(tk: TestKernel, qualified_name: str) -> list[Any]:
    """The native objects of one class on the bus, in registration order."""
    return [o for o in tk.objects(BUS) if o.META.qualified_name == qualified_name]


def _state(pupil: Any) -> tuple[int, str, str, int]:
    """(year, activity, the subject if studying, lessons) from a pupil's committed values."""
    activity = pupil.activity
    subject = activity.value.subject if activity.tag == "Studying" else ""
    return pupil.year, activity.tag, subject, pupil.lessons


def test_the_office_admits_one_pupil_per_cycle_while_running(school: Path) -> None:
    intake = _entry(school, "office")["objects"][0]["intake"]
    with TestKernel.from_file(school / CONFIG) as tk:
        office: Any = tk.object(f"{BUS}.admissions")
        # The office is the fastest component: every master step is one of its cycles.
        for cycle in range(1, len(intake) + 3):
            tk.step()
            pupils = _of_class(tk, "school.Pupil")
            assert len(pupils) == office.admitted == min(cycle, len(intake))
        assert [p.full_name for p in pupils] == [a["fullName"] for a in intake]
        assert [p.year for p in pupils] == [a["year"] for a in intake]
        assert [p.birthday.month for p in pupils] == [a["birthday"]["month"] for a in intake]
        # Pupil (pupils.stl) extends Person (people.stl), as Teacher (staff.stl) does.
        for obj in (pupils[0], *_of_class(tk, "school.Teacher")):
            parent = type(obj).META.parent
            assert parent is not None and parent.qualified_name == "school.Person"


def test_teachers_follow_their_queries_and_share_the_lessons(
    school: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sengen.component.staff")
    office_period = round(1e9 / _entry(school, "office")["freqHz"])
    staff_period = round(1e9 / _entry(school, "staff")["freqHz"])
    # The checks below need the office to cycle between two staff cycles.
    assert staff_period % office_period == 0 and staff_period > office_period
    with TestKernel.from_file(school / CONFIG) as tk:
        teachers = _of_class(tk, "school.Teacher")
        checked = 0
        for _ in range(60):  # six seconds of the office's cycles
            staff_runs = tk.get_time().ns % staff_period == 0
            before = [_state(p) for p in _of_class(tk, "school.Pupil")]
            tk.step()
            if not staff_runs:
                continue
            checked += 1
            after = [_state(p) for p in _of_class(tk, "school.Pupil")]
            for teacher in teachers:
                # WHERE year = …: a static property.
                assert teacher.pupils == sum(1 for s in before if s[0] == teacher.year)
                # WHERE activity.Studying.subject = …: a field of one alternative of a variant.
                assert teacher.studying == sum(1 for s in before if s[2] == teacher.subject)
            # One teacher per (year, subject) hears each finished lesson.
            assert sum(t.marked for t in teachers) == sum(s[3] for s in before)
            # Every lesson a teacher was granted is finished or going on; none is granted twice.
            started = sum(s[3] + (s[1] == "Studying") for s in after)
            assert sum(t.given for t in teachers) == started
        assert checked == 30
        # Pupils refuse the subject they have just had (the ready query skips them), so the
        # two teachers of a year take turns: every one of them has taught.
        assert all(t.given > 0 for t in teachers), [(t.name, t.given) for t in teachers]
        assert sum(s[3] for s in after) > len(after)  # pupils have had several lessons each
        # Each teacher greeted each pupil of its year once, as it joined the year's query.
        welcomes = sorted(
            (m["teacher"], m["pupil"]) for m in map(WELCOME.match, caplog.messages) if m is not None
        )
        pupils = _of_class(tk, "school.Pupil")
        assert welcomes == sorted(
            (t.name, p.full_name) for t in teachers for p in pupils if p.year == t.year
        )


def test_a_pupil_in_a_lesson_refuses_another_and_teachers_greet(school: Path) -> None:
    with TestKernel.from_file(school / CONFIG) as tk:
        tk.advance("2 s")
        pupil = next(
            p
            for p in _of_class(tk, "school.Pupil")
            if p.activity.tag == "Studying" and p.activity.value.progress < 0.5
        )
        # The call runs in the office's next cycle, with the lesson still going on.
        assert tk.call(pupil, "teach", "history") is False
        assert pupil.activity.tag == "Studying"
        teacher = _of_class(tk, "school.Teacher")[0]
        greeting = tk.call(teacher, "greet", "the inspector")
        assert greeting.startswith("Good morning, the inspector.")
        assert teacher.subject in greeting


ADMITTED = re.compile(r"^INFO sengen\.component\.office: admitted (?P<who>.+) \(year \d\) as '")
TEACHER = re.compile(
    r"^INFO sengen\.component\.staff: teacher (?P<name>\S+) summary: (?P<pupils>\d+) pupil\(s\)"
    r" in year \d, (?P<given>\d+) lesson\(s\) given, (?P<finished>\d+) finished$"
)
OFFICE = re.compile(
    r"^INFO sengen\.component\.office: office admissions summary: (?P<admitted>\d+) pupil\(s\)"
    r" admitted, (?P<finished>\d+) lesson\(s\) finished$"
)


@pytest.mark.slow
def test_the_configuration_runs_for_a_second(school: Path) -> None:
    ran = sengen_run(school, CONFIG, "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    intake = [a["fullName"] for a in _entry(school, "office")["objects"][0]["intake"]]
    admitted = [m["who"] for m in map(ADMITTED.match, lines) if m is not None]
    assert admitted and admitted == intake[: len(admitted)]
    office = [m for m in map(OFFICE.match, lines) if m is not None]
    assert len(office) == 1 and int(office[0]["admitted"]) == len(admitted)
    teachers = [m for m in map(TEACHER.match, lines) if m is not None]
    assert sorted(t["name"] for t in teachers) == sorted(
        o["name"] for o in _entry(school, "staff")["objects"]
    )
    # A teacher hears of a lesson's end after the answer that granted it (one queue, in
    # order), and each finished lesson is heard by one teacher at most.
    assert all(int(t["finished"]) <= int(t["given"]) for t in teachers)
    assert sum(int(t["finished"]) for t in teachers) <= int(office[0]["finished"])
