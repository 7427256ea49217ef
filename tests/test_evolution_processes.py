"""E1-E3 over the transport (evolution.md §9.1 to §9.3): each scenario runs two real ``sengen
run`` processes, A (``runtime_1``, ``_3`` or ``_5``, publishing ``obj1``) and B (the next one,
``obj2``). Each writes the other's object through its proxy to its own constants (A's phase 1
and B's phase 2 run together: they touch different objects), and prints, as JSON lines, what its
own object holds and what its proxy of the other shows. Once its view has converged it makes
the scenario's calls on the other's object (its methods, then ``emitEvents``, having
subscribed to ``testEvent``), reports their outcomes, the events heard and what its own
implementation received, then marks the other's object (one property set to a marker); it stops
when both marks are done. This test process imports neither version (one process holding
several versions of a class refuses it, §1.2). The values are compared as the JSON form of the
local types, floats within 1e-3 (§9), and the unit-converted ones of E2 and E3 exactly (an f32
as its shortest decimal); every conversion is also checked over the codecs in
tests/test_evolution_corpus.py."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_layout import corpus_root
from transport_support import Process, free_port, session_name, transport_entry

import sengen
from sengen.runtime.objects.jsonform import json_form
from sengen.runtime.objects.meta import F32

pytestmark = pytest.mark.slow

HERE = "libs/kernel/test/integration/runtime_compatibility"

DRIVER = """\
import json
import math
import os
import struct
from typing import Any

from {root}.sen.test.runtime.runtime import *  # noqa: F403
from sengen.runtime.objects.jsonform import json_form


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


VALUES = {values}
VIEW = json.loads({view!r})
OTHER = {other!r}
MARK = {mark!r}  # (property, the value I set as source, the value the other sets on mine)


def close(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, (int, float)) and not isinstance(y, bool):
        return math.isclose(x, y, abs_tol=1e-3)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(close(a, b) for a, b in zip(x, y))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
    return bool(x == y)


def state(obj: Any) -> dict[str, Any]:
    props = obj.META.all_properties
    return {{p.stl_name: json_form(p.type, getattr(obj, p.py_name)) for p in props}}


def say(kind: str, value: Any) -> None:
    # One write of the whole line (under PIPE_BUF: atomic on the pipe): print() writes its
    # parts one by one, and a log line of another thread then lands inside the report.
    os.write(1, f"EVO {{kind}} {{json.dumps(value, sort_keys=True)}}\\n".encode())


def args_json(args: Any, values: Any) -> list[Any]:
    return [json_form(a.type, v) for a, v in zip(args, values)]


def outcome(call: Any) -> Any:
    error = call.exception()
    if error is not None:
        return ["error", error.type_name]
    return getattr(call.result(), "name", call.result())


HEAR = {hear}  # events of the other's object to hear before marking it


# The calls on the other's object (emitEvents last), once my view has converged.
def act(other: Any) -> dict[str, Any]:
{act}


class Driver(TestClassBase):  # noqa: F405
    def registered(self, api: Any) -> None:
        self.sub = api.select(f"SELECT sen.test.runtime.TestClass FROM {{self.bus}}")
        self.driven = False
        self.calls: Any = None
        self.heard: list[Any] = []
        self.mark: Any = None
        self.own: Any = None
        self.view: Any = None

    def update(self, api: Any) -> None:
        own = state(self)
        if own != self.own:
            self.own = own
            say("own", own)
        if self.mark is not None and self.mark.done() and own[MARK[0]] == MARK[2]:
            # Both marks are done: the other executed mine (its result, or ObjectGone when it
            # stopped first), and it set its own on my object.
            say("done", True)
            api.request_kernel_stop(0)
            return
        others = [o for o in self.sub.objects if o.name == OTHER]
        if not others:
            return
        other = others[0]
        view = state(other)
        if view != self.view:
            self.view = view
            say("view", view)
        if not self.driven:
            self.driven = True
            for name, value in VALUES.items():
                getattr(other, f"set_next_{{name}}")(value)
        elif self.calls is None and close(view, VIEW):
            event = other.META.event("testEvent")
            other.events.test_event.connect(lambda *a: self.heard.append(args_json(event.args, a)))
            self.calls = act(other)
        elif (
            self.mark is None
            and self.calls is not None
            and all(c.done() for c in self.calls.values())
            and len(self.heard) >= HEAR
        ):
            say("calls", {{name: outcome(c) for name, c in self.calls.items()}})
            say("heard", self.heard)
            self.mark = getattr(other, f"set_next_{{MARK[0]}}")(eval(MARK[1]))

