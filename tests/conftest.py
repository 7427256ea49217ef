"""Shared helpers for the corpus tests (stl.md §11): where Sen's STL corpus lives, its include
roots, and cached loads.

The corpus is conformance input that is not part of this repository. It must sit at
``../shared/stl-corpus/sen/`` relative to the repository root; when it is missing, every test that
needs it FAILS (never skips) with a message saying where it was looked for.

Loads run with the corpus root as the working directory, so that display paths in diagnostics are
the corpus-relative paths the spec's tables use (§9.1: relative to the current directory when the
file is under it). Source files and include roots are passed as absolute paths.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import TypeVar

import pytest

import sengen
from sengen.model import Program, UserType

T = TypeVar("T", bound=UserType)

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_RELATIVE = "../shared/stl-corpus/sen"

# §11.2: the default include list, in this order (relative to the corpus root).
DEFAULT_INCLUDES: tuple[str, ...] = (
    "libs/kernel",
    "libs/db",
    "components/recorder",
    "examples/packages/school",
    "test/util/inheritance",
    "test/util/cmake_packages/level0",
    "test/util/cmake_packages/level1",
    "test/util/my_package",
)
# §11.2: for the four `.conan/…` files, `test/util/my_package` is replaced by the .conan copy.
CONAN_INCLUDES: tuple[str, ...] = tuple(
    ".conan/test_packages/package/my_package" if root == "test/util/my_package" else root
    for root in DEFAULT_INCLUDES
)


def corpus_root() -> Path:
    """The corpus folder; fails the calling test with a clear message when it is missing."""
    root = (REPO_ROOT / CORPUS_RELATIVE).resolve()
    if not root.is_dir() or not any(root.glob("*/**/*.stl")):
        pytest.fail(
            f"Sen STL corpus not found: expected the folder {CORPUS_RELATIVE}/ relative to the "
            f"repository root {REPO_ROOT} (resolved: {root}) holding the 91 .stl files of "
            "stl.md §11.1. The corpus tests cannot run without it.",
            pytrace=False,
        )
    return root


@pytest.fixture
def corpus() -> Path:
    """The corpus root (fails the test when the corpus is missing)."""
    return corpus_root()


def includes_for(path: str) -> tuple[str, ...]:
    """§11.2: the include list for checking the corpus file ``path`` (corpus-relative)."""
    return CONAN_INCLUDES if path.startswith(".conan/") else DEFAULT_INCLUDES


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
