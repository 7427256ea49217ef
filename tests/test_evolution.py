"""Type evolution, unit level (evolution.md §3 to §6; E4 to E17, E19, E23 and bad input): two
versions of a package ``pc`` generated into two roots, one consumer's view of the other's
class over the codecs (tests/evolution_support.py), and the pair cache of ``evolution.adapt``.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from evolution_support import KEEPS, LABEL_TEXT, Link, messages
from objects_support import on_path

import sengen
from sengen.runtime.errors import CallFailed
from sengen.runtime.objects import describe, evolution
from sengen.runtime.objects.evolution.classes import LABEL, Refused, check
from sengen.runtime.objects.evolution.text import f32, f32_text

V1 = """\
package pc;

enum Mode : u8 { idle, run }
struct Vec { x : f64 }
variant V { u32, string }
quantity<f64, m> Len;
quantity<f64, m> Len2;
quantity<f64, m> Meters;
optional<Meters> MaybeMeters;
quantity<f64, degF> Temp;
quantity<f64, m> Short [min: 0.0, max: 500.0];

class Counter
{
  var count : i32 [writable];
  var mode  : Mode [writable];
  fn reset(to: i32) -> i32;
  fn renamed(to: i32) -> i32;
  event ticked(count: i32);
}

class Solo { var count : i32; }
class Refuse { var count : i32; }
class Units { var len : Len; }
class Unitless { var len : Len2; }
class Wrapped { var a : Meters; var b : MaybeMeters; var t : Temp; }
class Bounds { var len : Short; }
class Floats { var f : f32; var i : i32; }
class Strings
{
  var i : i32; var b : bool; var m : Mode;
  var s1 : string [confirmed]; var s2 : string [confirmed]; var s3 : string [confirmed];
}
class Variants { var v : V [confirmed]; }
class Voids { fn a(); fn b() -> i32; }
class Times { var at : i64; }
class Labels { var label : string [writable, confirmed]; }
"""

V2 = """\
package pc;

enum Mode : u8 { idle, run, paused }
struct Vec { x : f64 }
variant V { u32, string, f64 }
quantity<f64, s> Len;
quantity<f64, nounit> Len2;
quantity<f64, km> Km;
optional<Km> MaybeKm;
quantity<f64, degC> Temp;
quantity<f64, m> Short [min: 0.0, max: 1000.0];

class Counter
{
  var count : i64 [writable];
  var mode  : Mode [writable];
  var label : string [writable, confirmed];
  fn reset(to: i64, reason: string) -> i64;
  fn renamed(value: i32) -> i32;
  event ticked(count: i64, at: Duration);
}

