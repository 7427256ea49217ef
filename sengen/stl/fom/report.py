"""Diagnostics inside FOM files (fom.md §11.1): where a value, an element or a file is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.stl.fom.xmltree import Element
from sengen.stl.source import SourceFile


@dataclass(frozen=True, slots=True)
class Spot:
    """A position in one XML file, with the caret length."""

    source: SourceFile
    line: int
    column: int
    length: int = 1

    def note(self, message: str) -> Note:
        return self.source.note(self.line, self.column, message, self.length)


def element_spot(source: SourceFile, element: Element) -> Spot:
    """A whole element: its start tag's ``<`` and tag name."""
    return Spot(source, element.line, element.column, len(element.tag) + 1)


def text_spot(source: SourceFile, element: Element) -> Spot:
    """The text of ``element``: its first character, or the start tag when it is empty."""
    if not element.text or element.text_pos is None:
        return element_spot(source, element)
    first_line = element.text.split("\n", 1)[0]
    return Spot(source, element.text_pos[0], element.text_pos[1], max(len(first_line), 1))


def value_spot(source: SourceFile, container: Element, tag: str) -> Spot:
    """The value held by the child ``tag`` of ``container``; the container when it is missing."""
    child = container.first(tag)
    return text_spot(source, child) if child is not None else element_spot(source, container)


class Reporter:
    """Collects the diagnostics of one FOM set; each ends with the notes of the import chain
    that first loaded the set (§2.7)."""

    def __init__(self, sink: list[Diagnostic], chain: tuple[Note, ...]) -> None:
        self.sink = sink
        self.chain = chain
        self.errors = 0

    def error(self, spot: Spot, message: str, notes: Sequence[Note] = ()) -> None:
        self.errors += 1
        self._add(Severity.ERROR, spot, message, notes)

    def warning(self, spot: Spot, message: str) -> None:
        self._add(Severity.WARNING, spot, message, ())

    def _add(self, severity: Severity, spot: Spot, message: str, notes: Sequence[Note]) -> None:
        self.sink.append(
            spot.source.diagnostic(
                severity, spot.line, spot.column, message, spot.length, (*notes, *self.chain)
            )
        )

    def file_problem(self, display: str, message: str, severity: Severity) -> None:
        if severity is Severity.ERROR:
            self.errors += 1
        self.sink.append(Diagnostic(severity, display, 0, 0, message, self.chain))
