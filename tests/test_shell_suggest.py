""" "Did you mean" in the shell (issue 27, item 6): a mistyped command, object or member is
refused with its usual error and, when a name is close, the name it most likely meant.

Each case is a ``sengen shell -c`` run in a kernel in this process (the helpers of
``test_shell.py``); the scripted mode stops at the first failure and exits 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from kernel_support import make_package
from test_shell import run_shell, system

from sengen.runtime.kernel.extension import did_you_mean


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_suggest")


# (command, the exact error). Objects on local.b: s1, s2, boiler.temp (kbus.Sensor: properties
# serial reading setpoint mode limits a b, methods add peek fail twice, events ticked noted pinged).
CASES = [
    ("opne local.b", "unknown command 'opne' (did you mean 'open'?)"),
    ("Help", "unknown command 'Help' (did you mean 'help'?)"),
    ("histroy", "unknown command 'histroy' (did you mean 'history'?)"),
    ("frobnicate", "unknown command 'frobnicate': expected a command or <object>.<member>"),
    (
        "s2.readng",
        "property or method 'readng' not found in local.b.s2 (kbus.Sensor)"
        " (did you mean 'reading'?)",
    ),
    (
        "s2.prnt",
        "property or method 'prnt' not found in local.b.s2 (kbus.Sensor)"
        " (did you mean 'print'?)",
    ),
    ("s2.ad 1, 2", "method 'ad' not found in local.b.s2 (kbus.Sensor) (did you mean 'add'?)"),
    # With arguments only a method can be meant: no property is offered.
    ("s2.setpont 1", "method 'setpont' not found in local.b.s2 (kbus.Sensor)"),
    ("boiler.tmp.serial", "could not find object boiler.tmp (did you mean 'boiler.temp'?)"),
    (
        "local.b.boiler.tmp.a",
        "could not find object local.b.boiler.tmp" " (did you mean 'local.b.boiler.temp'?)",
    ),
    ("info boilr.temp", "could not find object or type boilr.temp (did you mean 'boiler.temp'?)"),
    # <obj>.<member> too: the part before the last dot is the object not found.
    ("watch boiler.tmp", "could not find object boiler (did you mean 'boiler.temp'?)"),
    ("nosuch.add 1, 2", "could not find object nosuch"),
    ("listen s2.tiked", "event 'tiked' not found in local.b.s2 (did you mean 'ticked'?)"),
    ("watch s2.setpont", "property 'setpont' not found in local.b.s2 (did you mean 'setpoint'?)"),
    ("echo s2.Reading", "property 'Reading' not found in local.b.s2 (did you mean 'reading'?)"),
]


@pytest.mark.parametrize(("command", "message"), CASES, ids=[c for c, _ in CASES])
def test_a_mistyped_name_gets_a_suggestion(
    impls: ModuleType, capsys: pytest.CaptureFixture[str], command: str, message: str
) -> None:
    code, out, err = run_shell(capsys, system(impls), f"{command}; s1.serial", wait="300 ms")
    assert code == 1
    assert err == message + "\n"
    assert "15" not in out  # the command after the failure never ran


HELPER = [
    ("opne", ["open", "close"], " (did you mean 'open'?)"),
    ("Tick", ["Ticks", "tick"], " (did you mean 'tick'?)"),  # equal but for case wins
    ("open", ["open"], ""),  # the word itself is no suggestion
    ("xyz", ["open", "close"], ""),
    ("tick", ["ticks", "ticked", "print"], " (did you mean 'ticks'?)"),
]


@pytest.mark.parametrize(("word", "candidates", "expected"), HELPER)
def test_did_you_mean_picks_the_closest_name(
    word: str, candidates: list[str], expected: str
) -> None:
    assert did_you_mean(word, candidates) == expected
