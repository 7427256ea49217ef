"""The compiler's errors. Their root, :class:`SengenError`, is the runtime's (one tree for both)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sengen.runtime.errors import SengenError

if TYPE_CHECKING:
    from sengen.diagnostics import Diagnostic

__all__ = ["InputError", "SengenError", "StlSyntaxError", "UsageError"]


class UsageError(SengenError):
    """An invalid argument given to the library API or the command line (exit status 2)."""


class InputError(SengenError):
    """Bad input found while processing user files (exit status 1); carries its diagnostics."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        first = self.diagnostics[0].format_header() if self.diagnostics else "bad input"
        super().__init__(first)


class StlSyntaxError(SengenError):
    """A lexical or syntax error in an STL file, at a 1-based line and column.

    Parsing of that file stops; the loader turns it into a diagnostic.
    """

    def __init__(self, message: str, line: int, column: int, length: int = 1) -> None:
        super().__init__(f"{line}:{column}: {message}")
        self.message = message
        self.line = line
        self.column = column
        self.length = length
