"""The library API of ``sengen check``: the front end plus the code generator's naming analysis."""

from __future__ import annotations

from collections.abc import Iterable

from sengen.codegen.collisions import collision_errors
from sengen.codegen.naming import mangling_warnings
from sengen.codegen.pyview import Layout
from sengen.diagnostics import Diagnostic
from sengen.stl.loader import PathLike, load, ordered
from sengen.stl.model import Program
from sengen.stl.settings import Settings


def check(
    sources: Iterable[PathLike],
    *,
    include_paths: Iterable[PathLike] = (),
    settings: PathLike | Settings | None = None,
    mangling: bool = True,
) -> list[Diagnostic]:
    """Diagnostics only: what ``sengen check`` reports for ``sources``, the code generator's
    naming and collision analysis included.

    ``mangling=False`` silences the Python-name mangling warnings (``mangling-warnings = false``).
    """
    return check_program(
        sources, include_paths=include_paths, settings=settings, mangling=mangling
    )[1]


def check_program(
    sources: Iterable[PathLike],
    *,
    include_paths: Iterable[PathLike] = (),
    settings: PathLike | Settings | None = None,
    mangling: bool = True,
) -> tuple[Program | None, list[Diagnostic]]:
    """:func:`check`, with the resolved program too (None when it had errors)."""
    result = load(sources, include_paths=include_paths, settings=settings)
    diagnostics = list(result.diagnostics)
    if result.program is not None:
        found = mangling_warnings(result.program) if mangling else []
        found += collision_errors(result.program, Layout(result.program, {}))
        diagnostics = ordered(diagnostics + found, result.file_order)
    return result.program, diagnostics
