"""Loading a resolution universe: input paths, files, imports, cycles, and the final model."""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lark import Token

from sengen.diagnostics import Diagnostic, Note, Severity, has_errors
from sengen.errors import InputError, StlSyntaxError, UsageError
from sengen.stl import model as m
from sengen.stl.comments import attach
from sengen.stl.fom.imports import FomImports
from sengen.stl.parser import parse
from sengen.stl.resolver import FileResolver, FileScope, Universe
from sengen.stl.settings import Settings, load_settings, validate_settings
from sengen.stl.source import SourceFile, display_path, file_diagnostic, is_regular_file

PathLike = str | os.PathLike[str]
# Far beyond any project's chain of imports, within Python's recursion limit (about five frames
# per level).
MAX_IMPORT_DEPTH = 100


@dataclass(frozen=True, slots=True)
class LoadResult:
    """The outcome of loading: the model when there was no error, and every diagnostic."""

    program: m.Program | None
    diagnostics: tuple[Diagnostic, ...]
    file_order: tuple[str, ...] = ()  # display paths in first-load order, for sorting

    @property
    def ok(self) -> bool:
        return self.program is not None

    def unwrap(self) -> m.Program:
        """The model, or InputError carrying the diagnostics when there were errors."""
        if self.program is None:
            raise InputError([d for d in self.diagnostics if d.is_error])
        return self.program


def _kind(path: Path) -> str:
    """'folder', 'file', 'other' (exists, not a regular file) or 'missing'; never raises."""
    try:
        if path.is_dir():
            return "folder"
        if path.is_file():
            return "file"
        return "other" if path.exists() or path.is_symlink() else "missing"
    except (OSError, ValueError):
        return "missing"


def expand_sources(sources: Iterable[PathLike]) -> tuple[list[tuple[Path, Path]], list[Diagnostic]]:
    """Files and folders to (file, root) pairs; a folder stands for its *.stl files, sorted."""
    found: list[tuple[Path, Path]] = []
    problems: list[Diagnostic] = []

    def unreadable(error: OSError) -> None:
        problems.append(file_diagnostic(error.filename, f"cannot read folder: {error.strerror}"))

    for source in sources:
        path = Path(source)
        kind = _kind(path)
        if kind == "folder":
            files: list[Path] = []
            for folder, dirs, names in os.walk(path, onerror=unreadable):
                dirs.sort()
                for name in names:
                    if not name.endswith(".stl"):
                        continue
                    candidate = Path(folder, name)
                    # FIFOs, devices and symlink loops are reported, never opened.
                    if is_regular_file(candidate):
                        files.append(candidate)
                    else:
                        problems.append(file_diagnostic(candidate, "not a regular file"))
            found += [(f, path) for f in sorted(files, key=lambda p: p.as_posix())]
        elif kind == "file":
            found.append((path, Path.cwd()))
        elif kind == "other":
            problems.append(file_diagnostic(path, "not a regular file or folder"))
        else:
            problems.append(file_diagnostic(path, "no such file or directory"))
    return found, problems