{methods}
"""


def _reports(output: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for line in output.splitlines():
        if line.startswith("EVO "):
            _, kind, text = line.split(" ", 2)
            found.setdefault(kind, []).append(json.loads(text))
    return found


def _close(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, int | float) and not isinstance(y, bool):
        return abs(x - y) <= 1e-3
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_close(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_close(x[k], y[k]) for k in x)
    return bool(x == y)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    corpus = corpus_root()
    base = tmp_path_factory.mktemp("evolution_processes")
    for number in range(1, 7):
        result = sengen.generate(
            [corpus / HERE / f"runtime_{number}/stl"], output=base / f"evo{number}"
        )
        assert result.ok
    yield base


class Side:
    """One process of a scenario: its version, constants (Python source in its own types), what
    its proxy of the other's object must converge to and what its own object must end with."""

    def __init__(
        self,
        number: int,
        values: str,
        view: dict[str, Any],
        own: dict[str, Any],
        methods: str,
        act: str = "    return {}",
        expect: dict[str, Any] | None = None,
    ) -> None:
        """``act``: the body of the driver's ``act(other)``; ``expect``: what must be reported
        (``calls``: outcome by name, ``heard``: events' arguments, ``received``: what my
        implementation of ``testMethod`` received, ``own_exact``/``view_exact``: properties
        of my converged state/view compared exactly)."""
        self.number, self.values, self.view, self.own = number, values, view, own
        self.methods, self.act, self.expect = methods, act, expect or {}


def _run(base: Path, name: str, a: Side, b: Side, marks: tuple[tuple[str, str, Any], ...]) -> None:
    port, session = free_port(), session_name(name)
    bus = f"{session}.bus"
    processes = []
    sides = ((a, "obj1", "obj2", marks[0], marks[1]), (b, "obj2", "obj1", marks[1], marks[0]))
    for side, mine, other, set_mark, got_mark in sides:
        module = f"evo{side.number}_{name}"
        driver = DRIVER.format(
            root=f"evo{side.number}",
            values=side.values,
            view=json.dumps(side.view),
            other=other,
            mark=(set_mark[0], set_mark[1], got_mark[2]),
            methods=side.methods,
            act=side.act,
            hear=len(side.expect.get("heard", ())),
        )
        (base / f"{module}.py").write_text(driver)
        config = (
            f"kernel: {{appName: runtime{side.number}}}\nload:\n" + transport_entry(port)
            + f"build:\n  - name: p\n    freqHz: 50\n"
            f"    imports: [evo{side.number}.sen.test.runtime, {module}]\n"
            f"    objects:\n      - {{name: {mine}, class: {module}.Driver, bus: {bus}}}\n"
        )  # fmt: skip
        processes.append(Process(base, f"{name}_{side.number}", config))
    outputs = []
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):  # stop() then says why
            process.popen.wait(timeout=60)
        outputs.append(process.stop())
    for side, output in zip((a, b), outputs, strict=True):
        reports = _reports(output)
        assert reports.get("done") == [True], output
        assert any(_close(view, side.view) for view in reports["view"]), output
        own = [o for o in reports["own"] if _close(o, side.own)]
        assert own, output
        views = [v for v in reports["view"] if _close(v, side.view)]
        expect = side.expect
        for found, key in ((own, "own_exact"), (views, "view_exact")):
            exact = expect.get(key, {})
            assert all({k: x[k] for k in exact} == exact for x in found), [
                (key, {k: x[k] for k in exact}) for x in found
            ]
        for kind in ("calls", "heard"):
            if kind in expect:
                assert reports[kind] == [expect[kind]], output
        if "received" in expect:
            wanted = [] if expect["received"] is None else [expect["received"]]
            assert reports.get("received", []) == wanted, output
        for line in expect.get("lines", ()):
            assert line in output, output


def f32_json(x: float) -> float:
    """An f32 value as its JSON form writes it (the shortest decimal of that f32)."""
    value: float = json_form(F32, x)
    return value


NOTHING = "    def emit_events_impl(self) -> None:\n        pass\n"


def received(result: str) -> str:
    """A ``testMethod`` implementation that reports what it received and returns ``result``."""
    return (
        "    def test_method_impl(self, *args: Any) -> Any:\n"
        '        say("received", args_json(self.META.method("testMethod").args, args))\n'
        f"        return {result}\n\n"
    )


