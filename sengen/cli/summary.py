"""The one-line success summaries of ``sengen check``, ``build`` and ``run --check``.

They go to stdout, as ``sengen init``'s report does, apart from the diagnostics on stderr; there
is none after ``check --format json``, whose stdout is the JSON alone, and ``-q`` leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sengen.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:  # an up-to-date build's summary must not load the STL model
    from sengen.codegen.builder import GenerateResult
    from sengen.stl import model as m

__all__ = ["build_summary", "check_summary", "run_check_summary"]


def _count(n: int, singular: str, plural: str | None = None) -> str:
    return f"{n} {singular if n == 1 else (plural or singular + 's')}"


def _program(program: m.Program) -> str:
    from sengen.stl import model as m

    types = program.types
    classes = sum(isinstance(t, m.ClassType) for t in types)
    files = _count(len(program.files), "file")
    return f"{files} ({_count(len(types), 'type')}, {_count(classes, 'class', 'classes')})"


def _warnings(diagnostics: Sequence[Diagnostic]) -> str:
    n = sum(d.severity is Severity.WARNING for d in diagnostics)
    return f"; {_count(n, 'warning')}" if n else ""


def check_summary(program: m.Program, diagnostics: Sequence[Diagnostic]) -> str:
    """``sengen: checked 2 files (5 types, 1 class); 1 warning``"""
    return f"sengen: checked {_program(program)}{_warnings(diagnostics)}\n"


def build_summary(result: GenerateResult, check: bool) -> str:
    """What a successful build (or ``build --check``) did, with the program when it was loaded
    (an up-to-date build loads nothing, so it counts only its outputs)."""
    if result.up_to_date or (check and not (result.written or result.removed)):
        return f"sengen: up to date: {_count(len(result.unchanged), 'output')} unchanged\n"
    outputs = [
        f"{_count(len(result.written), 'output')} written",
        f"{len(result.unchanged)} unchanged",
    ]
    if result.removed:
        outputs.append(f"{len(result.removed)} removed")
    loaded = f" {_program(result.program)}" if result.program is not None else ""
    return f"sengen: built{loaded}: {', '.join(outputs)}{_warnings(result.diagnostics)}\n"


def run_check_summary(config: str, components: int, objects: int) -> str:
    """``sengen: config.yaml is ready to run: 3 components, 5 objects``"""
    parts = f"{_count(components, 'component')}, {_count(objects, 'object')}"
    return f"sengen: {config} is ready to run: {parts}\n"
