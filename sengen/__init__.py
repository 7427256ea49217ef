"""sengen: the Sen object middleware for Python.

The public surface of the compiler: load STL into a model, check it for diagnostics, generate
Python from it. The names are loaded on first use: ``import sengen.runtime`` (which runs this
module first) must not load the STL front end, the generator or their libraries.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sengen.version import __version__

if TYPE_CHECKING:
    from sengen.api import check
    from sengen.codegen.builder import GenerateResult, build, generate
    from sengen.diagnostics import Diagnostic, Note, Severity
    from sengen.errors import InputError, SengenError, StlSyntaxError, UsageError
    from sengen.stl.loader import LoadResult, load
    from sengen.stl.settings import Settings, load_settings

# Where each public name lives (tests/test_api.py checks it against the imports above).
_HOMES: dict[str, str] = {
    "check": "sengen.api",
    "GenerateResult": "sengen.codegen.builder",
    "build": "sengen.codegen.builder",
    "generate": "sengen.codegen.builder",
    "InputError": "sengen.errors",
    "SengenError": "sengen.errors",
    "StlSyntaxError": "sengen.errors",
    "UsageError": "sengen.errors",
    "Diagnostic": "sengen.diagnostics",
    "Note": "sengen.diagnostics",
    "Severity": "sengen.diagnostics",
    "LoadResult": "sengen.stl.loader",
    "load": "sengen.stl.loader",
    "Settings": "sengen.stl.settings",
    "load_settings": "sengen.stl.settings",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sengen' has no attribute '{name}'")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # loaded once: later reads are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
