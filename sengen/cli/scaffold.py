"""``sengen init``: a new, runnable project from the templates in ``templates/init/``.

The project is one STL package named after its folder, with one class, its implementation, a
configuration that runs it beside a shell, a test on the test kernel and a README. Every name is
checked before anything is written, so a project that is created also builds: the package name
is a Python module name and an STL package segment, the class name an STL type name.
"""

from __future__ import annotations

import functools
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import jinja2

import sengen.templates
from sengen.codegen.naming import reserved_cause, snake_case
from sengen.errors import SengenError
from sengen.stl.lexer import KEYWORDS, QUERY_KEYWORDS
from sengen.stl.names import type_name_error

# Lowercase only: the name is also the project's folder, and a lowercase module name imports the
# same way on case-insensitive file systems.
_PACKAGE = re.compile(r"[a-z][a-z0-9_]*")
_MAX_NAME = 64

# (template, path in the project); "{package}" and "{module}" are filled in per project.
_FILES = (
    ("pyproject.toml.j2", "pyproject.toml"),
    ("README.md.j2", "README.md"),
    ("gitignore.j2", ".gitignore"),
    ("class.stl.j2", "stl/{package}/{module}.stl"),
    ("impl.py.j2", "{package}_impl.py"),
    ("config.yaml.j2", "config.yaml"),
    ("conftest.py.j2", "tests/conftest.py"),
    ("test.py.j2", "tests/test_{module}.py"),
)


class InitError(SengenError):
    """A bad project name or class name, or a folder that cannot be used (exit status 1)."""


@dataclass(frozen=True)
class ProjectNames:
    """The names a scaffolded project is made of."""

    package: str  # the folder's name: STL package, Python module prefix, bus ``local.<package>``
    cls: str  # the STL class
    module: str  # snake_case of the class: its STL file, its test and its object's name


def package_error(name: str) -> str | None:
    """Why ``name`` cannot name a project (and its STL package), or None when it can."""
    if len(name) > _MAX_NAME:
        return f"at most {_MAX_NAME} characters"
    if not _PACKAGE.fullmatch(name):
        return (
            "a project name starts with a lowercase letter and has only lowercase letters,"
            " digits and '_'"
        )
    if name in KEYWORDS:
        return "it is an STL keyword"
    if reserved_cause(name, "module") is not None:
        return "it is reserved in Python"
    return None


def class_error(name: str) -> str | None:
    """Why ``name`` cannot name the project's class, or None when it can."""
    if len(name) > _MAX_NAME:
        return f"at most {_MAX_NAME} characters"
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        return "a class name has only letters and digits"
    problem = type_name_error(name)
    if problem is not None:
        return problem.split(": ", 1)[-1]
    if name in QUERY_KEYWORDS or reserved_cause(name, "type") is not None:
        return "it is reserved in STL or in Python"
    return None


def default_class(package: str) -> str:
    """``my_counter`` → ``MyCounter``."""
    return "".join(part[:1].upper() + part[1:] for part in package.split("_"))


def plan(folder: Path, cls: str | None = None) -> ProjectNames:
    """The project ``sengen init`` makes in ``folder``; :class:`InitError` for a bad name."""
    package = folder.resolve().name  # `sengen init .` names the project after the folder
    problem = package_error(package)
    if problem is not None:
        raise InitError(f"invalid project name '{package}': {problem}")
    chosen = cls if cls is not None else default_class(package)
    problem = class_error(chosen)
    if problem is not None:
        hint = "" if cls is not None else f" (derived from '{package}'; choose one with --class)"
        raise InitError(f"invalid class name '{chosen}'{hint}: {problem}")
    return ProjectNames(package, chosen, snake_case(chosen))


@functools.cache
def _environment() -> jinja2.Environment:
    # templates/init/ has no __init__.py: it is package data, found beside sengen.templates.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(sengen.templates.__file__).parent / "init"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # TOML, YAML, Python, STL and Markdown: nothing is HTML
    )


def render(project: ProjectNames) -> dict[str, str]:
    """Every file of the project, by its path relative to the project folder."""
    env = _environment()
    names = {"package": project.package, "module": project.module}
    return {
        path.format(**names): env.get_template(template).render(
            package=project.package, cls=project.cls, module=project.module
        )
        for template, path in _FILES
    }


def init(folder: Path, cls: str | None = None) -> tuple[ProjectNames, list[str]]:
    """Create the project in ``folder`` (made if missing, refused unless empty; its parent must
    exist) and return it with the paths written. Nothing is left behind when writing fails."""
    project = plan(folder, cls)
    files = render(project)
    try:
        if folder.exists() and not folder.is_dir():
            raise InitError(f"'{folder}' exists and is not a folder")
        if folder.is_dir() and any(folder.iterdir()):
            raise InitError(f"'{folder}' is not empty: sengen init only creates new projects")
    except OSError as error:  # an unreadable folder
        raise InitError(f"cannot use '{folder}': {error}") from None
    made = not folder.exists()
    try:
        folder.mkdir(exist_ok=True)
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as error:
        _undo(folder, made)
        raise InitError(f"cannot create the project in '{folder}': {error}") from None
    return project, list(files)


def _undo(folder: Path, made: bool) -> None:
    if made:
        shutil.rmtree(folder, ignore_errors=True)
    elif folder.is_dir():  # it was empty before: empty it again
        for child in folder.iterdir():
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
