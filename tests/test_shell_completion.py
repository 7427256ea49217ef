"""Tab completion of buses detected but not open, sessions, objects, members, types and command
options read from the commands table (issue 27, item 4), without a kernel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from sengen.runtime.components.shell.commands import COMMANDS, Command
from sengen.runtime.components.shell.completion import (
    Index,
    Names,
    build_index,
    candidates,
    options_of,
)

SENSOR = Names(
    members=("count", "print", "reading", "setNextSetpoint", "setpoint"),
    events=("ticked",),
    dynamic=("count", "reading", "setpoint"),
)


def _nothing(console: Any, text: str) -> None:
    return None


# Two commands as another part of the shell may add them: their options come from the usage.
TABLE: dict[str, Command] = {
    **COMMANDS,
    "echo": Command("echo <obj>.<property> [--csv]", "every change", _nothing),
    "hz": Command("hz <obj>[.<property>] [--window <duration>]", "the rate", _nothing),
}


@pytest.fixture(scope="module")
def index() -> Index:
    return Index(
        commands=tuple(TABLE),
        sources=("plant.b",),
        objects={"plant.b.s0": SENSOR, "s0": SENSOR},
        buses=("plant.b", "plant.c", "other.x"),
        types=("xbus.Sensor", "xbus.Watcher"),
        options=options_of(TABLE),
    )


@pytest.mark.parametrize(
    ("line", "offered"),
    [
        # Sessions and buses, detected ones included.
        ("open ", ["other", "other.x", "plant", "plant.b", "plant.c"]),
        ("open pl", ["plant", "plant.b", "plant.c"]),
        ("open plant.c", ["plant.c"]),
        # Objects, members, types.
        ("info pl", ["plant."]),
        ("info xbus.", ["xbus.Sensor", "xbus.Watcher"]),
        ("s0.set", ["s0.setNextSetpoint", "s0.setpoint"]),
        ("plant.b.s0.re", ["plant.b.s0.reading"]),
        # Options, from the usage in the table, after the first argument or on a dash.
        ("echo s0.count ", ["--csv"]),
        ("echo s0.count --", ["--csv"]),
        ("echo -", ["--csv"]),
        ("hz s0 --w", ["--window"]),
        ("watch s0.count ", []),  # no options
        ("ls -", []),
    ],
)
def test_completion_of_buses_sessions_objects_and_options(
    index: Index, line: str, offered: list[str]
) -> None:
    assert candidates(index, line)[1] == offered


def test_options_are_read_from_every_usage() -> None:
    options = options_of(TABLE)
    assert options["echo"] == ("--csv",)
    assert options["hz"] == ("--window",)
    assert all(options[name] == () for name in ("open", "info", "watch"))


@dataclass
class _Sessions:
    detected: list[str]

    def buses(self) -> list[str]:
        return self.detected


@dataclass
class _Sources:
    """What build_index reads of the shell's sources: one open bus, two more detected."""

    sources: dict[str, object] = field(default_factory=lambda: {"plant.b": object()})
    sessions: _Sessions = field(default_factory=lambda: _Sessions(["plant.b", "plant.c", "x.y"]))

    def entries(self) -> list[tuple[str, object, object]]:
        return []

    def unique_names(self) -> dict[str, object]:
        return {}


def test_the_index_holds_the_buses_ls_lists_open_or_not() -> None:
    built = build_index(TABLE, cast(Any, _Sources()), [], [])
    assert built.buses == ("plant.b", "plant.c", "x.y")
    assert candidates(built, "open x")[1] == ["x", "x.y"]
    assert built.options["echo"] == ("--csv",)
