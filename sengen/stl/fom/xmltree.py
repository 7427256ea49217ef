"""A small XML tree with positions (fom.md §3.1, §11.1), built with expat.

``xml.etree`` loses positions, and every FOM diagnostic points at an element's start tag or at
the first character of its text, so the tree keeps both. Names are local names: namespaces and
prefixes are ignored. External entities and DTDs are never fetched (no handler asks for them), and
expat (2.4 and later) refuses internal entities that would expand without bound.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.parsers import expat

from sengen.runtime.errors import SengenError


@dataclass(eq=False, slots=True)
class Element:
    """One element: its local name, attributes, start-tag position and direct text."""

    tag: str
    attrs: dict[str, str]
    line: int
    column: int
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)
    text: str = ""
    # Where the text starts (the first character-data event); None when the element has none.
    text_pos: tuple[int, int] | None = None

    def first(self, tag: str) -> Element | None:
        for child in self.children:
            if child.tag == tag:
                return child
        return None

    def all(self, tag: str) -> Iterator[Element]:
        return (child for child in self.children if child.tag == tag)

    def value(self, tag: str) -> str:
        """The text of the first child ``tag``: missing and empty both read as ""."""
        child = self.first(tag)
        return child.text if child is not None else ""


@dataclass(frozen=True, slots=True)
class XmlError(SengenError):
    """Not well-formed: expat's message and its 1-based position."""

    message: str
    line: int
    column: int


class _Builder:
    def __init__(self) -> None:
        self.parser = expat.ParserCreate()
        # Off: with buffering expat reports where buffered text ends, not where it starts.
        self.parser.buffer_text = False
        self.parser.StartElementHandler = self.start
        self.parser.EndElementHandler = self.end
        self.parser.CharacterDataHandler = self.data
        self.root: Element | None = None
        self.stack: list[Element] = []

    def position(self) -> tuple[int, int]:
        return self.parser.CurrentLineNumber, self.parser.CurrentColumnNumber + 1

    def start(self, name: str, attrs: dict[str, str]) -> None:
        parser = self.parser
        if ":" in name:
            name = _local(name)
        if attrs:
            attrs = {_local(k): v for k, v in attrs.items()}
        stack = self.stack
        parent = stack[-1] if stack else None
        element = Element(
            name, attrs, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1, parent, []
        )
        if parent is None:
            self.root = element
        else:
            parent.children.append(element)
        stack.append(element)

    def end(self, name: str) -> None:
        self.stack.pop()

    def data(self, text: str) -> None:
        if not self.stack:
            return
        element = self.stack[-1]
        if element.children:
            return  # only a leaf's text is a value; whitespace between children is not
        if element.text_pos is None:
            element.text_pos = self.position()
        element.text += text


def _local(name: str) -> str:
    return name.rpartition(":")[2]


def parse_xml(data: bytes) -> Element:
    """The root element of ``data``; raises XmlError when it is not well-formed."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    builder = _Builder()
    try:
        builder.parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise XmlError(expat.ErrorString(exc.code), exc.lineno, exc.offset + 1) from None
    assert builder.root is not None
    return builder.root
