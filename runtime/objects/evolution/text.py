"""Numbers as text and text as numbers, as evolution.md §3.5 writes and reads them."""

from __future__ import annotations

import re
import struct
from typing import Final

_F32: Final = struct.Struct("<f")
F32_MAX: Final = 3.4028234663852886e38

# The whole text must match (§3.5): no hex, no underscores, no trailing garbage.
INTEGER: Final = re.compile(r"[+-]?[0-9]+")
FLOAT: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
    re.IGNORECASE,
)


def f32(value: float) -> float | None:
    """``value`` rounded to the nearest binary32 (ties to even), or None when a finite value
    rounds to infinity (the caller saturates)."""
    try:
        rounded: float = _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return None
    return rounded


def f32_text(value: float) -> str:
    """The shortest text of at most 9 significant digits that reads back as the same binary32,
    written as ``repr`` writes it as an f64 (``-67.3``, not ``-67.30000305175781``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return repr(value)
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if f32(float(text)) == value:
            return repr(float(text))
    return repr(value)


def number_text(value: int | float, single: bool) -> str:
    """A number as a string: integers in decimal, floats shortest round-trip (``single``: an
    f32 value)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return f32_text(value) if single else repr(value)
