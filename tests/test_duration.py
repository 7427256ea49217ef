"""Duration and TimeStamp: exact integer nanoseconds, text forms, arithmetic, immutability."""

from __future__ import annotations

import pytest

from sengen.runtime import Duration, TimeStamp, TimeValueError


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("20 ms", 20_000_000),
        ("20ms", 20_000_000),
        ("1.1 s", 1_100_000_000),
        ("1.5 s", 1_500_000_000),
        ("10s", 10_000_000_000),
        ("2 h", 7_200_000_000_000),
        ("3 min", 180_000_000_000),
        ("-5 us", -5_000),
        ("7 ns", 7),
        ("0.000000001 s", 1),
    ],
)
def test_duration_strings_are_exact(text: str, ns: int) -> None:
    assert Duration.parse(text).ns == ns


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("100", "Duration needs a unit, e.g. '100 ms'"),
        ("1.5 ns", "Duration '1.5 ns' is not a whole number of nanoseconds"),
        (
            "5 hour",
            "invalid Duration '5 hour' (expected a number followed by ns, us, ms, s, min or h)",
        ),
        ("5  s", "invalid Duration '5  s' (expected a number followed by ns, us, ms, s, min or h)"),
        (
            "1e3 s",
            "invalid Duration '1e3 s' (expected a number followed by ns, us, ms, s, min or h)",
        ),
        ("9223372037 s", "Duration of 9223372037000000000 ns is outside the i64 range"),
    ],
)
def test_bad_duration_strings(text: str, message: str) -> None:
    with pytest.raises(TimeValueError) as info:
        Duration.parse(text)
    assert str(info.value) == message


def test_arithmetic_and_comparisons() -> None:
    a, b = Duration(1_500), Duration(500)
    assert a + b == Duration(2_000)
    assert a - b == Duration(1_000)
    assert a * 3 == 3 * a == Duration(4_500)
    assert a // b == 3
    assert -a == Duration(-1_500)
    assert b < a and a >= b and not bool(Duration())
    assert Duration.from_seconds(2).to_seconds() == 2.0
    assert str(Duration(1_500_000_000)) == "1500 ms"
    assert str(Duration(7_200_000_000_000)) == "2 h"
    start, end = TimeStamp(10), TimeStamp(25)
    assert end - start == Duration(15)
    assert start + Duration(15) == end
    assert end.minus(Duration(15)) == start
    assert len({Duration(1), Duration(1), TimeStamp(1)}) == 2
    assert Duration(1) != TimeStamp(1)
    with pytest.raises(TypeError, match="cannot compare Duration with TimeStamp"):
        assert Duration(1) < TimeStamp(2)


def test_values_are_immutable_and_typed() -> None:
    value = Duration(1)
    with pytest.raises(AttributeError):
        value._ns = 2
    with pytest.raises(TypeError):
        Duration(1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        TimeStamp(True)


def test_timestamps_round_trip_iso_8601_with_nanoseconds() -> None:
    stamp = TimeStamp.parse("2026-12-01T21:15:00.000000123Z")
    assert stamp.ns == 1_796_159_700_000_000_123
    assert stamp.isoformat() == "2026-12-01T21:15:00.000000123Z"
    assert TimeStamp.parse("1970-01-01T01:00:00+01:00") == TimeStamp(0)
    assert str(TimeStamp(0)) == "1970-01-01T00:00:00Z"
    with pytest.raises(TimeValueError, match="invalid TimeStamp"):
        TimeStamp.parse("yesterday")


def test_from_hz_is_the_rounded_period_in_ns() -> None:
    assert [Duration.from_hz(f).ns for f in (30, 60, 50, 7, 1000)] == [
        33_333_333,
        16_666_667,
        20_000_000,
        142_857_143,
        1_000_000,
    ]
    for bad in (0, -1, float("nan"), float("inf"), 3e9):
        with pytest.raises(ValueError, match="invalid frequency"):
            Duration.from_hz(bad)
