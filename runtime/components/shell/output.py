"""Where the shell writes: results on standard output, errors on standard error, or both on the
terminal (errors in red) when it is interactive.

The streams are looked up at each write, not kept: the interactive prompt swaps ``sys.stdout``
for a proxy that prints above the prompt line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

_RED = "\x1b[31m"
_RESET = "\x1b[0m"


class Printer:
    """``quiet`` silences everything (a shell without input, or after its input ended)."""

    def __init__(self, terminal: bool) -> None:
        self.terminal = terminal
        self.quiet = False

    def say(self, text: str) -> None:
        if not self.quiet:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def error(self, lines: Iterable[str]) -> None:
        if self.quiet:
            return
        text = "\n".join(lines)
        if self.terminal:
            sys.stdout.write(f"{_RED}{text}{_RESET}\n")
            sys.stdout.flush()
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def clear(self) -> None:
        if self.terminal and not self.quiet:
            sys.stdout.write("\x1b[2J\x1b[H")
            sys.stdout.flush()
