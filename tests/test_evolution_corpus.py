"""E1-E3 (evolution.md §9.1 to §9.3): Sen's three ``runtime_compatibility`` scenarios, built
from the corpus STL (``runtime_1`` .. ``runtime_6``), over the codecs as the transport carries
them (tests/evolution_support.py). Phase 1: A writes B's object through its proxy (``sent``)
and reads it back (``seen``); phase 2 the same from B to A."""

from __future__ import annotations

import importlib
import logging
import struct
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from corpus_layout import corpus_root
from evolution_support import Link, messages
from objects_support import on_path

import sengen
from sengen.runtime.errors import CallFailed

HERE = "libs/kernel/test/integration/runtime_compatibility"


def f32(x: float) -> float:
    value: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return value


@pytest.fixture(scope="module")
def sen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, ModuleType]]:
    """The six versions, each generated into its own root (separate registry scopes)."""
    corpus = corpus_root()
    base = tmp_path_factory.mktemp("evolution")
    roots = [f"evo_sen{i}" for i in range(1, 7)]
    for i, root in enumerate(roots, 1):
        result = sengen.generate([corpus / HERE / f"runtime_{i}/stl"], output=base / root)
        assert result.ok, [d.format() for d in result.diagnostics]
    with on_path(base, *roots):
        yield {
            i: importlib.import_module(f"{root}.sen.test.runtime.runtime")
            for i, root in enumerate(roots, 1)
        }


def _phases(a_mod: ModuleType, b_mod: ModuleType, table: dict[str, tuple[Any, Any]]) -> None:
    one = Link(b_mod.TestClass.META, a_mod.TestClass.META)  # A holds a proxy of B's obj2
    two = Link(a_mod.TestClass.META, b_mod.TestClass.META)  # B holds a proxy of A's obj1
    for prop, (a, b) in table.items():
        assert one.sent(prop, a) == b, f"phase 1 {prop}"
        assert one.seen(prop, b) == a, f"phase 1 round trip {prop}"
        assert two.sent(prop, b) == a, f"phase 2 {prop}"
        assert two.seen(prop, a) == b, f"phase 2 round trip {prop}"


