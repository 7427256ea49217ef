"""The code base stays ruff-clean, black-formatted and ``mypy --strict``-clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from wheel_tree import run_mypy, wheel_tree

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ["sengen", "runtime", "templates", "tests", "bench", "examples"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_ruff_clean() -> None:
    result = _run("ruff", "check", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_black_formatted() -> None:
    result = _run("black", "--check", "--quiet", *CHECKED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_hold() -> None:
    """The layer contracts of pyproject.toml's [tool.importlinter] (docs/architecture.md)."""
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=ROOT,
        # The checkout's sources, whatever the venv has installed.
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout, result.stdout


@pytest.mark.slow
def test_mypy_strict(tmp_path: Path) -> None:
    tree = wheel_tree(tmp_path)
    result = run_mypy(tree, "sengen", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr
