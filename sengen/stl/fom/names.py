"""FOM name conversion (fom.md §5): HLA names to STL type, member and property names."""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_]")
_ALL_CAPITALS = re.compile(r"[A-Z0-9]+")
_RESERVED = frozenset(["true", "false", "class", "enum", "struct", "static"])
# Names that belong to Sen's object base (§5.3).
_OBJECT_BASE = frozenset(["name", "id", "localName", "lastCommitTime", "propertyUntyped"])


def type_name(hla: str) -> str:
    """§5.1: drop every ``-`` and ``_``, upper-case the first character."""
    stripped = _SEPARATORS.sub("", hla)
    return stripped[:1].upper() + stripped[1:]


def member_name(hla: str) -> str:
    """§5.2: lower camel case; a leading digit gets ``n``; six reserved words get ``Val``."""
    pieces = [p for p in _SEPARATORS.split(hla) if p]
    joined = "".join(
        (p.lower() if _ALL_CAPITALS.fullmatch(p) else p)[:1].upper()
        + (p.lower() if _ALL_CAPITALS.fullmatch(p) else p)[1:]
        for p in pieces
    )
    if joined[:1].isdigit():
        joined = "n" + joined
    result = joined[:1].lower() + joined[1:]
    return result + "Val" if result in _RESERVED else result


def property_name(hla: str) -> str:
    """§5.3: a member name that Sen's object base does not already use."""
    result = member_name(hla)
    return result + "NonSen" if result in _OBJECT_BASE else result


def enumerator_names(hla_names: list[str]) -> list[str]:
    """§5.4: member names, repeated results numbered in document order (``x``, ``x1``, ...)."""
    seen: dict[str, int] = {}
    result: list[str] = []
    for hla in hla_names:
        name = member_name(hla)
        count = seen.get(name, 0)
        seen[name] = count + 1
        result.append(name if count == 0 else f"{name}{count}")
    return result


def description(semantics: str) -> str:
    """§6.10: Sen's transformation of a ``semantics`` text."""
    return semantics.replace("\n", " ").replace('"', "'")


def stem_suffix(stem: str) -> str:
    """§8.3: the last non-empty piece of a file stem split at ``-`` and ``_``."""
    pieces = [p for p in _SEPARATORS.split(stem) if p]
    return pieces[-1] if pieces else ""
