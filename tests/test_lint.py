"""The code base stays ruff-clean, black-formatted and ``mypy --strict``-clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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


def _import_tree(folder: Path) -> Path:
    """The package as installed: ``sengen/`` with ``runtime/`` and ``templates/`` inside it.

    setuptools maps ``sengen.runtime`` to the top-level ``runtime/`` folder; an editable install
    does that with an import hook that mypy cannot follow, so mypy checks a tree of symlinks laid
    out as the wheel lays out the files.
    """
    package = folder / "sengen"
    package.mkdir()
    for entry in (ROOT / "sengen").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for mapped in ("runtime", "templates"):
        (package / mapped).symlink_to(ROOT / mapped)
    for other in ("tests", "bench"):
        (folder / other).symlink_to(ROOT / other)
    return folder


@pytest.mark.slow
def test_mypy_strict(tmp_path: Path) -> None:
    tree = _import_tree(tmp_path)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "sengen",
            "tests",
            "bench",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
