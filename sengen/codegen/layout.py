"""Line layout of generated code: the shapes black gives a bracketed construct, so that the
templates write black's output themselves (codegen.md §6; line length 100).

Generated code uses few shapes: a call, a class header, a ``def`` signature or a collection
display, each at the end of one statement. Black lays such a statement out in one line when
it fits; otherwise it puts the bracket's contents on one indented line of their own when they
fit there, and one item per line with a trailing comma when they do not (a sole item gets no
comma, and is laid out the same way in its turn). This module does exactly that and nothing
more, and ``tests/test_codegen_format.py`` holds it to black over every generated file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

LINE_LENGTH = 100


@dataclass(frozen=True)
class Bracket:
    """``head`` (up to and including the opening bracket), the items, the closing bracket.
    ``display``: a list, dict or tuple display, which black splits one item per line whenever
    it splits it at all (an argument list or a subscript may keep its items on one line)."""

    head: str
    items: tuple[Item, ...]
    tail: str
    display: bool = False
    signature: bool = False  # a def's parameters: a sole one exploded gets a comma too

    def flat(self) -> str:
        return self.head + ", ".join(flat(i) for i in self.items) + self.tail


# An item is plain text, or text that ends in a bracketed construct ("doc=" is text).
Item = str | Bracket


def flat(item: Item) -> str:
    return item if isinstance(item, str) else item.flat()


def width(text: str) -> int:
    """The width black measures: wide characters count twice, combining ones not at all."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def fits(line: str) -> bool:
    return "\n" not in line and width(line) <= LINE_LENGTH


def lay(prefix: str, bracket: Bracket, suffix: str, indent: int) -> list[str]:
    """The lines of ``prefix`` + ``bracket`` + ``suffix`` at ``indent`` spaces."""
    pad = " " * indent
    one = pad + prefix + bracket.flat() + suffix
    if fits(one) or not bracket.items:
        return [one]
    inner = " " * (indent + 4)
    opening, closing = pad + prefix + bracket.head, pad + bracket.tail + suffix
    if not fits(opening) and prefix.endswith(" = ") and not suffix:
        # The right-hand side in parentheses of its own, as black does when splitting at the
        # call would leave its first line too long.
        return [pad + prefix + "(", *lay("", bracket, "", indent + 4), pad + ")"]
    if len(bracket.items) == 1:
        (item,) = bracket.items
        comma = "," if bracket.signature else ""
        return [opening, *_item(item, comma, indent + 4), closing]
    body = inner + ", ".join(flat(i) for i in bracket.items)
    if fits(body) and not bracket.display:
        return [opening, body, closing]
    lines = [opening]
    for item in bracket.items:
        lines += _item(item, ",", indent + 4)
    return [*lines, closing]


def _item(item: Item, suffix: str, indent: int) -> list[str]:
    if isinstance(item, Bracket):
        return lay("", item, suffix, indent)
    return [" " * indent + item + suffix]


def text(prefix: str, bracket: Bracket, suffix: str = "", indent: int = 0) -> str:
    """:func:`lay`, joined (without the first line's indentation: templates indent it)."""
    return "\n".join(lay(prefix, bracket, suffix, indent))[indent:]


def call(callee: str, items: Sequence[Item]) -> Bracket:
    return Bracket(callee + "(", tuple(items), ")")


def mapping(entries: list[tuple[str, Item]]) -> Bracket:
    """A dict display of already spelt keys and values."""
    items: list[Item] = []
    for key, value in entries:
        if isinstance(value, Bracket):
            items.append(Bracket(f"{key}: {value.head}", value.items, value.tail, value.display))
        else:
            items.append(f"{key}: {value}")
    return Bracket("{", tuple(items), "}", display=True)


def keyword(name: str, value: Item) -> Item:
    if isinstance(value, Bracket):
        return Bracket(f"{name}={value.head}", value.items, value.tail, value.display)
    return f"{name}={value}"


def union(prefix: str, types: list[str], indent: int) -> str:
    """``prefix`` + ``A | B | ...``: black parenthesises a union that does not fit, with the
    union on one line when it fits there, else one member per line."""
    pad = " " * indent
    one = pad + prefix + " | ".join(types)
    if fits(one) or len(types) < 2:
        return one[indent:]
    inner = " " * (indent + 4)
    body = inner + " | ".join(types)
    one_per_line = [inner + types[0], *(inner + "| " + t for t in types[1:])]
    lines = [body] if fits(body) else one_per_line
    return "\n".join([prefix + "(", *lines, pad + ")"])


def string(value: str) -> str:
    """A string literal as black writes it: double quotes unless that needs more escapes."""
    literal = repr(value)
    if literal[0] == '"':
        return literal
    body = literal[1:-1]
    # repr escapes a single quote only when the string holds both kinds.
    single_escapes = body.count("\\'")
    unescaped = body.replace("\\'", "'")
    double_escapes = unescaped.count('"')
    if double_escapes > single_escapes:
        return literal
    return '"' + unescaped.replace('"', '\\"') + '"'
