"""Reading, ``@env`` substitution, YAML parsing and ``include`` merging with provenance
(runtime.md §1.1 steps 1-4, §1.2, §1.3).

A parsed file becomes a tree of :class:`PMap` and :class:`PList` that remembers, for every key and
item, the file that supplied it, so that errors found after merging name the right file.
"""

from __future__ import annotations

import stat
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import yaml

from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.config.envsubst import EnvError, substitute_env
from sengen.runtime.kernel.config.yamlread import parse_yaml

KeyPath = tuple[str | int, ...]


class PMap(dict[object, object]):
    """A YAML map; ``files[key]`` is the file that supplied the value, ``origin`` the file that
    defined the map itself (used for a key that is missing)."""

    def __init__(self, origin: str) -> None:
        super().__init__()
        self.origin = origin
        self.files: dict[object, str] = {}

    def put(self, key: object, value: object, file: str) -> None:
        self[key] = value
        self.files[key] = file


class PList(list[object]):
    """A YAML sequence; ``files[i]`` is the file that supplied item ``i``."""

    def __init__(self, origin: str) -> None:
        super().__init__()
        self.origin = origin
        self.files: list[str] = []

    def add(self, value: object, file: str) -> None:
        self.append(value)
        self.files.append(file)


@dataclass(frozen=True, slots=True)
class Problem:
    """One configuration problem or warning before rendering: ``<file>: <key path>: <message>``."""

    file: str
    path: KeyPath
    message: str

    def render(self) -> str:
        where = format_path(self.path)
        return f"{self.file}: {where}: {self.message}" if where else f"{self.file}: {self.message}"


