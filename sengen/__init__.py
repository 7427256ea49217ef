"""sengen: the Sen object middleware for Python.

The public surface of the STL front end: load STL into a model, or check it for diagnostics.
"""

from __future__ import annotations

from collections.abc import Iterable

from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.errors import InputError, SengenError, StlSyntaxError, UsageError
from sengen.loader import LoadResult, PathLike, load
from sengen.settings import Settings, load_settings
from sengen.version import __version__


def check(
    sources: Iterable[PathLike],
    *,
    include_paths: Iterable[PathLike] = (),
    settings: PathLike | Settings | None = None,
) -> list[Diagnostic]:
    """Diagnostics only: what ``sengen check`` reports for ``sources``."""
    return list(load(sources, include_paths=include_paths, settings=settings).diagnostics)


__all__ = [
    "Diagnostic",
    "InputError",
    "LoadResult",
    "Note",
    "SengenError",
    "Settings",
    "Severity",
    "StlSyntaxError",
    "UsageError",
    "__version__",
    "check",
    "load",
    "load_settings",
]
