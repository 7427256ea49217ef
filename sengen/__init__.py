"""sengen: the Sen object middleware for Python.

The public surface: load STL into a model, check it for diagnostics, generate Python from it.
"""

from __future__ import annotations

from sengen.api import check
from sengen.builder import GenerateResult, build, generate
from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.errors import InputError, SengenError, StlSyntaxError, UsageError
from sengen.loader import LoadResult, load
from sengen.settings import Settings, load_settings
from sengen.version import __version__

__all__ = [
    "Diagnostic",
    "GenerateResult",
    "InputError",
    "LoadResult",
    "Note",
    "SengenError",
    "Settings",
    "Severity",
    "StlSyntaxError",
    "UsageError",
    "__version__",
    "build",
    "check",
    "generate",
    "load",
    "load_settings",
]
