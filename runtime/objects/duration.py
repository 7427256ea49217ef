"""Duration and TimeStamp: immutable integer nanoseconds (runtime.md §1.9, §5.4).

Time is never a float in sengen: schedules, due times and configuration values are exact. The
text form of a Duration is a decimal number and one of sengen's own time units, read as a decimal
(``"1.1 s"`` is exactly 1,100,000,000 ns).
"""

from __future__ import annotations

import re
from typing import Final

from sengen.runtime.errors import SengenError

_I64_MIN: Final = -(2**63)
_I64_MAX: Final = 2**63 - 1
_UNITS: Final = {
    "ns": 1,
    "us": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
_DURATION_RE: Final = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?) ?(ns|us|ms|s|min|h)")
_BARE_NUMBER_RE: Final = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


class TimeValueError(SengenError, ValueError):
    """A Duration or TimeStamp text or value that cannot be represented."""


def _checked(ns: int, what: str) -> int:
    if not _I64_MIN <= ns <= _I64_MAX:
        raise TimeValueError(f"{what} of {ns} ns is outside the i64 range")
    return ns


class _Nanoseconds:
    """Shared by Duration and TimeStamp: an immutable, ordered, hashable count of nanoseconds.

    Values of the two classes never compare equal and cannot be ordered against each other.
    """

    __slots__ = ("_ns",)
    _ns: int

    def __init__(self, ns: int = 0) -> None:
        kind = type(self).__name__
        if not isinstance(ns, int) or isinstance(ns, bool):
            raise TypeError(f"{kind} takes integer nanoseconds, got {ns!r}")
        object.__setattr__(self, "_ns", _checked(ns, kind))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def ns(self) -> int:
        return self._ns

    def _same(self, other: object) -> _Nanoseconds:
        """``other``, when it is of the very same class (no Duration < TimeStamp)."""
        if type(other) is not type(self) or not isinstance(other, _Nanoseconds):
            raise TypeError(f"cannot compare {type(self).__name__} with {type(other).__name__}")
        return other

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, _Nanoseconds)
            and (self._ns == other._ns)
        )

    def __lt__(self, other: object) -> bool:
        return self._ns < self._same(other)._ns

    def __le__(self, other: object) -> bool:
        return self._ns <= self._same(other)._ns

    def __gt__(self, other: object) -> bool:
        return self._ns > self._same(other)._ns

    def __ge__(self, other: object) -> bool:
        return self._ns >= self._same(other)._ns

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._ns))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._ns})"


class Duration(_Nanoseconds):
    """A signed span of time in integer nanoseconds."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> Duration:
        """``"20 ms"``, ``"1.5s"``, ``"2 h"``: exact, and refused unless whole nanoseconds."""
        stripped = text.strip()
        match = _DURATION_RE.fullmatch(stripped)
        if match is None:
            if _BARE_NUMBER_RE.fullmatch(stripped):
                raise TimeValueError("Duration needs a unit, e.g. '100 ms'")
            raise TimeValueError(
                f"invalid Duration '{text}' (expected a number followed by ns, us, ms, s, min or h)"
            )
        # decimal and datetime are loaded by the first text read or written: a process that
        # never does (most that import generated code) need not load them.
        from decimal import Decimal, InvalidOperation

        try:
            exact = Decimal(match.group(1)) * _UNITS[match.group(2)]
        except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
            raise TimeValueError(f"invalid Duration '{text}'") from None
        if exact != exact.to_integral_value():
            raise TimeValueError(f"Duration '{text}' is not a whole number of nanoseconds")
        return cls(int(exact))

    @classmethod
    def from_seconds(cls, seconds: int) -> Duration:
        return cls(seconds * 10**9)

    @classmethod
    def from_hz(cls, frequency: float) -> Duration:
        """The period of ``frequency``: ``round(1e9 / f)`` ns, as every schedule computes it
        (runtime.md §5.4); ``ValueError`` when that is not at least 1 ns."""
        if not (isinstance(frequency, int | float) and frequency > 0) or frequency != frequency:
            raise ValueError(f"invalid frequency {frequency!r}")
        ns = round(1e9 / frequency)
        if ns < 1:
            raise ValueError(f"invalid frequency {frequency!r}: the period is under 1 ns")
        return cls(ns)

    def to_seconds(self) -> float:
        return self._ns / 1e9

    def __add__(self, other: Duration) -> Duration:
        if not isinstance(other, Duration):
            return NotImplemented
        return Duration(self._ns + other._ns)

    def __sub__(self, other: Duration) -> Duration:
        if not isinstance(other, Duration):
            return NotImplemented
        return Duration(self._ns - other._ns)

    def __mul__(self, factor: int) -> Duration:
        if not isinstance(factor, int) or isinstance(factor, bool):
            return NotImplemented
        return Duration(self._ns * factor)

    __rmul__ = __mul__

    def __floordiv__(self, other: Duration) -> int:
        if not isinstance(other, Duration):
            return NotImplemented
        return self._ns // other._ns

    def __neg__(self) -> Duration:
        return Duration(-self._ns)

    def __bool__(self) -> bool:
        return self._ns != 0

    def __str__(self) -> str:
        """The largest unit that states the value exactly: ``1500 ms``, ``2 s``, ``7 ns``."""
        for unit in ("h", "min", "s", "ms", "us"):
            if self._ns % _UNITS[unit] == 0 and self._ns != 0:
                return f"{self._ns // _UNITS[unit]} {unit}"
        return f"{self._ns} ns"


class TimeStamp(_Nanoseconds):
    """A point in time in integer nanoseconds: since the Unix epoch under real time, since the
    start of the run under virtual time."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> TimeStamp:
        """An ISO 8601 date-time; without a zone it is UTC. Sub-microsecond digits are exact."""
        match = re.fullmatch(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)?", text.strip())
        if match is None:
            raise TimeValueError(
                f"invalid TimeStamp '{text}' (expected ISO 8601, e.g. '2026-01-01T00:00:00Z')"
            )
        from datetime import UTC, datetime

        try:
            whole = datetime.fromisoformat(match.group(1) + (match.group(3) or "Z"))
        except ValueError:
            raise TimeValueError(f"invalid TimeStamp '{text}'") from None
        if whole.tzinfo is None:  # pragma: no cover - a zone is always appended above
            whole = whole.replace(tzinfo=UTC)
        seconds = int(whole.timestamp())
        fraction = (match.group(2) or "").ljust(9, "0")
        return cls(seconds * 10**9 + int(fraction or "0"))

    def isoformat(self) -> str:
        from datetime import UTC, datetime

        seconds, fraction = divmod(self._ns, 10**9)
        moment = datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{moment}.{fraction:09d}Z" if fraction else f"{moment}Z"

    def __add__(self, other: Duration) -> TimeStamp:
        if not isinstance(other, Duration):
            return NotImplemented
        return TimeStamp(self._ns + other.ns)

    def __sub__(self, other: TimeStamp) -> Duration:
        if not isinstance(other, TimeStamp):
            return NotImplemented
        return Duration(self._ns - other._ns)

    def minus(self, span: Duration) -> TimeStamp:
        return TimeStamp(self._ns - span.ns)

    def __str__(self) -> str:
        return self.isoformat()
