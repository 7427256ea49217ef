"""What ``sengen run`` says when it is given a file that is not a configuration: an STL or
Python file named by mistake would otherwise be reported as a YAML problem
("the configuration must be a map"), which does not tell what went wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Final

YAML_SUFFIXES: Final = (".yaml", ".yml")

# Files that are never a configuration, with what to do with them instead.
_NOT_CONFIGURATIONS: Final = {
    ".stl": "an STL file: compile it with 'sengen build'",
    ".py": "a Python file: a configuration names its modules in 'imports:' or a 'load:' entry",
    ".toml": "a TOML file: a project's pyproject.toml is read by 'sengen build'",
}


def not_a_configuration(path: Path) -> str | None:
    """The line refusing ``path`` when its suffix says it is not a configuration, else None."""
    kind = _NOT_CONFIGURATIONS.get(path.suffix.lower())
    if kind is None:
        return None
    return f"{path}: not a configuration: 'sengen run' takes a YAML file (.yaml); this is {kind}\n"


def configuration_note(path: Path) -> str:
    """A line after the problems of a file that failed to load and is not named ``*.yaml``."""
    if path.suffix.lower() in YAML_SUFFIXES:
        return ""
    return f"{path}: note: 'sengen run' takes a YAML configuration file (.yaml)\n"
