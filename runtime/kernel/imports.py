"""Preload of ``build:`` entries: importing their packages and finding the class an object
entry names (runtime.md §1.7, §1.1 step 6; codegen.md §3.10).

A ``class:`` is looked up, in order, as an instantiable STL class by its qualified STL name in the
scopes the entry's ``imports`` belong to (plus sengen's own), as an implementation class by the
name it registered itself under (``<stl package>.<PythonClassName>``), and as a dotted Python
path to a class inside one of the imports.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Sequence
from dataclasses import dataclass

from sengen.runtime.errors import RegistryError, SengenError
from sengen.runtime.objects.objects import NativeObject
from sengen.runtime.objects.registry import OWN_SCOPE, registry


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


def import_packages(imports: Sequence[str]) -> list[ImportFailure]:
    """Import each module; one ``could not import package 'x': <reason>`` per failure."""
    failures = []
    for name in imports:
        try:
            importlib.import_module(name)
        except Exception as error:  # any failure of user code at import is a preload error
            problem = f"could not import package '{name}': {type(error).__name__}: {error}"
            failures.append(ImportFailure(problem, user_traceback(error)))
    return failures


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
        raise ClassLookupError(f"could not find class '{name}' in any of the imported packages")
    return _instantiable(name, found)


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
    if getattr(cls, "__abstractmethods__", None) or (
        cls.__dict__.get("_STL_VIEW") and cls.META.is_abstract
    ):
        raise ClassLookupError(f"class '{name}' is abstract and cannot be instantiated")
    return cls
