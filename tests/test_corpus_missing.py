"""Without the shared STL corpus (a fresh clone without ``../shared``), the tests that need it skip
with one reason on one line of pytest's summary; ``SENGEN_REQUIRE_CORPUS=1`` (CI) fails them.

Runs pytest in a child process on corpus tests of three kinds (skipped in the test body, by a
module fixture, and parametrized over the corpus files at collection) with ``SENGEN_STL_CORPUS``
naming a folder that does not exist.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from corpus_layout import CORPUS_VARIABLE, FOM_CORPUS_VARIABLE, MISSING, REQUIRE_VARIABLE

TESTS = Path(__file__).resolve().parent
SELECTION = [
    "test_naming.py::test_corpus_mangling_warnings_per_file",
    "test_naming.py::test_corpus_mangling_warning_text_and_totals",
    "test_codegen_corpus.py::test_every_resolvable_file_generates",
    "test_codegen_corpus.py::test_all_trees_import_in_one_process",
    # Without ../shared the FOM corpus is missing too: still the one reason.
    "test_fom_set.py::test_dummy_entities_set",
]


def _pytest(tmp_path: Path, require: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (CORPUS_VARIABLE, REQUIRE_VARIABLE)}
    env[CORPUS_VARIABLE] = str(tmp_path / "no-corpus-here")
    env[FOM_CORPUS_VARIABLE] = str(tmp_path / "no-fom-corpus-here")
    if require:
        env[REQUIRE_VARIABLE] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", *SELECTION],
        cwd=TESTS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_missing_corpus_skips_with_one_reason(tmp_path: Path) -> None:
    result = _pytest(tmp_path, require=False)
    assert result.returncode == 0, result.stdout + result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1, result.stdout
    assert skipped[0].startswith("SKIPPED [5] corpus_layout.py:"), skipped[0]
    assert f"{MISSING}: expected the folder {CORPUS_VARIABLE}=" in skipped[0]
    assert str(tmp_path / "no-corpus-here") in skipped[0]
    assert "5 skipped" in result.stdout.splitlines()[-1]


def test_missing_corpus_fails_when_required(tmp_path: Path) -> None:
    result = _pytest(tmp_path, require=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"({REQUIRE_VARIABLE}=1: required)" in result.stdout
    # The two tests of the module fixture are errors (in set-up), the other two failures.
    assert result.stdout.splitlines()[-1].startswith("3 failed, 2 errors in "), result.stdout