def emits(args: str) -> str:
    return f"    def emit_events_impl(self) -> None:\n        self.events.test_event.emit({args})\n"


def test_e1_two_processes(trees: Path) -> None:
    a_json = {
        "prop1": 4, "prop2": -4, "prop3": 1, "prop4": -67.3, "prop5": [3.0, 5.0, 6.0],
        "prop6": [6, 7, 8, 5, 4], "prop7": "elem4", "prop8": "elem2", "prop9": "elem2",
        "prop10": {"attr1": 3, "attr2": -5.0}, "prop11": {"type": "f64", "value": 13.0},
        "prop12": 12, "prop13": 4, "prop14": -56.0, "prop15": 77.0,
    }  # fmt: skip
    b_json = {
        "prop1": 4, "prop2": -4.0, "prop3": True, "prop4": "-67.3", "prop5": [3, 5, 6],
        "prop6": [6, 7, 8, 5, 4, 0], "prop7": "elem4", "prop8": 1, "prop9": "elem2",
        "prop10": {"attr1": 3, "attr3": "", "attr2": -5.0},
        "prop11": {"type": "u32", "value": 13}, "prop12": 12.0, "prop13": 4.0, "prop14": -56,
        "prop15": 77,
    }  # fmt: skip
    a = Side(
        1,
        "dict(prop1=4, prop2=-4, prop3=1, prop4=f32(-67.3), prop5=(3.0, 5.0, 6.0),"
        " prop6=(6, 7, 8, 5, 4), prop7=TestEnum.elem4, prop8=TestEnum.elem2,"
        " prop9=TestEnum.elem2, prop10=TestStruct(attr1=3, attr2=-5.0),"
        " prop11=TestVariant('f64', 13.0), prop12=12, prop13=4, prop14=-56.0, prop15=77.0)",
        view=a_json, own=a_json | {"prop15": 7.0},
        methods=received("''")
        + "    def extra_method_impl(self) -> None:\n        pass\n\n"
        + emits("3.0, TestEnum.elem3, TestVariant('u32', 6)"),
        act="    return {'m1': other.test_method(1, -5, TestStruct(attr1=3, attr2=4.6)),"
        " 'm2': other.extra_method(), 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": "-5", "m2": ["error", "MissingMember"], "emit": None},
            "heard": [],  # A's event needs arg3: never delivered
            "received": None,  # B's call needs arg3: nothing sent
            "lines": ["lossy adaptation of property 'prop6'"],
        },
    )  # fmt: skip
    b = Side(
        2,
        "dict(prop1=4, prop2=-4.0, prop3=True, prop4='-67.3', prop5=(3, 5, 6),"
        " prop6=(6, 7, 8, 5, 4, 0), prop7=TestEnum.elem4, prop8=1, prop9='elem2',"
        " prop10=TestStruct(attr1=3, attr3='', attr2=-5.0), prop11=TestVariant('u32', 13),"
        " prop12=12.0, prop13=4.0, prop14=-56, prop15=77)",
        view=b_json, own=b_json | {"prop15": 9},
        methods=received("args[0]") + emits("1, 4"),
        act="    return {'m1': other.test_method('hello', -5.8), 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": ["error", "IncompatibleMember"], "emit": None},
            "heard": [[2, 3]],
            "received": ["-5", 1.0],
            "lines": ["lossy adaptation of property 'prop6'"],
        },
    )  # fmt: skip
    _run(trees, "e1", a, b, (("prop15", "9", 9), ("prop15", "7.0", 7.0)))


