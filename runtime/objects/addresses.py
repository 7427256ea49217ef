"""Bus addresses and object names (runtime.md §3.1, §3.2): one set of rules for the
configuration and the API, with the spec's messages."""

from __future__ import annotations

import re
from typing import Final

_BUS_PART: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# What ``str.isspace`` calls whitespace (the same table), and the control characters: a
# search each, not a Python step per character (every published object's name is checked).
_WHITESPACE: Final = re.compile(r"\s")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")


def bus_address_problem(value: object) -> str | None:
    """The §3.1 message for a bad bus address (``session.bus``), or None when it is valid."""
    if not isinstance(value, str):
        # As YAML writes the value: a configuration may hold a number or a boolean here.
        text = "null" if value is None else str(value).lower() if isinstance(value, bool) else value
        return f"invalid bus address '{text}'"
    parts = value.split(".")
    if len(parts) == 2 and "" in parts:
        return f"incomplete bus address '{value}'"
    if len(parts) != 2 or not all(_BUS_PART.fullmatch(part) for part in parts):
        return f"invalid bus address '{value}'"
    return None


def object_name_problem(value: str) -> str | None:
    """The §3.2 message for a bad object name, or None when it is valid."""
    if value == "":
        return "cannot create objects with empty names"
    if _WHITESPACE.search(value):
        return f"object names cannot contain whitespace ('{value}')"
    if _CONTROL.search(value):
        return f"object names cannot contain control characters ({value!r})"
    return None
