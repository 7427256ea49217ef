"""A tree of symlinks laid out as the wheel installs sengen, for mypy.

``sengen/runtime`` and ``sengen/templates`` are symlinks to the top-level folders, so the tree
mirrors ``sengen/`` entry by entry; mypy checks it apart from the repository so that its module
names never depend on the working directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wheel_tree(folder: Path) -> Path:
    """``folder/sengen`` (``runtime/`` and ``templates/`` inside it), plus tests and bench."""
    package = folder / "sengen"
    package.mkdir()
    for entry in (ROOT / "sengen").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for other in ("tests", "bench"):
        (folder / other).symlink_to(ROOT / other)
    return folder


def run_mypy(
    tree: Path, *targets: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` with the project's configuration, the wheel tree on the path and the
    shared cache of the repository."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            *targets,
        ],
        cwd=cwd or tree,
        env={**os.environ, "MYPYPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
