"""``@env(NAME[, DEFAULT])`` substitution on the raw text of a configuration file
(runtime.md §1.2)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final

_ENV_RE: Final = re.compile(r"(\\*)@env\(([A-Za-z_$][A-Za-z0-9_]*)(?:,([^)\n]*))?\)")


def substitute_env(text: str, environ: Mapping[str, str] | None = None) -> tuple[str, list[str]]:
    """The text with every ``@env(...)`` replaced, and the names of unset variables without a
    default (each once, in order of appearance). Full-line comments are left untouched."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        slashes, name, default = match.group(1), match.group(2), match.group(3)
        kept = "\\" * (len(slashes) // 2)
        if len(slashes) % 2 == 1:
            return kept + match.group(0)[len(slashes) :]
        value = env.get(name)
        if value is None:
            if default is None:
                if name not in missing:
                    missing.append(name)
                return kept
            value = default.strip()
        return kept + value

    lines = text.splitlines(keepends=True)
    out = [line if line.lstrip().startswith("#") else _ENV_RE.sub(replace, line) for line in lines]
    return "".join(out), missing
