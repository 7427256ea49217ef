"""``@env(NAME[, DEFAULT])`` substitution on the raw text of a configuration file
(runtime.md §1.2).

A default may itself hold an ``@env(...)`` (``@env(A, @env(B, 1))``): it is substituted when,
and only when, the default is used. Nesting is bounded, so hostile text cannot recurse deeply.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final

from sengen.runtime.errors import SengenError

_START: Final = re.compile(r"(\\*)@env\(([A-Za-z_$][A-Za-z0-9_]*)([,)])")
_OPEN: Final = "@env("
MAX_NESTING: Final = 8


class EnvError(SengenError, ValueError):
    """``@env`` defaults nested beyond :data:`MAX_NESTING`."""


def _closings(line: str) -> dict[int, int]:
    """For each ``@env(`` of the line (by index), the index of the ``)`` that closes it: the
    forms nest as brackets, other parentheses are text. One pass, so a hostile line of many
    unclosed forms stays linear."""
    found: dict[int, int] = {}
    opened: list[int] = []
    index = line.find(_OPEN)
    close = line.find(")")
    while index >= 0 or close >= 0:
        if index >= 0 and (close < 0 or index < close):
            opened.append(index)
            index = line.find(_OPEN, index + len(_OPEN))
        else:
            if opened:
                found[opened.pop()] = close
            close = line.find(")", close + 1)
    return found


def _substitute(line: str, env: Mapping[str, str], missing: list[str], depth: int) -> str:
    if depth > MAX_NESTING:
        raise EnvError(f"@env defaults nested more than {MAX_NESTING} deep")
    out: list[str] = []
    position = 0
    closings = _closings(line) if "," in line else {}
    while (match := _START.search(line, position)) is not None:
        out.append(line[position : match.start()])
        slashes, name, separator = match.groups()
        end = match.end()
        default = None
        if separator == ",":
            close = closings.get(match.start() + len(slashes))
            if close is None:  # not an @env form: no closing parenthesis on the line
                out.append(match.group(0))
                position = end
                continue
            default, end = line[end:close], close + 1
        kept = "\\" * (len(slashes) // 2)
        position = end
        if len(slashes) % 2 == 1:
            out.append(kept + line[match.start() + len(slashes) : end])
            continue
        value = env.get(name)
        if value is None:
            if default is None:
                if name not in missing:
                    missing.append(name)
                value = ""
            else:
                value = _substitute(default.strip(), env, missing, depth + 1)
        out.append(kept + value)
    out.append(line[position:])
    return "".join(out)


def substitute_env(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """The text with every ``@env(...)`` replaced, and the names of unset variables without a
    default (each once, in order of appearance). Full-line comments are left untouched.
    :class:`EnvError` for defaults nested too deeply."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    missing: list[str] = []
    lines = text.splitlines(keepends=True)
    out = [
        line if line.lstrip().startswith("#") else _substitute(line, env, missing, 0)
        for line in lines
    ]
    return "".join(out), missing
