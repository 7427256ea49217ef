"""Where Sen's STL corpus lives and how it is built (stl.md §11.2 to §11.4), for tests and bench.

The corpus is conformance input outside this repository, at ``../shared/stl-corpus/sen/``
relative to the repository root (``SENGEN_STL_CORPUS`` names another folder). A test that needs
it skips when it is missing, with one reason for all of them, so that the suite passes on a fresh
clone; with ``SENGEN_REQUIRE_CORPUS=1`` (which ``.ci/run`` sets) it fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_RELATIVE = "../shared/stl-corpus/sen"
# A corpus folder other than the default one (tests of the skip use a missing one).
CORPUS_VARIABLE = "SENGEN_STL_CORPUS"
# Set to 1, a missing corpus fails the tests that need it instead of skipping them.
REQUIRE_VARIABLE = "SENGEN_REQUIRE_CORPUS"
# What a test id shows in place of a corpus file when the corpus is missing (see corpus_files).
NO_CORPUS = "no-corpus"
# How the reason for skipping a corpus test starts (conftest.py folds such skips into one line).
MISSING = "Sen STL corpus not found"

# The FOM corpus (fom.md §12.1), next to the STL corpus: ``SENGEN_FOM_CORPUS`` names another.
FOM_CORPUS_RELATIVE = "../shared/fom-corpus"
FOM_CORPUS_VARIABLE = "SENGEN_FOM_CORPUS"
FOM_MISSING = "Sen FOM corpus not found"


def fom_corpus_path() -> Path:
    """Where the FOM corpus is looked for (it may be missing)."""
    override = os.environ.get(FOM_CORPUS_VARIABLE)
    return Path(override).resolve() if override else (REPO_ROOT / FOM_CORPUS_RELATIVE).resolve()


def fom_corpus_root() -> Path:
    """The FOM corpus folder; skips the calling test when it is missing (fails under
    ``SENGEN_REQUIRE_CORPUS=1``), like :func:`corpus_root`."""
    root = fom_corpus_path()
    if not (root / "examples/packages/hla_fom").is_dir():
        if not corpus_present():
            # Both corpora missing is one thing (no ../shared at all): one reason, one line.
            corpus_root()
        reason = (
            f"{FOM_MISSING}: expected the folder {FOM_CORPUS_RELATIVE}/ relative to the "
            f"repository root {REPO_ROOT} (resolved: {root}) holding the FOM data of fom.md §12.1"
        )
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1: required)", pytrace=False)
        pytest.skip(reason)
    return root


# fom.md §14: the FOM set's include root (absolute: it is outside the STL corpus).
FOM_INCLUDE = (fom_corpus_path() / "examples/packages/hla_fom").as_posix()
# §11.2: the default include list, in this order (corpus-relative), plus the FOM include root.
DEFAULT_INCLUDES: tuple[str, ...] = (
    "libs/kernel",
    "libs/db",
    "components/recorder",
    "examples/packages/school",
    "test/util/inheritance",
    "test/util/cmake_packages/level0",
    "test/util/cmake_packages/level1",
    "test/util/my_package",
    FOM_INCLUDE,
)
# §11.2: for the four `.conan/…` files, `test/util/my_package` is replaced by the .conan copy.
CONAN_INCLUDES: tuple[str, ...] = tuple(
    ".conan/test_packages/package/my_package" if root == "test/util/my_package" else root
    for root in DEFAULT_INCLUDES
)

RUNTIME = "libs/kernel/test/integration/runtime_compatibility/runtime_{}/stl/runtime/runtime.stl"
TRANSPORT = "libs/kernel/test/integration/transport/transport_{}/stl/transport/transport.stl"
PARTICIPANT = "libs/kernel/test/integration/type_clash/participant_{0}/stl/participant_{0}.stl"
# §11.3: the alternative groups outside `.conan/`; the first member of each is in the main run.
ALTERNATIVE_GROUPS: dict[str, tuple[str, ...]] = {
    "query_test": (
        "test/util/query_test/stl/query_test.stl",
        "libs/core/test/obj/stl/query_test.stl",
    ),
    "runtime": tuple(RUNTIME.format(i) for i in range(1, 7)),
    "transport": tuple(TRANSPORT.format(i) for i in (1, 2)),
    "type_clash": tuple(PARTICIPANT.format(i) for i in (1, 2, 3)),
}
LATER_MEMBERS: tuple[str, ...] = tuple(
    f for group in ALTERNATIVE_GROUPS.values() for f in group[1:]
)
# §11.4: the files that import HLA FOMs (fom.md §12.5).
FOM_FILES: frozenset[str] = frozenset(
    [
        "examples/packages/aircrafts/stl/dummy_aircraft.stl",
        "examples/packages/terrain_server/stl/basic_types.stl",
        "examples/packages/terrain_server/stl/terrain_server.stl",
        "examples/packages/weather_server/stl/weather_server.stl",
    ]
)


def corpus_path() -> Path:
    """Where the corpus is looked for (it may be missing)."""
    override = os.environ.get(CORPUS_VARIABLE)
    return Path(override).resolve() if override else (REPO_ROOT / CORPUS_RELATIVE).resolve()


def corpus_present() -> bool:
    root = corpus_path()
    return root.is_dir() and any(root.glob("*/**/*.stl"))


def corpus_root() -> Path:
    """The corpus folder. When it is missing, skips the calling test, or fails it under
    ``SENGEN_REQUIRE_CORPUS=1``; the skip is raised here, so pytest's summary folds every
    skipped corpus test into one line with one reason."""
    root = corpus_path()
    if not corpus_present():
        where = (
            f"{CORPUS_VARIABLE}={os.environ[CORPUS_VARIABLE]}"
            if os.environ.get(CORPUS_VARIABLE)
            else f"{CORPUS_RELATIVE}/ relative to the repository root {REPO_ROOT}"
        )
        reason = (
            f"{MISSING}: expected the folder {where} (resolved: {root}) holding "
            "the 91 .stl files of stl.md §11.1. The corpus tests cannot run without it."
        )
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1: required)", pytrace=False)
        pytest.skip(reason)
    return root


def corpus_files() -> list[str]:
    """The corpus-relative paths of every corpus file, sorted; safe at collection time, where a
    missing corpus must not stop the run: it then gives ``[NO_CORPUS]``, one parameter for a
    parametrized test, whose first call of :func:`corpus_root` skips it with the others."""
    if not corpus_present():
        return [NO_CORPUS]
    root = corpus_path()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.stl"))


def includes_for(path: str) -> tuple[str, ...]:
    """§11.2: the include list for checking the corpus file ``path`` (corpus-relative)."""
    return CONAN_INCLUDES if path.startswith(".conan/") else DEFAULT_INCLUDES


def main_run(files: list[str]) -> list[str]:
    """§11.3: every file except the `.conan` ones and the later alternative members."""
    return [f for f in files if not f.startswith(".conan/") and f not in LATER_MEMBERS]
