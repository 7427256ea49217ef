""" "Did you mean" for a mistyped STL type or attribute name (spec stl.md §6, §8.1).

A suggestion is appended to the unchanged message as `` (did you mean 'x'?)``, the form the unit
warning already uses, so that a tool matching the message's start still matches. Names are matched
by the runtime's one rule (:mod:`sengen.runtime.objects.suggest`); what is STL's own is how
other languages spell the natives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sengen.runtime.objects.suggest import suggestion
from sengen.stl.model import NATIVES

# A short native name is close to many unrelated words ('Nothing' scores 0.62 against 'string'),
# so natives must be closer than declared types to be suggested by spelling alone.
_NATIVE_CUTOFF = 0.75

# How other languages spell the natives: `uint32` is not a typo of `u32` by letters (0.67), it is
# the C name of it, and `double` shares no letter with `f64`.
_SIZED_INT = re.compile(r"(u?)int(8|16|32|64)(?:_t)?")
_FOREIGN = {
    "int": "i32",
    "uint": "u32",
    "unsigned": "u32",
    "short": "i16",
    "long": "i64",
    "byte": "u8",
    "float": "f32",
    "float32": "f32",
    "single": "f32",
    "double": "f64",
    "float64": "f64",
    "boolean": "bool",
    "str": "string",
}


def _native_spelling(word: str) -> str | None:
    lowered = word.lower()
    for name in NATIVES:
        if name.lower() == lowered:
            return name
    sized = _SIZED_INT.fullmatch(lowered)
    if sized is not None:
        name = ("u" if sized[1] else "i") + sized[2]
        return name if name in NATIVES else None
    return _FOREIGN.get(lowered)


def suggest_type(word: str, declared: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a type reference ``word`` that was not found, or ``""``.

    ``declared`` are the names visible where ``word`` was written; they win over the natives,
    then come the natives as other languages spell them, then the natives by spelling.
    """
    found = (
        suggestion(word, declared)
        or _native_spelling(word)
        or suggestion(word, NATIVES, _NATIVE_CUTOFF)
    )
    return f" (did you mean '{found}'?)" if found is not None else ""


def suggest_attribute(word: str, allowed: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for an unknown attribute ``word``, or ``""``."""
    found = suggestion(word, allowed)
    return f" (did you mean '{found}'?)" if found is not None else ""