class Refuse { var count : Vec; }
class Units { var len : Len; }
class Unitless { var len : Len2; }
class Wrapped { var a : MaybeKm; var b : Km; var t : Temp; }
class Bounds { var len : Short; }
class Floats { var f : f64; var i : f64; }
class Strings
{
  var i : string [confirmed]; var b : string [confirmed]; var m : string [confirmed];
  var s1 : f32; var s2 : f64; var s3 : Mode;
}
class Variants { var v : V [confirmed]; }
class Voids { fn a() -> i32; fn b(); }
class Times { var at : Duration; }
class Labels { var label : i32 [writable]; }
"""


@pytest.fixture(scope="module")
def pc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, ModuleType]]:
    base = tmp_path_factory.mktemp("evolution_pc")
    for root, text in (("evo_pc1", V1), ("evo_pc2", V2)):
        (base / root / "stl" / "pc").mkdir(parents=True)
        (base / root / "stl" / "pc" / "pc.stl").write_text(text)
        result = sengen.generate([base / root / "stl"], output=base / "out" / root)
        assert result.ok, [d.format() for d in result.diagnostics]
    with on_path(base / "out", "evo_pc1", "evo_pc2"):
        yield importlib.import_module("evo_pc1.pc"), importlib.import_module("evo_pc2.pc")


def link(producer: ModuleType, consumer: ModuleType, name: str) -> Link:
    return Link(getattr(producer, name).META, getattr(consumer, name).META)


def refusal(producer: ModuleType, consumer: ModuleType, name: str) -> str:
    remote = describe.read(describe.describe(getattr(producer, name).META))
    with pytest.raises(Refused) as caught:
        check(remote, getattr(consumer, name).META, LABEL)
    return str(caught.value)


def test_e4_added_property(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Counter")
    assert newer.seen("label", "x") is KEEPS  # only remote: dropped
    assert newer.seen("count", 5) == 5
    older = link(v1, v2, "Counter")
    assert older.published({"count": 3, "mode": v1.Mode.run}) == {
        "count": 3,
        "mode": v2.Mode.run,
        "label": "",
    }
    failed = older.sent("label", "x")
    assert isinstance(failed, CallFailed) and failed.type_name == "MissingMember"
    assert failed.message == (
        f"property 'label' is not defined by the remote implementation of 'pc.Counter'"
        f" (process {LABEL_TEXT})"
    )


def test_e5_wider_integer_saturates_once_then_debug(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Counter")
    with caplog.at_level(logging.DEBUG, logger="sengen.transport"):
        assert newer.seen("count", 5_000_000_000) == 2147483647
        assert newer.seen("count", -7) == -7
        assert newer.seen("count", 6_000_000_000) == 2147483647
    text = (
        "lossy adaptation of property 'count' of 's.b.obj' (process prod/4711): 5000000000"
        " saturated to 2147483647 (i32)"
    )
    assert messages(caplog) == [text]
    assert len(messages(caplog, logging.DEBUG)) == 1
    assert newer.sent("count", 2147483647) == 2147483647  # reaches the owner as its i64


def test_e6_new_enumerator_keeps_the_value(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Counter")
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert newer.seen("mode", v2.Mode.paused) is KEEPS
    assert messages(caplog) == [
        "cannot adapt property 'mode' of 's.b.obj' (process prod/4711): no enumerator"
        " 'paused' in pc.Mode"
    ]
    assert newer.seen("mode", v2.Mode.idle) is v1.Mode.idle


def test_e7_e8_e23_refusal_lines(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    assert refusal(v2, v1, "Refuse") == "property 'count': local i32, remote pc.Vec (struct)"
    assert refusal(v2, v1, "Units") == (
        "property 'len': local pc.Len (quantity<f64, m>), remote pc.Len (quantity<f64, s>)"
    )
    assert refusal(v2, v1, "Unitless") == (
        "property 'len': local pc.Len2 (quantity<f64, m>), remote pc.Len2 (quantity<f64>)"
    )
    assert refusal(v2, v1, "Times") == "property 'at': local i64, remote Duration"
    assert refusal(v1, v2, "Times") == "property 'at': local Duration, remote i64"


def test_e9_units_through_optionals_and_offsets(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Wrapped")
    assert newer.seen("a", 1.5) == 1500.0
    assert newer.seen("a", None) == 0.0
    assert newer.seen("b", 1.5) == 1500.0
    assert math.isclose(newer.seen("t", 20.0), 68.0, abs_tol=1e-9)
    older = link(v1, v2, "Wrapped")
    assert math.isclose(older.seen("t", 68.0), 20.0, abs_tol=1e-9)


def test_e10_bounds_clamp_with_one_line(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    v1, v2 = pc
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert link(v2, v1, "Bounds").seen("len", 900.0) == 500.0
    assert messages(caplog) == [
        "lossy adaptation of property 'len' of 's.b.obj' (process prod/4711): 900.0 clamped to"
        " 500.0 (range of pc.Short)"
    ]


def test_e11_float_edges(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Floats")
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert newer.seen("f", 1e300) == 3.4028234663852886e38
    assert len(messages(caplog)) == 1 and "saturated to 3.4028234663852886e+38" in caplog.text
    assert newer.seen("f", math.inf) == math.inf
    assert math.isnan(newer.seen("f", math.nan))
    assert [newer.seen("i", x) for x in (2.5, -2.5, 3.5)] == [2, -2, 4]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert newer.seen("i", math.nan) is KEEPS
    assert messages(caplog)[0].endswith("NaN cannot be stored in i32")


def test_e12_strings(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Strings")
    ints = [" 42 ", "4.6", "1e3", "", "abc", "0x10", "12abc"]
    assert [newer.seen("i", t) for t in ints] == [42, 5, 1000, 0, KEEPS, KEEPS, KEEPS]
    bools = ["true", "", "2", "yes"]
    assert [newer.seen("b", t) for t in bools] == [True, False, True, KEEPS]
    modes = ["run", "", "1"]
    assert [newer.seen("m", t) for t in modes] == [v1.Mode.run, v1.Mode.idle, KEEPS]
    assert newer.seen("s1", f32(-67.3)) == "-67.3"
    assert newer.seen("s2", 13.0) == "13.0"
    assert newer.seen("s3", v2.Mode.run) == "run"
    assert (
        f32_text(3.4028234663852886e38) == "3.4028235e+38" and f32_text(f32(1e-7) or 0.0) == "1e-07"
    )


def test_e13_missing_variant_alternative(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture
) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Variants")
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        assert newer.seen("v", v2.V("f64", 1.5)) is KEEPS
    assert messages(caplog)[0].endswith(": no alternative 2 in pc.V")
    assert newer.seen("v", v2.V("string", "s")) == v1.V("string", "s")


def test_e14_method_arguments(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Counter")
    failed = newer.call("reset", 3)
    assert isinstance(failed, CallFailed) and failed.type_name == "IncompatibleMember"
    assert failed.message == (
        f"method 'reset' of the remote implementation of 'pc.Counter' (process {LABEL_TEXT})"
        " needs argument 'reason', which the local declaration lacks"
    )
    renamed = newer.call("renamed", 3)
    assert isinstance(renamed, CallFailed) and "needs argument 'value'" in renamed.message
    warnings = [w.replace(LABEL, LABEL_TEXT) for w in newer.plan.warnings]
    assert (
        f"type 'pc.Counter' of process {LABEL_TEXT}: method 'reset' cannot be called from here:"
        " the remote method needs argument 'reason'"
    ) in warnings
    older = link(v1, v2, "Counter")
    assert older.call("reset", 7, "why") == (7,)
    assert older.result("reset", 14) == 14


def test_e15_event_arguments(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    from sengen.runtime import Duration

    newer = link(v2, v1, "Counter")
    assert newer.event("ticked", 9, Duration(5)) == (9,)
    older = link(v1, v2, "Counter")
    assert older.event("ticked", 9) is None
    assert (
        f"type 'pc.Counter' of process {LABEL}: event 'ticked' is never delivered here: the"
        " remote event has no argument 'at'"
    ) in older.plan.warnings


def test_e16_value_failure_of_a_setter(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Labels")
    failed = newer.sent("label", "abc")
    assert isinstance(failed, CallFailed) and failed.type_name == "AdaptationError"
    assert failed.message == "property 'label': cannot read 'abc' as i32"
    assert newer.sent("label", "12") == 12


def test_e17_void_results(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, v2 = pc
    newer = link(v2, v1, "Voids")
    assert newer.call("a") == ()
    assert newer.plan.methods["a"].result is None  # the remote result is discarded
    failed = newer.call("b")
    assert isinstance(failed, CallFailed) and failed.type_name == "IncompatibleMember"
    assert failed.message.endswith("returns nothing")


# -- the pair cache and bad descriptions (§1.3, §8) ----------------------------------------------


def _other_version(meta: Any) -> tuple[int, bytes]:
    """A description of ``meta`` as another build would send it: ``count`` widened to i64."""
    document = json.loads(describe.describe(meta))
    entry = document["classes"][0]
    entry["hash"] = entry["hash"] + 1
    for prop in entry["properties"]:
        if prop[0] == "count":
            prop[2] = "i64"
    return int(entry["hash"]), json.dumps(document).encode()


def test_e19_one_check_per_pair_one_line_per_process(pc: tuple[ModuleType, ModuleType]) -> None:
    v1, _ = pc
    evolution.reset()
    lines: list[tuple[int, str]] = []
    type_hash, description = _other_version(v1.Solo.META)

    def say(level: int, text: str) -> None:
        lines.append((level, text))

    for process in ("zid-a", "zid-b", "zid-a"):
        made = evolution.adapt("pc.Solo", type_hash, description, process, lambda: "x/1", say)
        assert made is not None and made[1].META is v1.Solo.META
    assert evolution.builds() == 1
    adapted = [t for level, t in lines if level == logging.INFO]
    assert (
        adapted
        == ["type 'pc.Solo' of process {label} differs from the local one: its objects are adapted"]
        * 2
    )
    evolution.reset()


def test_several_local_versions_refuse(pc: tuple[ModuleType, ModuleType]) -> None:
    lines: list[str] = []
    made = evolution.adapt(
        "pc.Counter", 1, b"{}", "zid-s", lambda: "x/1", lambda _, t: lines.append(t)
    )
    assert made is None
    assert lines == [
        "type 'pc.Counter' has an incompatible remote implementation (process {label}):"
        " several local versions (evo_pc1, evo_pc2), none identical"
    ]
    evolution.reset()


def test_one_version_under_several_scopes_is_one_local_version(
    pc: tuple[ModuleType, ModuleType], tmp_path: Path
) -> None:
    """The same build imported twice (as a test process or a tool may do) is not "several
    versions" (§1.2): the pair is checked against it."""
    v1, _ = pc
    (tmp_path / "stl" / "pc").mkdir(parents=True)
    solo = "package pc;\nclass Solo { var count : i32; }\n"  # V1's Solo: the same hash
    (tmp_path / "stl" / "pc" / "pc.stl").write_text(solo)
    assert sengen.generate([tmp_path / "stl"], output=tmp_path / "out" / "evo_pc0").ok
    evolution.reset()
    type_hash, description = _other_version(v1.Solo.META)
    lines: list[str] = []
    with on_path(tmp_path / "out", "evo_pc0"):
        copy = importlib.import_module("evo_pc0.pc").Solo
        assert copy.META.type_hash == v1.Solo.META.type_hash and copy.META.scope == "evo_pc0"
        made = evolution.adapt(
            "pc.Solo", type_hash, description, "zid-o", lambda: "x/1", lambda _, t: lines.append(t)
        )
    assert made is not None and made[1].META is copy.META, lines
    assert lines == [
        "type 'pc.Solo' of process {label} differs from the local one: its objects are adapted",
        "  property 'count': local i32, remote i64",
    ]
    evolution.reset()


