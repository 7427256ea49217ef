"""Shared helpers for the corpus tests (stl.md §11): where Sen's STL corpus lives, its include
roots, and cached loads.

The corpus is conformance input that is not part of this repository. It sits at
``../shared/stl-corpus/sen/`` relative to the repository root; when it is missing, every test that
needs it skips with one reason saying where it was looked for (fails under
``SENGEN_REQUIRE_CORPUS=1``, as in CI): see ``corpus_layout.corpus_root``.

Loads run with the corpus root as the working directory, so that display paths in diagnostics are
the corpus-relative paths the spec's tables use (§9.1: relative to the current directory when the
file is under it). Source files and include roots are passed as absolute paths.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Generator
from pathlib import Path
from typing import TypeVar

import pytest
from corpus_layout import (
    FOM_MISSING,
    MISSING,
    corpus_root,
    fom_corpus_root,
    includes_for,
)

import sengen
from sengen.stl.model import ClassType, Event, Method, Program, Property, UserType

T = TypeVar("T", bound=UserType)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Reports every skip for a missing corpus at one place, ``corpus_root``, so that pytest's
    summary shows one line for all of them: a skip raised while a fixture is set up would be
    reported at the line of each test that uses it."""
    report = yield
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple):
        for reason, where in ((MISSING, corpus_root), (FOM_MISSING, fom_corpus_root)):
            if reason in longrepr[2]:
                code = where.__code__
                report.longrepr = (code.co_filename, code.co_firstlineno, longrepr[2])
    return report


@pytest.fixture
def corpus() -> Path:
    """The corpus root (skips the test when the corpus is missing)."""
    return corpus_root()


@functools.cache
def load_corpus(files: tuple[str, ...], includes: tuple[str, ...]) -> sengen.LoadResult:
    """One run over corpus-relative ``files`` with corpus-relative include roots (cached)."""
    root = corpus_root()
    with contextlib.chdir(root):
        return sengen.load([root / f for f in files], include_paths=[root / i for i in includes])


def load_file(path: str) -> sengen.LoadResult:
    """A corpus file checked on its own, with its §11.2 include list."""
    return load_corpus((path,), includes_for(path))


def program_of(path: str) -> Program:
    """The resolved model of a corpus file checked on its own; the load must have no error."""
    result = load_file(path)
    errors = [d.format_header() for d in result.diagnostics if d.is_error]
    assert not errors, f"{path}: unexpected errors: {errors}"
    assert result.program is not None
    return result.program


def find_type(program: Program, qualified_name: str, kind: type[T]) -> T:
    """The declared type ``qualified_name``, which must exist and be a ``kind``."""
    found = program.find(qualified_name)
    assert found is not None, f"type {qualified_name!r} not in the model"
    assert isinstance(found, kind), f"{qualified_name!r} is a {type(found).__name__}"
    return found


def prop(cls: ClassType, name: str) -> Property:
    (found,) = [p for p in cls.properties if p.name == name]
    return found


def method(cls: ClassType, name: str) -> Method:
    (found,) = [m for m in cls.methods if m.name == name]
    return found


def event(cls: ClassType, name: str) -> Event:
    (found,) = [e for e in cls.events if e.name == name]
    return found
