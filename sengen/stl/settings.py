"""The codegen settings file (spec codegen.md §4): checked properties and deferred methods."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sengen.diagnostics import Diagnostic, Severity
from sengen.stl.model import ClassType, Program
from sengen.stl.source import display_path

_LISTS = {"checkedProperties": "property", "deferredMethods": "method"}


@dataclass(frozen=True, slots=True)
class Settings:
    """Per qualified class name: the STL names listed under each key."""

    classes: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)
    path: Path | None = None

    def is_checked(self, class_name: str, prop: str) -> bool:
        return prop in self.classes.get(class_name, {}).get("checkedProperties", ())

    def is_deferred(self, class_name: str, method: str) -> bool:
        return method in self.classes.get(class_name, {}).get("deferredMethods", ())


def _diagnostic(path: Path, message: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    return Diagnostic(severity, display_path(path), 0, 0, message)


def load_settings(path: Path) -> tuple[Settings, list[Diagnostic]]:
    """Read and shape-check a settings file. Errors leave the settings empty."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        return Settings(), [_diagnostic(path, f"cannot read settings file: {exc.strerror}")]
    except (ValueError, UnicodeDecodeError) as exc:
        return Settings(), [_diagnostic(path, f"settings: invalid JSON: {exc}")]
    if not isinstance(data, dict):
        return Settings(), [_diagnostic(path, "settings: expecting a JSON object")]
    diagnostics: list[Diagnostic] = []
    for key in data:
        if key != "classes":
            diagnostics.append(
                _diagnostic(path, f"settings: unknown key '{key}'", Severity.WARNING)
            )
    classes = data.get("classes", {})
    if not isinstance(classes, dict):
        return Settings(), [
            *diagnostics,
            _diagnostic(path, "settings: expecting an object for 'classes'"),
        ]
    result: dict[str, dict[str, tuple[str, ...]]] = {}
    for class_name, entry in classes.items():
        if not isinstance(entry, dict):
            diagnostics.append(
                _diagnostic(path, f"settings: expecting an object for class '{class_name}'")
            )
            continue
        lists: dict[str, tuple[str, ...]] = {}
        for key, value in entry.items():
            if key not in _LISTS:
                diagnostics.append(
                    _diagnostic(
                        path,
                        f"settings: unknown key '{key}' for class '{class_name}'",
                        Severity.WARNING,
                    )
                )
            elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                diagnostics.append(
                    _diagnostic(path, f"expecting a list for '{key}' of class '{class_name}'")
                )
            else:
                lists[key] = tuple(value)
        result[class_name] = lists
    if any(d.is_error for d in diagnostics):
        return Settings(path=path), diagnostics
    return Settings(result, path), diagnostics


def validate_settings(settings: Settings, program: Program) -> list[Diagnostic]:
    """Names in the settings must exist among the resolved classes (codegen.md §4)."""
    if settings.path is None:
        return []
    diagnostics: list[Diagnostic] = []
    for class_name, lists in settings.classes.items():
        found = program.find(class_name)
        if not isinstance(found, ClassType):
            diagnostics.append(
                _diagnostic(
                    settings.path,
                    f"settings: class '{class_name}' is not among the resolved types",
                    Severity.WARNING,
                )
            )
            continue
        for key, names in lists.items():
            word = _LISTS[key]
            available = {
                p.name
                for c in (found, *found.ancestors())
                for p in (c.properties if word == "property" else c.methods)
            }
            for name in names:
                if name not in available:
                    diagnostics.append(
                        _diagnostic(
                            settings.path, f"settings: class '{class_name}' has no {word} '{name}'"
                        )
                    )
    return diagnostics