def decode(data: bytes) -> tuple[str, tuple[int, int] | None]:
    """UTF-8 text (a leading BOM skipped) and the line/column of the first invalid byte."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8")
        line = prefix.count("\n") + 1
        column = len(prefix) - (prefix.rfind("\n") + 1) + 1
        return data.decode("utf-8", errors="replace"), (line, column)


class Loader:
    def __init__(self, include_paths: Sequence[Path], settings: Settings) -> None:
        self.include_paths = list(include_paths)
        self.universe = Universe(settings)
        self.files: dict[Path, FileScope] = {}
        self.completed: list[FileScope] = []
        self.stack: list[FileScope] = []
        self.pending_import: dict[FileScope, Token] = {}
        self.fom = FomImports()

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.universe.diagnostics

    def load_input(self, path: Path, root: Path) -> None:
        real = path.resolve()
        if real not in self.files:
            self._load(real, root, ())

    def _load(self, real: Path, root: Path, chain: tuple[Note, ...]) -> FileScope:
        try:
            data = real.read_bytes()
        except OSError as exc:
            text, bad = "", None
            error: str | None = f"cannot read file: {exc.strerror}"
        else:
            text, bad = decode(data)
            error = None
        source = SourceFile(real, text)
        scope = FileScope(real, source, root, chain)
        self.files[real] = scope
        self.stack.append(scope)
        try:
            if error is not None:
                self._file_error(scope, error)
            elif bad is not None:
                self._error(scope, bad[0], bad[1], "invalid UTF-8 in source file")
            else:
                self._resolve(scope, text)
        finally:
            self.stack.pop()
        self.completed.append(scope)
        return scope

    def _resolve(self, scope: FileScope, text: str) -> None:
        try:
            syntax, comments = parse(text)
        except StlSyntaxError as exc:
            self._error(scope, exc.line, exc.column, exc.message, exc.length)
            return
        attach(syntax, comments, len(text))
        FileResolver(self.universe, scope, self._import).resolve(syntax.statements)

    def _error(
        self,
        scope: FileScope,
        line: int,
        column: int,
        message: str,
        length: int = 1,
        notes: tuple[Note, ...] = (),
    ) -> None:
        self.diagnostics.append(
            scope.source.diagnostic(
                Severity.ERROR, line, column, message, length, (*notes, *scope.chain)
            )
        )
        scope.failed = True

    def _file_error(self, scope: FileScope, message: str) -> None:
        self.diagnostics.append(
            Diagnostic(Severity.ERROR, scope.source.display, 0, 0, message, scope.chain)
        )
        scope.failed = True

    def _token_error(
        self, scope: FileScope, token: Token, message: str, notes: tuple[Note, ...] = ()
    ) -> None:
        length = (token.end_pos or 0) - (token.start_pos or 0)
        self._error(scope, token.line or 1, token.column or 1, message, length, notes)

    def _import(self, scope: FileScope, token: Token) -> FileScope | None:
        """§4.2: find, load and return the imported file; None when the import failed."""
        spelled = str(token)
        found = self._search(scope, spelled)
        if found is None:
            places = [scope.path.parent, *self.include_paths, Path.cwd()]
            # The message of stl.md §4.2, and what the spelled path is when it exists but is no
            # file (a folder, a device such as /dev/zero): "not found" alone would mislead.
            unfit = self._not_a_file(scope, spelled)
            self._token_error(
                scope,
                token,
                f"could not find file '{spelled}' directly or in any of the include paths: "
                + ", ".join(display_path(p) if p.is_absolute() else p.as_posix() for p in places)
                + (f" ({unfit})" if unfit is not None else ""),
            )
            return None
        real, root = found
        if spelled.lower().endswith(".xml"):
            return self.fom.load(self, scope, token, real, root)  # fom.md §2
        existing = self.files.get(real)
        if existing is not None and existing in self.stack:
            self._cycle(scope, token, existing)
            return None
        if existing is None and len(self.stack) >= MAX_IMPORT_DEPTH:
            # Each level of a chain of imports recurses through the resolver: refused at the
            # deepest place, as Python's stack would be exhausted a few hundred levels on.
            self._token_error(
                scope, token, f"imports nested more than {MAX_IMPORT_DEPTH} files deep"
            )
            return None
        if existing is None:
            self.pending_import[scope] = token
            link = scope.source.note(
                token.line or 1,
                token.column or 1,
                "imported from here",
                (token.end_pos or 0) - (token.start_pos or 0),
            )
            existing = self._load(real, root, (link, *scope.chain))
            del self.pending_import[scope]
        return None if existing.failed else existing

    def _not_a_file(self, scope: FileScope, spelled: str) -> str | None:
        """What the first place ``spelled`` names is, when it exists but is no file (a folder,
        a device such as ``/dev/zero``): "not found" would send its author looking elsewhere."""
        target = Path(spelled)
        places = [target] if target.is_absolute() else [scope.path.parent / target]
        if not target.is_absolute():
            places += [include / target for include in self.include_paths]
            places.append(Path.cwd() / target)
        for place in places:
            try:
                if place.is_dir():
                    return f"'{display_path(place)}' is a folder, not a file"
                if place.exists():
                    return f"'{display_path(place)}' is not a regular file"
            except (OSError, ValueError):
                continue
        return None

    def _search(self, scope: FileScope, spelled: str) -> tuple[Path, Path] | None:
        target = Path(spelled)
        if target.is_absolute():
            return (target.resolve(), target.parent) if is_regular_file(target) else None
        candidates = [(scope.path.parent / target, scope.root)]
        candidates += [(include / target, include) for include in self.include_paths]
        candidates.append((Path.cwd() / target, Path.cwd()))
        for candidate, root in candidates:
            if is_regular_file(candidate):
                return candidate.resolve(), root
        return None

    def _cycle(self, scope: FileScope, token: Token, target: FileScope) -> None:
        members = self.stack[self.stack.index(target) :]
        names = [s.source.display for s in members] + [target.source.display]
        notes: list[Note] = []
        for current, following in zip(members, [*members[1:], target], strict=True):
            edge = self.pending_import.get(current, token if current is scope else None)
            if edge is not None:
                notes.append(
                    current.source.note(
                        edge.line or 1, edge.column or 1, f"imports {following.source.display}"
                    )
                )
        self._token_error(scope, token, "cyclic import: " + " -> ".join(names), tuple(notes))

    def result(self) -> LoadResult:
        program: m.Program | None = None
        diagnostics = self.diagnostics
        if not has_errors(diagnostics):
            program = m.Program(
                tuple(
                    m.StlFile(
                        s.path,
                        s.source.display,
                        s.root,
                        s.package,
                        tuple(s.types),
                        tuple(s.imports),
                    )
                    for s in self.completed
                )
            )
            diagnostics = diagnostics + validate_settings(self.universe.settings, program)
            if has_errors(diagnostics):
                program = None
        order = tuple(scope.source.display for scope in self.files.values())
        return LoadResult(program, tuple(ordered(diagnostics, order)), order)


def ordered(diagnostics: Iterable[Diagnostic], file_order: Sequence[str]) -> list[Diagnostic]:
    """By file in first-load order, then by position (spec §9.1); stable otherwise."""
    rank = {name: i for i, name in enumerate(file_order)}
    return sorted(diagnostics, key=lambda d: (rank.get(d.file, -1), d.line, d.column))


def load(
    sources: Iterable[PathLike],
    *,
    include_paths: Iterable[PathLike] = (),
    settings: PathLike | Settings | None = None,
) -> LoadResult:
    """Parse and resolve ``sources`` (STL files or folders) as one resolution universe.

    Input problems are diagnostics; only invalid arguments raise ``UsageError``.
    """
    for name, value in (("sources", sources), ("include_paths", include_paths)):
        if isinstance(value, str | os.PathLike):
            raise UsageError(f"{name} must be a collection of paths, not one path: {value!r}")
    pre: list[Diagnostic] = []
    if settings is None:
        effective = Settings()
    elif isinstance(settings, Settings):
        effective = settings
    else:
        effective, pre = load_settings(Path(settings))
    files, problems = expand_sources(sources)
    loader = Loader([Path(p) for p in include_paths], effective)
    loader.diagnostics.extend(pre + problems)
    for path, root in files:
        loader.load_input(path, root)
    return loader.result()
