"""How the shell writes numbers, event arguments and commit times (render.py)."""

from __future__ import annotations

import importlib
import struct
from collections.abc import Iterator
from types import ModuleType

import pytest
from kernel_support import make_package

from sengen.runtime.components.shell.render import arguments, json_text, time_text
from sengen.runtime.objects.meta import NATIVES

FLOATS_STL = """\
package kfl;

sequence<f32> Floats;
optional<f32> MaybeFloat;

struct P
{
  x  : f32,
  ys : Floats,
  m  : MaybeFloat,
  d  : f64,
  n  : i64
}

variant V { P, f32 }
"""


def as_f32(value: float) -> float:
    """``value`` as it comes back from the wire in an f32: 0.1 is 0.10000000149011612."""
    single: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return single


@pytest.fixture(scope="module")
def kfl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    folder = tmp_path_factory.mktemp("kfl")
    for _ in make_package(folder, "kfl_render", "kfl", FLOATS_STL, ""):
        yield importlib.import_module("kfl_render.kfl")


@pytest.mark.parametrize(
    ("meta", "value", "text"),
    [
        ("f32", as_f32(0.1), "0.1"),
        ("f32", as_f32(-1234.5678), "-1234.5677"),
        ("f32", as_f32(3.4e38), "3.4e+38"),
        ("f32", as_f32(1e-45), "1e-45"),
        ("f32", 2.0, "2.0"),
        ("f32", float("inf"), "Infinity"),
        ("f64", 0.1, "0.1"),
        ("f64", 0.1 + 0.2, "0.30000000000000004"),
        ("f64", as_f32(0.1), "0.10000000149011612"),  # an f64 keeps every digit it has
        ("f64", 3, "3"),
        ("i64", 2**63 - 1, "9223372036854775807"),
    ],
)
def test_numbers_print_in_their_shortest_round_tripping_form(
    meta: str, value: float, text: str
) -> None:
    assert json_text(NATIVES[meta], value) == text
    if meta == "f32" and value != float("inf"):
        assert as_f32(float(text)) == value  # and the text gives the same f32 back


def test_f32_inside_structs_sequences_optionals_and_variants(kfl: ModuleType) -> None:
    point = kfl.P(as_f32(0.1), [as_f32(0.2), as_f32(1.5)], as_f32(0.3), 0.1, 7)
    assert json_text(kfl.P.META, point) == (
        '{"x": 0.1, "ys": [0.2, 1.5], "m": 0.3, "d": 0.1, "n": 7}'
    )
    empty = kfl.P(0.0, [], None, 2.5, 0)
    assert json_text(kfl.P.META, empty) == '{"x": 0.0, "ys": [], "m": null, "d": 2.5, "n": 0}'
    assert json_text(kfl.V.META, kfl.V("f32", as_f32(0.7))) == '{"type": "f32", "value": 0.7}'
    assert json_text(kfl.V.META, kfl.V("P", empty)).startswith('{"type": "P", "value": {"x": 0.0')


def test_event_arguments_are_printed_with_their_names(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    for impls in make_package(tmp_path_factory.mktemp("kev"), "kb_shell_render"):
        ticked = impls.Counting.META.event("ticked")
        noted = impls.Counting.META.event("noted")
        assert arguments(list(zip(ticked.args, [10], strict=True))) == "count=10"
        assert arguments(list(zip(noted.args, ['a "b"'], strict=True))) == 'text="a \\"b\\""'


WALL = 1_796_000_000_123_000_000  # 2026, in ns since the epoch


@pytest.mark.parametrize("virtual", [True, False])
def test_commit_times_print_as_times_whichever_clock_the_shell_has(virtual: bool) -> None:
    """A remote process's clock may be of the other kind than the shell's."""
    assert time_text(3_500_000_000, virtual) == "3.500000000"
    wall = time_text(WALL, virtual)
    assert wall.endswith(".123") and wall.count(":") == 2 and len(wall) == len("hh:mm:ss.mmm")


def test_a_time_never_set_follows_the_shells_clock() -> None:
    assert time_text(0, True) == "0.000000000"
    assert time_text(0, False).endswith(":00.000")
