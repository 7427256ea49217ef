"""``examples/shapes``: shapes move and bounce in one component; watchers in another subscribe
with ``WHERE`` clauses on the shapes' struct fields and enums, and shapes enter and leave their
queries as they move.

The test kernel runs the example's configuration in virtual time. Each watcher's ``inside`` is
checked after every one of its cycles against a condition written here in Python, applied to
the shapes' state before that step: a subscriber's matches at its drain follow its owners'
commits of the earlier steps (runtime.md §4.4, §5.1).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from example_projects import clean_log, copy_example, importable, sengen_run

from sengen.testing import TestKernel

BUS = "local.canvas"
CONFIG = "shapes.yaml"
SIDE = 100.0

# The watchers' conditions, independently of the query language.
CONDITIONS: dict[str, Callable[[Any], bool]] = {
    "west": lambda s: s.position.x < 50,
    "red": lambda s: s.look.colour.name == "red",
    "rising": lambda s: s.heading.name in ("northEast", "northWest"),
    "highCircles": lambda s: s.kind.name == "circle" and s.position.y >= 50,
    "centre": lambda s: 30 <= s.position.x <= 70 and 30 <= s.position.y <= 70,
}


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = copy_example("shapes", tmp_path_factory.mktemp("shapes"))
    with importable(folder):
        yield folder


def _entries(folder: Path) -> dict[str, dict[str, Any]]:
    """The ``build:`` entries of the example's configuration, by component name."""
    return {e["name"]: e for e in yaml.safe_load((folder / CONFIG).read_text())["build"]}


def _of_class(tk: TestKernel, qualified_name: str) -> list[Any]:
    return [o for o in tk.objects(BUS) if o.META.qualified_name == qualified_name]


def _snapshot(shapes: list[Any]) -> dict[str, SimpleNamespace]:
    """The committed state of every shape (values are immutable: no copies needed)."""
    return {
        s.name: SimpleNamespace(position=s.position, look=s.look, heading=s.heading, kind=s.kind)
        for s in shapes
    }


def _folded(start: float, forward: bool, distance: float, margin: float) -> float:
    """Where a point bouncing between ``margin`` and ``SIDE - margin`` is after ``distance``:
    the straight-line travel folded back into the span."""
    span = SIDE - 2 * margin
    unfolded = (start - margin + (distance if forward else -distance)) % (2 * span)
    return margin + (unfolded if unfolded <= span else 2 * span - unfolded)


def test_watchers_see_shapes_enter_and_leave_their_queries(shapes: Path) -> None:
    entries = _entries(shapes)
    assert {o["name"] for o in entries["watchers"]["objects"]} == set(CONDITIONS)
    watcher_period = round(1e9 / entries["watchers"]["freqHz"])
    with TestKernel.from_file(shapes / CONFIG) as tk:
        shape_objects = _of_class(tk, "shapes.Shape")
        watchers = _of_class(tk, "shapes.Watcher")
        ever: dict[str, set[str]] = {w.name: set() for w in watchers}
        checked = 0
        for _ in range(200):  # ten seconds of the canvas's cycles
            time = tk.get_time().ns
            before = _snapshot(shape_objects)
            tk.step()
            if time == 0 or time % watcher_period:
                continue  # the watchers did not cycle, or had not heard from the canvas yet
            checked += 1
            for watcher in watchers:
                condition = CONDITIONS[watcher.name]
                expected = {name for name, state in before.items() if condition(state)}
                assert set(watcher.inside) == expected, (watcher.name, time)
                assert len(watcher.inside) == watcher.entered - watcher.left
                ever[watcher.name] |= expected
        assert checked == 99
        for watcher in watchers:
            # Every query gained and lost shapes over the run (positions, headings, colours
            # all change).
            assert watcher.entered > 0 and watcher.left > 0, watcher.name
        # The static part of a condition holds for every shape that ever matched.
        circles = {s.name for s in shape_objects if s.kind.name == "circle"}
        assert ever["highCircles"] and ever["highCircles"] <= circles


def test_shapes_bounce_between_the_walls_and_change_colour(shapes: Path) -> None:
    entries = _entries(shapes)
    period = round(1e9 / entries["canvas"]["freqHz"])
    configured = {o["name"]: o for o in entries["canvas"]["objects"]}
    steps = 150
    with TestKernel.from_file(shapes / CONFIG) as tk:
        tk.step(steps)  # the canvas is the fastest component: one cycle per step
        seconds = (steps - 1) * period / 1e9  # its first cycle moves nothing
        for shape in _of_class(tk, "shapes.Shape"):
            start = configured[shape.name]
            margin = start["look"]["size"] / 2
            east = start["heading"] in ("northEast", "southEast")
            north = start["heading"] in ("northEast", "northWest")
            distance = start["speed"] * seconds
            assert shape.position.x == pytest.approx(
                _folded(start["position"]["x"], east, distance, margin), abs=1e-6
            )
            assert shape.position.y == pytest.approx(
                _folded(start["position"]["y"], north, distance, margin), abs=1e-6
            )
            # Each bounce paints the shape with the next colour.
            colours = ["red", "green", "blue"]
            first = colours.index(start["look"]["colour"])
            assert shape.bounces > 0
            assert shape.look.colour.name == colours[(first + shape.bounces) % 3]


WATCHED = re.compile(r"^INFO sengen\.component\.watchers: (?P<w>\w+): \w+ (?P<how>entered|left) ")
WATCHER = re.compile(
    r"^INFO sengen\.component\.watchers: watcher (?P<w>\w+) summary: (?P<inside>\d+) inside,"
    r" (?P<entered>\d+) entered, (?P<left>\d+) left \(WHERE (?P<where>.+)\)$"
)
SHAPE = re.compile(r"^INFO sengen\.component\.canvas: shape (?P<s>\w+) summary: ")


@pytest.mark.slow
def test_the_configuration_runs_for_a_second(shapes: Path) -> None:
    ran = sengen_run(shapes, CONFIG, "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    lines = clean_log(ran.stderr)
    entries = _entries(shapes)
    summaries = {m["w"]: m for m in map(WATCHER.match, lines) if m is not None}
    assert {w: m["where"] for w, m in summaries.items()} == {
        o["name"]: o["condition"] for o in entries["watchers"]["objects"]
    }
    moves = [(m["w"], m["how"]) for m in map(WATCHED.match, lines) if m is not None]
    assert moves  # shapes entered queries within the second
    for name, summary in summaries.items():
        # Every callback was counted, and what is inside is what came minus what went.
        assert int(summary["entered"]) == moves.count((name, "entered"))
        assert int(summary["left"]) == moves.count((name, "left"))
        assert int(summary["inside"]) == int(summary["entered"]) - int(summary["left"])
    shapes_seen = [m["s"] for m in map(SHAPE.match, lines) if m is not None]
    assert sorted(shapes_seen) == sorted(o["name"] for o in entries["canvas"]["objects"])
