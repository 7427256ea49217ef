"""One error root (issue 20, §6): every exception class sengen defines, in the compiler and in
the runtime, private control-flow ones included, derives from ``SengenError``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import threading
from collections.abc import Iterator
from types import ModuleType

import sengen
import sengen.errors
import sengen.runtime
from sengen.runtime.errors import SengenError

# Running this module is running the CLI; it defines nothing.
_NOT_IMPORTED = {"sengen.__main__"}


def _module_names() -> Iterator[str]:
    """Every module of both packages. sengen.runtime comes from the top-level runtime/ folder,
    so its path is walked as well as sengen's."""
    yield "sengen"
    yield "sengen.runtime"
    for package in (sengen, sengen.runtime):
        prefix = package.__name__ + "."
        # Importing a package is how walk_packages finds what it holds; failures surface in
        # the import below, with their traceback.
        for info in pkgutil.walk_packages(package.__path__, prefix, onerror=lambda _: None):
            yield info.name


def _modules() -> list[ModuleType]:
    names = sorted(set(_module_names()) - _NOT_IMPORTED)
    return [importlib.import_module(name) for name in names]


def _exception_classes(module: ModuleType) -> Iterator[type[BaseException]]:
    """The exception classes ``module`` defines (not those it imports), nested ones included."""
    pending: list[tuple[object, str]] = [(module, "")]
    while pending:
        owner, prefix = pending.pop()
        for value in vars(owner).values():
            defined_here = (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and value.__qualname__ == prefix + value.__name__
            )
            if defined_here:
                pending.append((value, value.__qualname__ + "."))
                if issubclass(value, BaseException):
                    yield value


def test_every_exception_derives_from_sengen_error() -> None:
    threads = threading.active_count()
    modules = _modules()
    assert threading.active_count() == threads, "importing a module started a thread"
    found = {cls for module in modules for cls in _exception_classes(module)}
    # The walk reached both packages' modules: a broken walk must not pass vacuously.
    names = {cls.__module__ for cls in found}
    assert "sengen.runtime.kernel.config.loader" in names
    assert "sengen.diagnostics" in names or "sengen.errors" in names
    outside = sorted(
        f"{cls.__module__}.{cls.__qualname__}" for cls in found if not issubclass(cls, SengenError)
    )
    assert outside == [], "exception classes outside the SengenError tree: " + ", ".join(outside)


def test_one_root_from_every_front_door() -> None:
    assert sengen.SengenError is sengen.runtime.SengenError is sengen.errors.SengenError
    assert sengen.SengenError is SengenError
