"""Source files: decoding, display paths and line lookup for diagnostics."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from sengen.diagnostics import Diagnostic, Note, Severity


def display_path(path: Path) -> str:
    """Relative to the working directory when the file is under it, else as resolved."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass(slots=True)
class SourceFile:
    """The decoded text of one STL file, with what diagnostics need to point into it."""

    path: Path
    text: str
    display: str = ""
    _lines: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.display:
            self.display = display_path(self.path)

    def line_text(self, line: int) -> str | None:
        if self._lines is None:
            self._lines = self.text.split("\n")
        if 1 <= line <= len(self._lines):
            return self._lines[line - 1].rstrip("\r")
        return None

    def diagnostic(
        self,
        severity: Severity,
        line: int,
        column: int,
        message: str,
        length: int = 1,
        notes: tuple[Note, ...] = (),
    ) -> Diagnostic:
        return Diagnostic(
            severity, self.display, line, column, message, notes, self.line_text(line), length
        )

    def note(self, line: int, column: int, message: str, length: int = 1) -> Note:
        return Note(self.display, line, column, message, self.line_text(line), length)


def file_diagnostic(path: Path | str, message: str) -> Diagnostic:
    """A diagnostic about a file as a whole (missing, unreadable), with no position."""
    return Diagnostic(Severity.ERROR, display_path(Path(os.path.abspath(path))), 0, 0, message)


def is_regular_file(path: Path) -> bool:
    """Like ``Path.is_file``, but False (not an exception) for names the OS refuses."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
