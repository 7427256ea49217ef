"""Shared by the tests of the example projects (``examples/<name>``): a copy of an example with
its STL generated beside it, its ``sengen run`` in a subprocess, and its modules made importable
for the test kernel.

A copy keeps the tests independent of a ``gen/`` built by hand in the example folder. Every
example generates the root package ``gen``, so only one example's modules may be imported at a
time: :func:`importable` forgets them (and any other ``gen``) when it closes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sengen

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def copy_example(name: str, folder: Path, settings: str | None = None) -> Path:
    """``examples/<name>`` copied into ``folder`` (its own ``gen/`` excluded) with the package
    ``gen`` generated from its ``stl/``; ``settings`` is a codegen settings file in it."""
    shutil.copytree(
        EXAMPLES / name,
        folder,
        ignore=shutil.ignore_patterns("gen", "__pycache__"),
        dirs_exist_ok=True,
    )
    result = sengen.generate(
        [folder / "stl"],
        output=folder / "gen",
        settings=folder / settings if settings is not None else None,
    )
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    return folder


def sengen_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``sengen run ARGS`` in ``folder``, standard input closed as in a headless run."""
    return subprocess.run(
        [sys.executable, "-m", "sengen", "run", *args],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def clean_log(stderr: str) -> list[str]:
    """The lines of a run's log, which must hold nothing above INFO and no traceback."""
    lines = stderr.splitlines()
    assert all(line.startswith(("INFO ", "DEBUG ")) for line in lines), stderr
    return lines


def matches(pattern: str, lines: list[str]) -> list[re.Match[str]]:
    """The lines that match ``pattern`` entirely, in order."""
    found = (re.fullmatch(pattern, line) for line in lines)
    return [m for m in found if m is not None]


@contextmanager
def importable(folder: Path) -> Iterator[None]:
    """While open, ``gen`` and the example's modules are imported from ``folder``."""
    _forget(folder)
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        _forget(folder)


def _forget(folder: Path) -> None:
    while str(folder) in sys.path:
        sys.path.remove(str(folder))
    for name, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None) or ""
        if name == "gen" or name.startswith("gen.") or origin.startswith(f"{folder}/"):
            del sys.modules[name]
