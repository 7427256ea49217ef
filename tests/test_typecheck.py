"""A user's implementation and its generated package type-check in the venv the README creates.

The README's tutorial project (its ``<!-- file: -->`` blocks) is laid out in a temporary folder
and built with ``sengen build``; then ``mypy --strict`` and pyright check the implementation and
the generated package there. Both find sengen as the venv installed it, with no path of ours: the
editable install must be one they can follow (a ``.pth`` entry, not an import hook).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs_guide import BIN, README, parse_page, tutorial_section

CHECKED = ["greeter_impl.py", "gen"]
# Said when a checker cannot see sengen at all: a venv installed before the hook-free layout.
REINSTALL = (
    "if sengen itself is not found, the venv's editable install predates the hook-free layout:"
    " run `.venv/bin/pip install -q -e '.[dev]'` again"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tutorial's STL and implementation, built as its step 2 builds them."""
    folder = tmp_path_factory.mktemp("tutorial")
    section, first = tutorial_section(README.read_text())
    for block in parse_page("README.md", section, first).blocks:
        if block.file and block.lang in ("stl", "python"):
            (folder / block.file).parent.mkdir(parents=True, exist_ok=True)
            (folder / block.file).write_text(block.code)
    assert (folder / "greeter_impl.py").is_file(), "the tutorial no longer has greeter_impl.py"
    built = subprocess.run(
        [str(BIN / "sengen"), "build", "stl", "--out", "gen"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return folder


def _clean_env() -> dict[str, str]:
    """This process's environment without a path that would show the checkers sengen's sources."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
def test_mypy_strict_checks_the_tutorial_project(project: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(project / ".mypy_cache"),
            *CHECKED,
        ],
        cwd=project,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}{result.stderr}\n{REINSTALL}"


def _pyright() -> list[str]:
    """The pyright command, or skip (fail under CI, which installs node) when it cannot run."""
    problem = None
    if shutil.which("node") is None:
        # Without node the pyright package downloads one, which this network does not allow.
        problem = "pyright needs node on PATH (Debian: apt-get install nodejs)"
    elif not (BIN / "pyright").exists():
        problem = "pyright is not installed in this venv (pip install -e '.[dev]')"
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{problem}; .ci/run installs it", pytrace=False)
        pytest.skip(problem)
    return [str(BIN / "pyright")]


@pytest.mark.slow
def test_pyright_checks_the_tutorial_project(project: Path) -> None:
    result = subprocess.run(
        [*_pyright(), "--pythonpath", sys.executable, *CHECKED],
        cwd=project,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, f"{result.stdout}{result.stderr}\n{REINSTALL}"
    assert "0 errors" in result.stdout, result.stdout
