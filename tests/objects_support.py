"""Shared by the behavioural tests of generated classes (test_objects.py, test_object_calls.py,
test_object_values.py): generating the ``tests/objects_stl`` package, importing it, and driving
components' cycles without a kernel.

Each test module generates the tree under its own root package name, so that the three trees
live in three registry scopes and never clash with each other or with other tests. The parent of
the output folder is put on ``sys.path`` only while the tree is in use; the imported modules are
dropped from ``sys.modules`` afterwards.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sengen
from sengen.diagnostics import Severity
from sengen.runtime.objects.context import Context

STL_ROOT = Path(__file__).parent / "objects_stl"
SETTINGS = STL_ROOT / "settings.json"
STL_PACKAGE = "objtest"


@dataclass(frozen=True)
class Tree:
    """One generated and imported tree: its root package name and the two generated modules."""

    root: str
    types: Any
    devices: Any


def generate_tree(
    base: Path, root: str, sources: Iterable[Path] | None = None, settings: Path | None = SETTINGS
) -> Path:
    """Generate ``sources`` (the objtest package by default) into ``base/root``."""
    output = base / root
    result = sengen.generate(
        sources=list(sources) if sources is not None else [STL_ROOT / STL_PACKAGE],
        output=output,
        include_paths=[STL_ROOT],
        settings=settings,
    )
    errors = [d.format() for d in result.diagnostics if d.severity is Severity.ERROR]
    assert result.ok and not errors, errors
    return output


@contextlib.contextmanager
def on_path(folder: Path, *roots: str) -> Iterator[None]:
    """``folder`` on ``sys.path`` for the block; modules under ``roots`` forgotten afterwards."""
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        sys.path.remove(entry)
        for name in [n for n in sys.modules if any(_under(n, r) for r in roots)]:
            del sys.modules[name]
        importlib.invalidate_caches()


def _under(module: str, root: str) -> bool:
    return module == root or module.startswith(root + ".")


@contextlib.contextmanager
def imported_tree(base: Path, root: str) -> Iterator[Tree]:
    """Generate the objtest tree as ``root`` below ``base`` and import it for the block."""
    output = generate_tree(base, root)
    with on_path(output.parent, root):
        types = importlib.import_module(f"{root}.{STL_PACKAGE}.types")
        devices = importlib.import_module(f"{root}.{STL_PACKAGE}.devices")
        yield Tree(root, types, devices)


def cycle(
    context: Context, time: int, *objects: Any, update: Callable[[], None] | None = None
) -> None:
    """One cycle of a component at ``time`` (ns): the cycle time is fixed before the drain
    (runtime.md §5.1), then drain, ``update()`` of ``objects`` (then ``update``), commit."""
    context.time = time
    with context.active():
        context.drain()
        for obj in objects:
            obj.update(None)
        if update is not None:
            update()
        context.commit(time)


def in_cycle(context: Context, action: Callable[[], Any]) -> Any:
    """Run ``action`` as the component's thread, outside drain and commit."""
    with context.active():
        return action()


class Worker(threading.Thread):
    """A thread running ``step`` until stopped or ``limit`` steps ran; errors are kept."""

    def __init__(self, step: Callable[[], None], limit: int) -> None:
        super().__init__(daemon=True)
        self.step = step
        self.limit = limit
        self.stop_flag = threading.Event()
        self.error: BaseException | None = None
        self.steps = 0

    def run(self) -> None:
        try:
            while not self.stop_flag.is_set() and self.steps < self.limit:
                self.step()
                self.steps += 1
        except BaseException as error:  # kept for the test to re-raise
            self.error = error

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_flag.set()
        self.join(timeout)
        assert not self.is_alive(), "thread did not stop"
        if self.error is not None:
            raise self.error
