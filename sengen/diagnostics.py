"""Diagnostics: severity, location, message, notes, and their text and JSON renderings."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
class Note:
    """A secondary location that explains a diagnostic (an import link, an earlier declaration)."""

    file: str
    line: int
    column: int
    message: str
    source_line: str | None = None
    length: int = 1


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding. ``line`` and ``column`` are 1-based and point at the start of the token.

    ``file`` is the display path (relative to the working directory when the file is under it);
    ``source_line`` and ``length`` let the text rendering draw the caret line. A diagnostic that
    concerns a file as a whole (missing, unreadable) has line and column 0.
    """

    severity: Severity
    file: str
    line: int
    column: int
    message: str
    notes: tuple[Note, ...] = ()
    source_line: str | None = field(default=None, compare=False)
    length: int = field(default=1, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def format_header(self) -> str:
        return _header(self.file, self.line, self.column, self.severity.value, self.message)

    def format(self) -> str:
        """The text form: header, source line and caret line, then each note the same way."""
        parts = [
            self.format_header(),
            *_excerpt(self.source_line, self.line, self.column, self.length),
        ]
        for note in self.notes:
            parts.append(_header(note.file, note.line, note.column, "note", note.message))
            parts.extend(_excerpt(note.source_line, note.line, note.column, note.length))
        return "\n".join(parts)

    def to_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "notes": [
                {"file": n.file, "line": n.line, "column": n.column, "message": n.message}
                for n in self.notes
            ],
        }


def _header(file: str, line: int, column: int, severity: str, message: str) -> str:
    where = f"{file}:{line}:{column}" if line > 0 else file
    return f"{where}: {severity}: {message}"


def _excerpt(source_line: str | None, line: int, column: int, length: int) -> list[str]:
    if source_line is None or line <= 0:
        return []
    gutter = f"{line:>5} | "
    blank = " " * (len(gutter) - 2) + "| "
    start = 0
    if len(source_line) > _EXCERPT_WIDTH:
        # A huge line is shown as a window around the token, so output stays readable.
        start = max(0, column - 1 - _EXCERPT_WIDTH // 2)
        shown = source_line[start : start + _EXCERPT_WIDTH]
        source_line = ("..." if start else "") + shown + "..."
        start -= 3 if start else 0
    # Tabs in the prefix are copied so that the carets line up under the token in a terminal.
    prefix = "".join(c if c == "\t" else " " for c in source_line[: column - 1 - start])
    carets = "^" * max(1, min(length, len(source_line) - (column - 1 - start)))
    return [gutter + source_line, blank + prefix + carets]


_EXCERPT_WIDTH = 200


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def render_text(diagnostics: Sequence[Diagnostic]) -> str:
    return "".join(d.format() + "\n" for d in diagnostics)


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"
