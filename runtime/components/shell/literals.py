"""The text the shell reads: command lists and values written as JSON (runtime.md §9.1).

Arguments are the elements of a JSON array written without its brackets; single-quoted strings
and bare identifiers as map keys are accepted too, because they are what people type. Numbers
keep their exact text (``1`` is an integer, ``1.0`` a real), so the STL type conversion that
follows sees what was written.
"""

from __future__ import annotations

import re
from typing import Any, Final

from sengen.runtime.errors import SengenError

_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS: Final = {"true": True, "false": False, "null": None}
_ESCAPES: Final = {
    '"': '"',
    "'": "'",
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


class LiteralError(SengenError, ValueError):
    """Text that is not a value; the message names the column."""


def split_commands(text: str) -> list[str]:
    """Commands separated by newlines or by ``;`` outside quoted strings, blank ones dropped."""
    commands: list[str] = []
    current: list[str] = []
    quote = ""
    escaped = False
    for ch in text:
        if quote:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\n;":
            commands.append("".join(current).strip())
            current = []
        else:
            if ch in "\"'":
                quote = ch
            current.append(ch)
    commands.append("".join(current).strip())
    return [c for c in commands if c]


def parse_values(text: str) -> list[Any]:
    """The comma-separated values of ``text``; ``[]`` for blank text."""
    reader = _Reader(text)
    found: list[Any] = []
    if reader.at_end():
        return found
    while True:
        found.append(reader.value())
        if reader.at_end():
            return found
        reader.expect(",")


def parse_value(text: str) -> Any:
    """Exactly one value."""
    reader = _Reader(text)
    if reader.at_end():
        raise LiteralError("expected a value")
    value = reader.value()
    if not reader.at_end():
        raise LiteralError(f"unexpected text at column {reader.column}")
    return value


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    @property
    def column(self) -> int:
        return self.i + 1

    def _skip(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def at_end(self) -> bool:
        self._skip()
        return self.i >= len(self.text)

    def _peek(self) -> str:
        self._skip()
        return self.text[self.i] if self.i < len(self.text) else ""

    def expect(self, ch: str, closing: str = "") -> None:
        """Consume ``ch``; the message also names ``closing`` when that was allowed too."""
        if self._peek() != ch:
            found = f"'{self._peek()}'" if self._peek() else "the end"
            wanted = f"'{ch}' or '{closing}'" if closing else f"'{ch}'"
            raise LiteralError(f"expected {wanted} at column {self.column}, found {found}")
        self.i += 1

    def value(self) -> Any:
        ch = self._peek()
        if ch == "":
            raise LiteralError(f"expected a value at column {self.column}")
        if ch in "\"'":
            return self._string()
        if ch == "[":
            return self._list()
        if ch == "{":
            return self._map()
        number = _NUMBER.match(self.text, self.i)
        if number is not None:
            self.i = number.end()
            if number.group(1) or number.group(2):
                return float(number.group())
            return int(number.group())
        word = _WORD.match(self.text, self.i)
        if word is not None and word.group() in _KEYWORDS:
            self.i = word.end()
            return _KEYWORDS[word.group()]
        raise LiteralError(
            f"unexpected '{ch}' at column {self.column} (strings need quotes)"
            if word is not None
            else f"unexpected '{ch}' at column {self.column}"
        )

    def _string(self) -> str:
        quote = self.text[self.i]
        start = self.column
        self.i += 1
        out: list[str] = []
        while self.i < len(self.text):
            ch = self.text[self.i]
            self.i += 1
            if ch == quote:
                return "".join(out)
            if ch != "\\":
                out.append(ch)
                continue
            escape = self.text[self.i : self.i + 1]
            self.i += 1
            if escape in _ESCAPES:
                out.append(_ESCAPES[escape])
            elif escape == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.i : self.i + 4]):
                out.append(chr(int(self.text[self.i : self.i + 4], 16)))
                self.i += 4
            else:
                raise LiteralError(f"invalid escape '\\{escape}' at column {self.i}")
        raise LiteralError(f"unterminated string starting at column {start}")

    def _list(self) -> list[Any]:
        self.expect("[")
        items: list[Any] = []
        if self._peek() == "]":
            self.i += 1
            return items
        while True:
            items.append(self.value())
            if self._peek() == "]":
                self.i += 1
                return items
            self.expect(",", "]")

    def _map(self) -> dict[str, Any]:
        self.expect("{")
        found: dict[str, Any] = {}
        if self._peek() == "}":
            self.i += 1
            return found
        while True:
            key = self._key()
            self.expect(":")
            found[key] = self.value()
            if self._peek() == "}":
                self.i += 1
                return found
            self.expect(",", "}")

    def _key(self) -> str:
        if self._peek() in ("'", '"'):
            return self._string()
        word = _WORD.match(self.text, self.i)
        if word is None:
            raise LiteralError(f"expected a key at column {self.column}")
        self.i = word.end()
        return word.group()
