"""Where Sen's STL corpus lives and how it is built (stl.md §11.2 to §11.4), for tests and bench.

The corpus is conformance input outside this repository, at ``../shared/stl-corpus/sen/``
relative to the repository root. A test that needs it fails (never skips) when it is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS_RELATIVE = "../shared/stl-corpus/sen"

# §11.2: the default include list, in this order (corpus-relative).
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
# §11.4: the files that fail on an HLA FOM import.
FOM_FILES: frozenset[str] = frozenset(
    [
        "examples/packages/aircrafts/stl/dummy_aircraft.stl",
        "examples/packages/terrain_server/stl/basic_types.stl",
        "examples/packages/terrain_server/stl/terrain_server.stl",
        "examples/packages/weather_server/stl/weather_server.stl",
    ]
)


def corpus_path() -> Path:
    return (REPO_ROOT / CORPUS_RELATIVE).resolve()


def corpus_root() -> Path:
    """The corpus folder; fails the calling test with a clear message when it is missing."""
    root = corpus_path()
    if not root.is_dir() or not any(root.glob("*/**/*.stl")):
        pytest.fail(
            f"Sen STL corpus not found: expected the folder {CORPUS_RELATIVE}/ relative to the "
            f"repository root {REPO_ROOT} (resolved: {root}) holding the 91 .stl files of "
            "stl.md §11.1. The corpus tests cannot run without it.",
            pytrace=False,
        )
    return root


def includes_for(path: str) -> tuple[str, ...]:
    """§11.2: the include list for checking the corpus file ``path`` (corpus-relative)."""
    return CONAN_INCLUDES if path.startswith(".conan/") else DEFAULT_INCLUDES


def main_run(files: list[str]) -> list[str]:
    """§11.3: every file except the `.conan` ones and the later alternative members."""
    return [f for f in files if not f.startswith(".conan/") and f not in LATER_MEMBERS]