def test_e2_two_processes(trees: Path) -> None:
    a_json = {
        "prop1": "someString", "prop2": 4224, "prop3": 8, "prop4": [1, 2, 3, 4, 5],
        "prop5": [10, 11, 12], "prop6": {"attr1": 3.0}, "prop7": 11.11, "prop8": 30,
        "prop9": 96.54, "prop10": 30, "prop11": "helloWorld", "prop12": 4, "prop13": True,
        "prop14": {"type": "TestEnum", "value": "elem3"},
        "prop15": {"type": "string", "value": "blue"},
    }  # fmt: skip
    b_json = {
        "prop1": "someString", "prop2": 4224, "prop3": 29, "prop4": [1, 2, 3, 4, 5],
        "prop5": [10, 11, 12], "prop6": {"attr1": 3, "z": 0.0, "x": 0.0, "y": 0, "alpha": 0},
        "prop7": 636.556, "prop8": 108, "prop9": 316.732, "prop10": 108,
        "prop11": "helloWorld", "prop12": 4, "prop13": True,
        "prop14": {"type": "u8", "value": 2}, "prop15": {"type": "string", "value": "blue"},
    }  # fmt: skip
    a = Side(
        3,
        "dict(prop1='someString', prop2=4224, prop3=8, prop4=(1, 2, 3, 4, 5),"
        " prop5=(10, 11, 12), prop6=TestStructBase(attr1=3.0), prop7=f32(11.11), prop8=30,"
        " prop9=f32(96.54), prop10=30, prop11='helloWorld', prop12=4, prop13=True,"
        " prop14=TestVariant('TestEnum', TestEnum.elem3), prop15=TestVariant('string', 'blue'))",
        view=a_json, own=a_json | {"prop11": "b-done"},  # prop3: 29 km/h is 8 m/s
        methods=received("''")
        + "    def test_method2_impl(self, *args: Any) -> str:\n        return ''\n\n"
        + emits("1.41, TestEnum.elem2, TestVariant('string', 'blue')"),
        act="    return {'m1': other.test_method(True, TestStruct(attr1=8, attr2=3), 4),"
        " 'm2': other.test_method2(TestStructBase(attr1=3.14), TestEnum.elem5),"
        " 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": "", "m2": ["error", "MissingMember"], "emit": None},
            "heard": [[6.0, "elem2", {"type": "f32", "value": f32_json(3.140000104904175)}]],
            "received": [False, {"attr1": 5, "attr2": 9}, 4],
            "own_exact": {"prop3": 8, "prop7": f32_json(11.10999870300293),
                          "prop9": f32_json(96.53990936279297), "prop10": 30},
            "view_exact": {"prop3": 8, "prop7": f32_json(11.109999656677246),
                           "prop9": f32_json(96.54000854492188), "prop10": 30},
        },
    )  # fmt: skip
    b = Side(
        4,
        "dict(prop1='someString', prop2=4224, prop3=30, prop4=(1, 2, 3, 4, 5),"
        " prop5=(10, 11, 12), prop6=TestStructChild(attr1=3, z=0.0, x=0.0, y=0, alpha=0),"
        " prop7=f32(636.556), prop8=108, prop9=f32(316.732), prop10=108,"
        " prop11='helloWorld', prop12=4, prop13=True, prop14=TestVariant('u8', 2),"
        " prop15=TestVariant('string', 'blue'))",
        view=b_json, own=b_json | {"prop11": "a-done"},  # prop3: 8 m/s is 28.8 km/h
        methods=received("''") + emits("6, TestVariant('f64', 3.14), 'elem2'"),
        act="    return {'m1': other.test_method(False, TestStruct(attr1=5, attr2=9), 4),"
        " 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": "", "emit": None},
            "heard": [[1, {"type": "string", "value": "blue"}, "elem2"]],
            "received": [True, {"attr1": 8, "attr2": 3}, 4],
            "own_exact": {"prop3": 29, "prop7": f32_json(636.5560913085938),
                          "prop9": f32_json(316.7322998046875), "prop10": 108},
            "view_exact": {"prop3": 29, "prop7": f32_json(636.5560302734375),
                           "prop9": f32_json(316.73199462890625), "prop10": 108},
        },
    )  # fmt: skip
    _run(trees, "e2", a, b, (("prop11", "'a-done'", "a-done"), ("prop11", "'b-done'", "b-done")))


