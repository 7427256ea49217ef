"""The project's ``[tool.sengen]`` table in ``pyproject.toml`` (spec codegen.md §7)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sengen.diagnostics import Diagnostic, Severity
from sengen.errors import InputError
from sengen.stl.source import display_path


class ProjectConfig(BaseModel):
    """The table as written; paths are relative to the folder of ``pyproject.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    sources: list[str] = Field(min_length=1)
    include_paths: list[str] = Field(default_factory=list, alias="include-paths")
    output: str | None = None
    settings: str | None = None
    docs: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    external_packages: dict[str, str] = Field(default_factory=dict, alias="external-packages")
    mangling_warnings: bool = Field(default=True, alias="mangling-warnings")
    schema_classes: dict[str, str] = Field(default_factory=dict, alias="schema-classes")


class Project:
    """A loaded project: its folder and its validated configuration."""

    def __init__(self, directory: Path, config: ProjectConfig) -> None:
        self.directory = directory
        self.config = config

    def path(self, relative: str) -> Path:
        return self.directory / relative

    @property
    def sources(self) -> list[Path]:
        return [self.path(s) for s in self.config.sources]

    @property
    def include_paths(self) -> list[Path]:
        return [self.path(s) for s in self.config.include_paths]

    @property
    def settings(self) -> Path | None:
        return self.path(self.config.settings) if self.config.settings else None


def _bad(path: Path, message: str) -> InputError:
    return InputError([Diagnostic(Severity.ERROR, display_path(path), 0, 0, message)])


def find_project(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` with a ``[tool.sengen]`` table, from ``start`` upwards."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return candidate
            if "sengen" in data.get("tool", {}):
                return candidate
    return None


def load_project(directory: Path) -> Project:
    """Read and validate the project of ``directory``; raises InputError on a bad table."""
    pyproject = find_project(directory.resolve())
    if pyproject is None:
        raise _bad(directory / "pyproject.toml", "no pyproject.toml with a [tool.sengen] table")
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(pyproject, f"cannot read project file: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise _bad(pyproject, f"invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("sengen")
    if not isinstance(table, dict):
        raise _bad(pyproject, "[tool.sengen] must be a table")
    try:
        config = ProjectConfig.model_validate(table)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'table'}: {err['msg']}"
            for err in exc.errors()
        )
        raise _bad(pyproject, f"invalid [tool.sengen] table: {problems}") from None
    return Project(pyproject.parent, config)


def config_import_path(config: Path) -> None:
    """The configuration's folder and, inside a project, the project directory go on the import
    path (runtime.md §1.7); an output folder itself never does."""
    folders = [config.resolve().parent]
    project = find_project(folders[0])
    if project is not None:
        folders.append(project.parent)
    for folder in reversed(folders):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
