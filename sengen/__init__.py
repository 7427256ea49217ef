"""sengen: the Sen object middleware for Python.

The public surface of the STL front end: load STL into a model, or check it for diagnostics.
"""

from __future__ import annotations

from sengen.api import check
from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.errors import InputError, SengenError, StlSyntaxError, UsageError
from sengen.loader import LoadResult, load
from sengen.settings import Settings, load_settings
from sengen.version import __version__

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
