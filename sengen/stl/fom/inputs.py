"""What a build that reaches FOM modules depends on (fom.md §10.6), for incremental builds."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def _xml_files(folder: Path) -> list[Path]:
    try:
        return sorted(
            p for p in folder.iterdir() if p.name.lower().endswith(".xml") and p.is_file()
        )
    except OSError:
        return []


def build_inputs(paths: Iterable[Path]) -> list[Path]:
    """The files whose bytes a build depends on: every program file that exists (the synthetic
    hla file does not), and for a FOM module its whole set: every XML file, and the set root and
    module folders, whose listings (:func:`input_bytes`) change when a module is added."""
    result: dict[Path, None] = {}
    for path in paths:
        if not path.name.lower().endswith(".xml"):
            if path.is_file():
                result[path] = None
            continue
        root = path.parent.parent
        result[root] = None
        result.update(dict.fromkeys(_xml_files(root)))
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            modules = _xml_files(folder)
            if modules:
                result[folder] = None
                result.update(dict.fromkeys(modules))
    return list(result)


def input_bytes(path: Path) -> bytes:
    """A file's bytes; for a folder, what the FOM set sees of it: its XML files, and its
    sub-folders that hold XML files (other files, such as a build's output, do not count)."""
    if not path.is_dir():
        return path.read_bytes()
    seen = [p.name for p in _xml_files(path)]
    seen += [f"{p.name}/" for p in sorted(path.iterdir()) if p.is_dir() and _xml_files(p)]
    return "\n".join(seen).encode()
