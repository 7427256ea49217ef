"""The build manifest: what the last build read and wrote, so that an unchanged project is seen
to be up to date before anything heavy is imported (codegen.md §7).

This module imports the standard library alone: ``sengen build`` on unchanged inputs decides
here, without loading the STL front end (lark, the FOM readers) or the renderers (Jinja2).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sengen.runtime.objects.interface import INTERFACE
from sengen.stl.fom.inputs import input_bytes
from sengen.version import __version__

if TYPE_CHECKING:
    from sengen.stl.loader import PathLike
    from sengen.stl.settings import Settings

MANIFEST = ".sengen-manifest.json"
# The generator's own sources, relative to the ``sengen`` package: their bytes are in the key.
_GENERATOR_FOLDERS = ("stl", "codegen", "templates")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def relative(path: Path, out: Path) -> str:
    """A path as seen from the output root, so that moving both together keeps it valid."""
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(out))).as_posix()


def build_key(
    out: Path,
    includes: list[Path],
    settings: PathLike | Settings | None,
    external: Mapping[str, str],
    flags: tuple[bool, ...],
) -> str:
    """What, besides the STL files, determines the output: versions, options and settings."""
    if settings is None:
        settings_text = ""
    elif isinstance(settings, str | os.PathLike):
        try:
            settings_text = digest(Path(settings).read_bytes())
        except OSError:
            settings_text = "unreadable"
    else:  # a Settings object, by its content
        settings_text = repr(sorted((k, dict(v)) for k, v in settings.classes.items()))
    options = {
        "sengen": __version__,
        "generator": generator_digest(),
        "interface": INTERFACE,  # the runtime interface the output is written for
        # Relative to the output, like every path in the manifest: moving a checkout along
        # with its output keeps the key.
        "includes": [relative(p, out) for p in includes],
        "settings": settings_text,
        "external": sorted(external.items()),
        "flags": flags,  # mangling warnings, root files, warnings as errors
    }
    return digest(json.dumps(options, sort_keys=True).encode())


@functools.cache
def generator_digest() -> str:
    """The generator's own code and templates: a development checkout that changes them
    without a version bump still rebuilds."""
    hasher = hashlib.sha256()
    compiler = Path(__file__).parent.parent  # sengen/: the front end, the generator
    for name in _GENERATOR_FOLDERS:
        for path in sorted((compiler / name).rglob("*")):
            if path.suffix in (".py", ".j2", ".lark"):
                hasher.update(path.name.encode() + path.read_bytes())
    return hasher.hexdigest()


def source_files(sources: Iterable[PathLike]) -> list[str]:
    """The STL files ``sources`` stand for (a folder: its ``*.stl`` files), absolute and sorted,
    as the loader expands them; ``["<unreadable>"]`` when one is missing or unreadable (the
    build then loads, and reports it)."""
    files: list[str] = []
    for source in sources:
        path = os.fspath(source)
        if os.path.isdir(path):
            try:
                for folder, dirs, names in os.walk(path, onerror=_raise):
                    dirs.sort()
                    files += [os.path.join(folder, n) for n in names if n.endswith(".stl")]
            except OSError:
                return ["<unreadable>"]
        elif os.path.isfile(path):
            files.append(path)
        else:
            return ["<unreadable>"]
    return sorted(os.path.abspath(f) for f in files)


def _raise(error: OSError) -> None:
    raise error


@dataclass
class Manifest:
    key: str
    sources: list[str]
    inputs: dict[str, str]  # path relative to the output root: sha256
    outputs: dict[str, str]

    @classmethod
    def read(cls, out: Path) -> Manifest | None:
        try:
            data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
            return cls(data["key"], data["sources"], data["inputs"], data["outputs"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def is_current(self, key: str, sources: list[str], out: Path) -> bool:
        """Whether a build with ``key`` of ``sources`` would write exactly what is there: the
        same key and sources, every input and output with the bytes recorded."""
        if key != self.key or sources != self.sources:
            return False
        for table in (self.inputs, self.outputs):
            for path, recorded in table.items():
                try:
                    if digest(input_bytes(out / path)) != recorded:
                        return False
                except OSError:
                    return False
        return True

    def render(self) -> bytes:
        data = {
            "generator": f"sengen {__version__}",
            "key": self.key,
            "sources": self.sources,
            "inputs": self.inputs,
            "outputs": self.outputs,
        }
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