def format_path(path: KeyPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def display(path: Path) -> str:
    """Relative to the working directory when the file is under it, else as given."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def annotate(value: object, file: str) -> object:
    """Plain YAML data as a provenance tree, every part supplied by ``file``."""
    if isinstance(value, dict):
        result = PMap(file)
        for key, item in value.items():
            result.put(key, annotate(item, file), file)
        return result
    if isinstance(value, list):
        seq = PList(file)
        for item in value:
            seq.add(annotate(item, file), file)
        return seq
    return value


def plain(value: object) -> object:
    """A provenance tree as plain dicts and lists."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def _child(node: object, part: str | int) -> tuple[str, object] | None:
    if isinstance(node, PMap) and part in node:
        return node.files[part], node[part]
    if isinstance(node, PList) and isinstance(part, int) and 0 <= part < len(node):
        return node.files[part], node[part]
    return None


def provenance(tree: PMap, path: KeyPath) -> str:
    """The file that supplied the value at ``path``; for a missing key, the file that defined the
    enclosing map or sequence."""
    node: object = tree
    file = tree.origin
    for part in path:
        child = _child(node, part)
        if child is None:
            if isinstance(node, PMap | PList):
                file = node.origin
            break
        file, node = child
    return file


# -- merging (runtime.md §1.3) ---------------------------------------------------------------------


def _name_key(item: object) -> Hashable | None:
    if isinstance(item, PMap):
        name = item.get("name")
        if isinstance(name, Hashable):
            return name
    return None


def is_named_sequence(value: object) -> bool:
    """A non-empty sequence whose items are all maps with a ``name`` key."""
    return (
        isinstance(value, PList)
        and len(value) > 0
        and all(isinstance(item, PMap) and "name" in item for item in value)
    )


def merge_maps(base: PMap, over: PMap) -> PMap:
    """``over`` on top of ``base``: later wins, maps and named sequences merge recursively."""
    result = PMap(base.origin)
    for key, value in base.items():
        result.put(key, value, base.files[key])
    for key, value in over.items():
        if key in result:
            merged, file = _merge_value(result[key], result.files[key], value, over.files[key])
            result.put(key, merged, file)
        else:
            result.put(key, value, over.files[key])
    return result


def _merge_value(base: object, base_file: str, over: object, over_file: str) -> tuple[object, str]:
    if isinstance(base, PMap) and isinstance(over, PMap):
        return merge_maps(base, over), base_file
    if is_named_sequence(base) and is_named_sequence(over):
        assert isinstance(base, PList) and isinstance(over, PList)
        return _merge_named(base, over), base_file
    return over, over_file


def _merge_named(base: PList, over: PList) -> PList:
    """Items of ``over`` deep-merge into the first ``base`` item of the same name; new names (and
    a second item of one name within ``over``) are appended, so duplicates stay visible."""
    result = PList(base.origin)
    index: dict[Hashable, int] = {}
    for position, (item, file) in enumerate(zip(base, base.files, strict=True)):
        result.add(item, file)
        key = _name_key(item)
        if key is not None:
            index.setdefault(key, position)
    used: set[Hashable] = set()
    for item, file in zip(over, over.files, strict=True):
        key = _name_key(item)
        if key is not None and key in index and key not in used:
            used.add(key)
            position = index[key]
            target = result[position]
            assert isinstance(target, PMap) and isinstance(item, PMap)
            result[position] = merge_maps(target, item)
        else:
            result.add(item, file)
    return result


# -- reading files ---------------------------------------------------------------------------------

INVALID_INCLUDE = "invalid include (expecting a file name or a list of file names)"
# Far beyond any real layout, far below Python's recursion limit (each level recurses).
MAX_INCLUDE_DEPTH: Final = 50
# A configuration is a few kilobytes; reading a larger file whole would only cost memory.
MAX_FILE_BYTES: Final = 16 * 2**20


class UnreadableFile(SengenError):
    """Why a configuration file cannot be read, in the words of a message."""


class _Missing(UnreadableFile):
    """The file does not exist."""


def read_text(path: Path) -> str:
    """The text of a configuration file. A folder, a device (``/dev/zero``), a FIFO or a huge
    file is refused before it is opened: reading one would fail obscurely, block or never end."""
    try:
        info = path.stat()
    except FileNotFoundError as exc:
        raise _Missing(exc.strerror or "not found") from None
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from None
    if stat.S_ISDIR(info.st_mode):
        raise UnreadableFile("is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile("is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise UnreadableFile(f"is larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UnreadableFile(exc.strerror or str(exc)) from None
    except UnicodeDecodeError as exc:
        raise UnreadableFile(str(exc)) from None


@dataclass
class TreeLoader:
    """Steps 1-4 of runtime.md §1.1 for one top-level file and everything it includes."""

    problems: list[Problem] = field(default_factory=list)

    def load_path(self, path: Path) -> PMap | None:
        name = display(path)
        try:
            text = read_text(path)
        except UnreadableFile as exc:
            self._error(name, (), f"cannot read configuration file '{name}': {exc}")
            return None
        return self.load_text(text, name, path.parent, (path.resolve(),))

    def load_text(
        self, text: str, name: str, folder: Path, chain: tuple[Path, ...] = ()
    ) -> PMap | None:
        try:
            text, missing = substitute_env(text)
        except EnvError as exc:
            self._error(name, (), str(exc))
            return None
        for variable in missing:
            self._error(
                name,
                (),
                f"environment variable {variable} not found and no default value provided",
            )
        if missing:
            return None
        try:
            data = parse_yaml(text)
        except yaml.MarkedYAMLError as exc:
            problem = exc.problem or exc.context or "syntax error"
            mark = exc.problem_mark or exc.context_mark
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            self._error(name, (), f"invalid YAML: {problem}{where}")
            return None
        except yaml.YAMLError as exc:
            self._error(name, (), f"invalid YAML: {str(exc).splitlines()[0]}")
            return None
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self._error(name, (), "the configuration must be a map")
            return None
        own = annotate(data, name)
        assert isinstance(own, PMap)
        if "include" not in own:
            return own
        include = own.pop("include")
        del own.files["include"]
        merged: PMap | None = None
        for key, target in self._includes(include, name):
            sub = self._include(key, target, name, folder, chain)
            if sub is not None:
                merged = sub if merged is None else merge_maps(merged, sub)
        if merged is None:
            return own
        result = merge_maps(merged, own)
        result.origin = name
        return result

    def _includes(self, include: object, name: str) -> list[tuple[KeyPath, str]]:
        if include is None:
            return []
        if isinstance(include, str):
            return [(("include",), include)]
        if isinstance(include, list) and all(isinstance(item, str) for item in include):
            return [(("include", i), str(item)) for i, item in enumerate(include)]
        self._error(name, ("include",), INVALID_INCLUDE)
        return []

    def _include(
        self, key: KeyPath, target: str, name: str, folder: Path, chain: tuple[Path, ...]
    ) -> PMap | None:
        path = Path(target)
        if not path.is_absolute():
            path = folder / path
        resolved = path.resolve()
        if resolved in chain:
            start = chain.index(resolved)
            names = [display(p) for p in chain[start:]] + [display(resolved)]
            if start == 0 and chain and not chain[0].exists():
                names[0] = name
            self._error(name, key, "include cycle: " + " -> ".join(names))
            return None
        if len(chain) >= MAX_INCLUDE_DEPTH:
            first = display(chain[0]) if chain else name
            self._error(
                name,
                key,
                f"includes nested more than {MAX_INCLUDE_DEPTH} files deep"
                f" ({first} -> ... -> {name} -> {target})",
            )
            return None
        try:
            text = read_text(path)
        except _Missing:
            self._error(name, key, f"included file '{target}' not found")
            return None
        except UnreadableFile as exc:
            self._error(name, key, f"included file '{target}' {exc}")
            return None
        sub_name = display(path)
        return self.load_text(text, sub_name, path.parent, (*chain, resolved))

    def _error(self, file: str, path: KeyPath, message: str) -> None:
        self.problems.append(Problem(file, path, message))