@pytest.mark.parametrize("kind", ["garbage", "hash", "huge"])
def test_a_bad_description_is_refused_with_one_line_and_never_cached(
    pc: tuple[ModuleType, ModuleType], caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    v1, _ = pc
    evolution.reset()
    type_hash, description = _other_version(v1.Solo.META)
    if kind == "garbage":
        description = b"{not json"
    elif kind == "hash":
        type_hash += 1
    else:
        description = b" " * (evolution.MAX_DESCRIPTION_BYTES + 1)
    with caplog.at_level(logging.WARNING, logger="sengen.transport"):
        made = evolution.adapt("pc.Solo", type_hash, description, "zid-c", lambda: "x/9", print)
    assert made is None and evolution.builds() == 0
    assert len(caplog.records) == 1 and "process x/9" in caplog.records[0].getMessage()
    assert "\n" not in caplog.records[0].getMessage()


def test_offsets_match_the_unit_registry() -> None:
    from sengen.runtime.objects.evolution.convert import UNIT_OFFSETS
    from sengen.stl.units import UNITS

    found = {
        u.abbreviation: (u.offset_x, u.offset_y) for u in UNITS.values() if u.offset_x or u.offset_y
    }
    assert found == UNIT_OFFSETS
    assert "sengen.stl" in sys.modules
