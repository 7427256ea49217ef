"""Preload of ``build:`` entries: importing their packages and finding the class an object
entry names (runtime.md §1.7, §1.1 step 6; codegen.md §3.10).

A ``class:`` is looked up, in order, as an instantiable STL class by its qualified STL name in the
scopes the entry's ``imports`` belong to (plus sengen's own), as an implementation class by the
name it registered itself under (``<stl package>.<PythonClassName>``), and as a dotted Python
path to a class inside one of the imports.
"""

from __future__ import annotations

import importlib
import pkgutil
import tomllib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sengen.runtime.errors import RegistryError, SengenError
from sengen.runtime.objects.objects import NativeObject, implementations
from sengen.runtime.objects.registry import OWN_SCOPE, registry
from sengen.runtime.objects.suggest import did_you_mean, suggestion


class ClassLookupError(SengenError, LookupError):
    """A ``class:`` that cannot be instantiated; the message is the spec's."""


# The modules whose frames lead into a failing user module: Python's import machinery, and the
# kernel importing it.
_IMPORTERS = ("importlib.", __name__.rpartition(".")[0] + ".")


@dataclass(frozen=True)
class ImportFailure:
    """A package of ``imports`` that failed: its one-line ``problem`` and the ``traceback`` of
    its code (see :func:`user_traceback`)."""

    problem: str
    traceback: str | None


def import_packages(imports: Sequence[str], folder: Path | None = None) -> list[ImportFailure]:
    """Import each module; one ``could not import package 'x': <reason>`` per failure. ``folder``
    is the configuration's, where a generated package is expected (see :func:`missing_hint`)."""
    failures = []
    for name in imports:
        try:
            importlib.import_module(name)
        # Any failure of user code at import is a preload error; so is a module that exits,
        # which would otherwise end the run at once with its own code (0: a silent success).
        except (Exception, SystemExit) as error:
            problem = f"could not import package '{name}': {type(error).__name__}: {error}"
            if isinstance(error, SystemExit):
                problem = f"could not import package '{name}': it called sys.exit({error.code!r})"
            if isinstance(error, ModuleNotFoundError):
                problem += missing_hint(name, error.name, folder)
            failures.append(ImportFailure(problem, user_traceback(error)))
    return failures


def missing_hint(name: str, missing: str | None, folder: Path | None) -> str:
    """What to do about the package ``name`` of ``imports`` when the module ``missing`` is not
    there: a sibling module of a close name, or the command that generates the package. Only for
    a dotted name that is itself, or lies inside, the missing module: a module that its own code
    failed to import, or a plain user module, is not sengen's to generate."""
    if missing is None or "." not in name or not _under(name, missing):
        return ""
    parent, _, leaf = missing.rpartition(".")
    if parent:
        try:
            siblings = [
                m.name for m in pkgutil.iter_modules(importlib.import_module(parent).__path__)
            ]
        except (ImportError, AttributeError):
            siblings = []
        found = suggestion(leaf, siblings)
        if found is not None:
            return f" (did you mean '{parent}.{found}'?)"
    root = name.partition(".")[0]
    where = folder.resolve() if folder is not None else Path.cwd()
    project = _project_folder(where)
    command = "sengen build" if project is not None else f"sengen build STL_DIR --out {root}"
    base = project if project is not None else where
    place = "" if base == Path.cwd().resolve() else f" in {base}"
    return f"; generate it with '{command}'{place} first"


def _project_folder(start: Path) -> Path | None:
    """The folder of the nearest ``pyproject.toml`` with a ``[tool.sengen]`` table, upwards from
    ``start``: there ``sengen build`` alone builds the project's packages."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return None
            if "sengen" in data.get("tool", {}):
                return folder
    return None


def user_traceback(error: BaseException) -> str | None:
    """The traceback of a module that failed while being imported, from the first frame of its
    own code on (the import machinery's frames before it say nothing to its author); a
    ``SyntaxError`` shows its file and line. None when none of its code ran: a module that is
    not there has nothing to show beyond its one-line problem."""
    frames = error.__traceback__
    while frames is not None and _importer(frames.tb_frame.f_globals.get("__name__")):
        frames = frames.tb_next
    if frames is None and not isinstance(error, SyntaxError):
        return None
    return "".join(traceback.format_exception(type(error), error, frames))


def _importer(module: object) -> bool:
    return f"{module}.".startswith(_IMPORTERS)


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def scopes_for(imports: Sequence[str]) -> list[str]:
    """The registry scopes an entry's imports reach: the generated roots they lie in or hold,
    those of the implementation classes they define, and sengen's own."""
    found = [
        scope
        for scope in registry.scopes()
        if any(_under(name, scope) or _under(scope, name) for name in imports)
    ]
    for cls in registry.implementations():
        if any(_under(cls.__module__, name) for name in imports):
            found.append(cls.META.scope)
    return list(dict.fromkeys([*found, OWN_SCOPE]))


def resolve_class(name: str, imports: Sequence[str]) -> type[NativeObject]:
    """The class a ``class:`` names; :class:`ClassLookupError` with the spec's message."""
    scopes = scopes_for(imports)
    try:
        entry = registry.find_stl_class(name, scopes)
        implementation = registry.find_implementation(name, scopes)
    except RegistryError as error:
        raise ClassLookupError(str(error)) from None
    if implementation is not None:
        return _instantiable(name, implementation)
    if entry is not None:
        if not entry.meta.instantiable:
            raise ClassLookupError(f"class '{name}' is abstract and cannot be instantiated")
        return entry.base
    found = _by_path(name, imports)
    if found is None:
        hint = did_you_mean(name, class_names(scopes), dotted=True)
        raise ClassLookupError(
            f"could not find class '{name}' in any of the imported packages{hint}"
        )
    return _instantiable(name, found)


def class_names(scopes: Sequence[str]) -> list[str]:
    """Every name a ``class:`` may use in ``scopes``: the STL classes and the implementations."""
    names = [e.meta.qualified_name for s in scopes for e in registry.entries(s)[1]]
    wanted = set(scopes)
    names += [
        n for n, found in implementations().items() if any(c.META.scope in wanted for c in found)
    ]
    return names


def _by_path(name: str, imports: Sequence[str]) -> type[NativeObject] | None:
    module_name, _, attribute = name.rpartition(".")
    if not module_name or not any(_under(module_name, package) for package in imports):
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    found = getattr(module, attribute, None)
    return found if isinstance(found, type) and issubclass(found, NativeObject) else None


def _instantiable(name: str, cls: type[NativeObject]) -> type[NativeObject]:
    missing = sorted(getattr(cls, "__abstractmethods__", ()))
    if missing:
        # A user's implementation class that left some of its ``*_impl`` hooks out.
        methods = ", ".join(f"{method}()" for method in missing)
        raise ClassLookupError(f"class '{name}' is abstract: implement {methods}")
    if cls.__dict__.get("_STL_VIEW") and cls.META.is_abstract:
        raise ClassLookupError(f"class '{name}' is abstract and cannot be instantiated")
    return cls