def test_e3_two_processes(trees: Path) -> None:
    pair = [3.141519, 2.618033]
    a_json = {
        "prop1": [20, 21, 22, 23, 24], "prop2": pair, "prop3": [1, 2, 3, 4, 5], "prop4": pair,
        "prop5": 80.55, "prop6": 0.67, "prop7": 70.88, "prop8": 0.88,
        "prop9": {"attr1": 60, "attr2": 70}, "prop10": {"attr1": True},
        "prop11": {"alpha": 5}, "prop12": {"alpha": 0, "z": 1.12, "x": 0.67, "y": -33},
        "prop13": {"attr1": 3, "attr2": 4},
        "prop14": {"type": "TestStruct", "value": {"attr1": 31, "attr2": 33}},
        "prop15": "elem2",
    }  # fmt: skip
    b_json = {
        "prop1": [20, 21, 22, 23, 24], "prop2": pair, "prop3": [1, 2, 3, 4, 5], "prop4": pair,
        "prop5": 80.55, "prop6": 0.67, "prop7": 70.88, "prop8": 0.88,
        "prop9": {"attr1": 60, "attr2": 70}, "prop10": {"attr1": True},
        "prop11": {"alpha": 5, "beta": 0},
        "prop12": {"alpha": 0, "beta": 0, "z": 1.12, "x": 0.67, "y": -33, "w": 0},
        "prop13": {"attr1": 3, "attr2": 4},
        "prop14": {"type": "TestStruct", "value": {"attr1": 31, "attr2": 33}},
        "prop15": "elem2",
    }  # fmt: skip
    a = Side(
        5,
        "dict(prop1=(20, 21, 22, 23, 24), prop2=(f32(3.141519), f32(2.618033)),"
        " prop3=(1, 2, 3, 4, 5), prop4=(f32(3.141519), f32(2.618033)), prop5=f32(80.55),"
        " prop6=0.67, prop7=f32(70.88), prop8=0.88, prop9=TestStruct(attr1=60, attr2=70),"
        " prop10=EmptyStruct(attr1=True), prop11=TestStructBase(alpha=5),"
        " prop12=TestStructChild(alpha=0, z=1.12, x=f32(0.67), y=-33),"
        " prop13=TestStruct(attr1=3, attr2=4),"
        " prop14=TestVariant('TestStruct', TestStruct(attr1=31, attr2=33)),"
        " prop15=TestEnum.elem2)",
        view=a_json, own=a_json | {"prop5": 2.5},
        methods=received("0") + emits("1.41, 'elem2', TestVariant('i16', 4)"),
        act="    return {'m1': other.test_method((1, 2, 3, 4, 5),"
        " TestVariant('TestEnum', TestEnum.elem4),"
        " TestStructChild(alpha=-5, z=1.75, x=f32(32.324), y=-14)), 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": 0, "emit": None},
            "heard": [[6.0, "elem2", {"type": "TestEnum", "value": "elem4"}]],
            "received": [[1, 0, 0], {"type": "TestEnum", "value": "elem2"},
                         {"alpha": -4, "z": 0.0, "x": 0.0, "y": 0}],
            "own_exact": {"prop6": 0.6700000166893005, "prop8": 0.8799999952316284},
            "view_exact": {"prop6": 0.6700000166893005, "prop8": 0.8799999952316284},
            "lines": ["2 element(s) dropped"],
        },
    )  # fmt: skip
    b = Side(
        6,
        "dict(prop1=(20, 21, 22, 23, 24), prop2=(f32(3.141519), f32(2.618033)),"
        " prop3=(1, 2, 3, 4, 5), prop4=(f32(3.141519), f32(2.618033)), prop5=f32(80.55),"
        " prop6=f32(0.67), prop7=f32(70.88), prop8=f32(0.88),"
        " prop9=TestStruct(attr1=60, attr2=70), prop10=EmptyStruct(attr1=True),"
        " prop11=TestStructBase(alpha=5, beta=0),"
        " prop12=TestStructChild(alpha=0, beta=0, z=1.12, x=f32(0.67), y=-33, w=0),"
        " prop13=TestStruct(attr1=3, attr2=4),"
        " prop14=TestVariant('TestStruct', TestStruct(attr1=31, attr2=33)),"
        " prop15=TestEnum.elem2)",
        view=b_json, own=b_json | {"prop5": 1.5},
        methods=received("TestEnum.elem1  # noqa: F405")
        + emits("6, TestVariant('string', 'elem4'), 'elem2'"),
        act="    return {'m1': other.test_method((f32(1.11), f32(-2.22), f32(-3.44)),"
        " TestStructBase(alpha=-4, beta=0), TestVariant('string', 'elem2')),"
        " 'emit': other.emit_events()}",
        expect={
            "calls": {"m1": "elem1", "emit": None},
            "heard": [[1, {"type": "u32", "value": 4}, "elem2"]],
            "received": [[1.0, 2.0, 3.0], {"alpha": -5, "beta": 0},
                         {"type": "string", "value": "elem4"}],
            "lines": ["saturated to 0 (u16)"],
        },
    )  # fmt: skip
    _run(trees, "e3", a, b, (("prop5", "f32(1.5)", 1.5), ("prop5", "f32(2.5)", 2.5)))