def test_e1_natives_enums_structs_variants_quantities_optionals(
    sen: dict[int, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = sen[1], sen[2]
    table = {
        "prop1": (4, 4),
        "prop2": (-4, -4.0),
        "prop3": (1, True),
        "prop4": (f32(-67.3), "-67.3"),
        "prop5": ((3.0, 5.0, 6.0), (3, 5, 6)),
        "prop7": (a.TestEnum.elem4, b.TestEnum.elem4),
        "prop8": (a.TestEnum.elem2, 1),
        "prop9": (a.TestEnum.elem2, "elem2"),
        "prop10": (a.TestStruct(attr1=3, attr2=-5.0), b.TestStruct(attr1=3, attr3="", attr2=-5.0)),
        "prop11": (a.TestVariant("f64", 13.0), b.TestVariant("u32", 13)),
        "prop12": (12, 12.0),
        "prop13": (4, 4.0),
        "prop14": (-56.0, -56),
        "prop15": (77.0, 77),
    }
    _phases(a, b, table)
    # prop6: the setter of phase 1 pads with a 0 silently, the round trip drops it (lossy).
    one = Link(b.TestClass.META, a.TestClass.META)
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert one.sent("prop6", (6, 7, 8, 5, 4)) == (6, 7, 8, 5, 4, 0)
        assert not messages(caplog)
        assert one.seen("prop6", (6, 7, 8, 5, 4, 0)) == (6, 7, 8, 5, 4)
    assert messages(caplog) == [
        "lossy adaptation of property 'prop6' of 's.b.obj' (process prod/4711): 1 element(s)"
        " dropped (sen.test.runtime.TestArray holds 5)"
    ]
    two = Link(a.TestClass.META, b.TestClass.META)
    assert two.sent("prop6", (6, 7, 8, 5, 4, 0)) == (6, 7, 8, 5, 4)
    assert two.seen("prop6", (6, 7, 8, 5, 4)) == (6, 7, 8, 5, 4, 0)

    # Methods and events.
    assert one.call("testMethod", 1, -5, a.TestStruct(attr1=3, attr2=4.6)) == ("-5", 1.0)
    assert one.result("testMethod", "-5") == "-5"
    missing = one.call("extraMethod")
    assert isinstance(missing, CallFailed) and missing.type_name == "MissingMember"
    refused = two.call("testMethod", "hello", -5.8)
    assert isinstance(refused, CallFailed) and refused.type_name == "IncompatibleMember"
    assert "needs argument 'arg3'" in refused.message
    assert one.event("testEvent", 1, 4) is None  # A's event needs arg3
    assert one.plan.warnings == [
        "type 'sen.test.runtime.TestClass' of process \x00: event 'testEvent' is never delivered"
        " here: the remote event has no argument 'arg3'"
    ]
    got = two.event("testEvent", 3.0, a.TestEnum.elem3, a.TestVariant("u32", 6))
    assert got == (2, 3)


def test_e2_optionals_quantities_with_units_struct_hierarchies(sen: dict[int, ModuleType]) -> None:
    a, b = sen[3], sen[4]
    table = {
        "prop1": ("someString", "someString"),
        "prop2": (4224, 4224),
        "prop4": ((1, 2, 3, 4, 5), (1, 2, 3, 4, 5)),
        "prop5": ((10, 11, 12), (10, 11, 12)),
        "prop11": ("helloWorld", "helloWorld"),
        "prop12": (4, 4),
        "prop13": (True, True),
        "prop14": (a.TestVariant("TestEnum", a.TestEnum.elem3), b.TestVariant("u8", 2)),
        "prop15": (a.TestVariant("string", "blue"), b.TestVariant("string", "blue")),
    }
    _phases(a, b, table)
    one = Link(b.TestClass.META, a.TestClass.META)
    two = Link(a.TestClass.META, b.TestClass.META)
    child = b.TestStructChild(attr1=3, z=0.0, x=0.0, y=0, alpha=0)
    assert one.sent("prop6", a.TestStructBase(attr1=3.0)) == child
    assert two.sent("prop6", child) == a.TestStructBase(attr1=3.0)
    # Units (§3.8), into integer storage, through optionals: the exceptions table of §9.2.
    assert one.sent("prop3", 8) == 29
    assert one.seen("prop3", 29) == 8
    assert one.sent("prop8", 30) == 108 and one.seen("prop8", 108) == 30
    assert one.sent("prop10", 30) == 108 and one.seen("prop10", 108) == 30
    assert two.sent("prop3", 30) == 8 and two.seen("prop3", 8) == 29
    assert two.sent("prop10", 108) == 30 and two.seen("prop10", 30) == 108
    assert one.sent("prop7", f32(11.11)) == 636.5560913085938
    assert one.seen("prop7", 636.5560913085938) == 11.109999656677246
    assert one.sent("prop9", f32(96.54)) == 316.7322998046875
    assert one.seen("prop9", 316.7322998046875) == 96.54000854492188
    assert two.sent("prop7", f32(636.556)) == 11.10999870300293
    assert two.seen("prop7", 11.10999870300293) == 636.5560302734375
    assert two.sent("prop9", f32(316.732)) == 96.53990936279297
    assert two.seen("prop9", 96.53990936279297) == 316.73199462890625
    # Methods and events.
    got = one.call("testMethod", True, a.TestStruct(attr1=8, attr2=3), 4)
    assert got == (True, b.TestStruct(attr1=8, attr2=3), 4)
    assert one.result("testMethod", "") == ""
    missing = one.call("testMethod2", a.TestStructBase(attr1=3.14), a.TestEnum.elem5)
    assert isinstance(missing, CallFailed) and missing.type_name == "MissingMember"
    assert two.call("testMethod", False, b.TestStruct(attr1=5, attr2=9), 4) == (
        False,
        a.TestStruct(attr1=5, attr2=9),
        4,
    )
    got_event = one.event("testEvent", 6, b.TestVariant("f64", 3.14), "elem2")
    assert got_event == (6.0, a.TestEnum.elem2, a.TestVariant("f32", f32(3.14)))
    got_event = two.event("testEvent", 1.41, a.TestEnum.elem2, a.TestVariant("string", "blue"))
    assert got_event == (1, b.TestVariant("string", "blue"), "elem2")


def test_e3_bounds_optional_wrapping_struct_growth_variant_tags(
    sen: dict[int, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    a, b = sen[5], sen[6]
    table = {
        "prop1": ((20, 21, 22, 23, 24), (20, 21, 22, 23, 24)),
        "prop2": ((f32(3.141519), f32(2.618033)), (f32(3.141519), f32(2.618033))),
        "prop3": ((1, 2, 3, 4, 5), (1, 2, 3, 4, 5)),
        "prop4": ((f32(3.141519), f32(2.618033)), (f32(3.141519), f32(2.618033))),
        "prop5": (f32(80.55), f32(80.55)),
        "prop7": (f32(70.88), f32(70.88)),
        "prop9": (a.TestStruct(attr1=60, attr2=70), b.TestStruct(attr1=60, attr2=70)),
        "prop10": (a.EmptyStruct(attr1=True), b.EmptyStruct(attr1=True)),
        "prop11": (a.TestStructBase(alpha=5), b.TestStructBase(alpha=5, beta=0)),
        "prop13": (a.TestStruct(attr1=3, attr2=4), b.TestStruct(attr1=3, attr2=4)),
        "prop15": (a.TestEnum.elem2, b.TestEnum.elem2),
    }
    _phases(a, b, table)
    one = Link(b.TestClass.META, a.TestClass.META)
    two = Link(a.TestClass.META, b.TestClass.META)
    assert (
        one.sent("prop6", 0.67) == f32(0.67) and one.seen("prop6", f32(0.67)) == 0.6700000166893005
    )
    assert (
        one.sent("prop8", 0.88) == f32(0.88) and one.seen("prop8", f32(0.88)) == 0.8799999952316284
    )
    child_a = a.TestStructChild(alpha=0, z=1.12, x=f32(0.67), y=-33)
    child_b = b.TestStructChild(alpha=0, beta=0, z=1.12, x=f32(0.67), y=-33, w=0)
    assert one.sent("prop12", child_a) == child_b and one.seen("prop12", child_b) == child_a
    variant_a = a.TestVariant("TestStruct", a.TestStruct(attr1=31, attr2=33))
    variant_b = b.TestVariant("TestStruct", b.TestStruct(attr1=31, attr2=33))
    assert one.sent("prop14", variant_a) == variant_b and one.seen("prop14", variant_b) == variant_a
    assert two.sent("prop14", variant_b) == variant_a and two.seen("prop14", variant_a) == variant_b
    # Methods: A's call drops two elements (one lossy line), B's saturates two.
    arg3 = a.TestStructChild(alpha=-5, z=1.75, x=f32(32.324), y=-14)
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        got = one.call(
            "testMethod", (1, 2, 3, 4, 5), a.TestVariant("TestEnum", a.TestEnum.elem4), arg3
        )
    assert got == (
        (1.0, 2.0, 3.0),
        b.TestStructBase(alpha=-5, beta=0),
        b.TestVariant("string", "elem4"),
    )
    assert len(messages(caplog)) == 1 and "2 element(s) dropped" in messages(caplog)[0]
    assert one.result("testMethod", b.TestEnum.elem1) == 0
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        got = two.call(
            "testMethod",
            (1.11, -2.22, -3.44),
            b.TestStructBase(alpha=-4, beta=0),
            b.TestVariant("string", "elem2"),
        )
    assert got == (
        (1, 0, 0),
        a.TestVariant("TestEnum", a.TestEnum.elem2),
        a.TestStructChild(alpha=-4, z=0.0, x=0.0, y=0),
    )
    assert len(messages(caplog)) == 1 and "saturated to 0 (u16)" in messages(caplog)[0]
    assert two.result("testMethod", 0) == b.TestEnum.elem1
    # Events.
    got_event = one.event("testEvent", 6, b.TestVariant("string", "elem4"), "elem2")
    assert got_event == (6.0, "elem2", a.TestVariant("TestEnum", a.TestEnum.elem4))
    got_event = two.event("testEvent", 1.41, "elem2", a.TestVariant("i16", 4))
    assert got_event == (1, b.TestVariant("u32", 4), "elem2")
