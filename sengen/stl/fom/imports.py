"""FOM imports in a run (fom.md §2): each set loaded once, what an import sees and what joins
the program. The STL loader hands every ``.xml`` import it has found to :class:`FomImports`."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from lark import Token

from sengen.diagnostics import Severity
from sengen.stl.fom.fomset import FomSet, hla_scope, load_set
from sengen.stl.resolver import FileScope, Universe


class _Loader(Protocol):
    """What a FOM import needs of the STL loader (:class:`sengen.stl.loader.Loader`)."""

    universe: Universe
    files: dict[Path, FileScope]
    completed: list[FileScope]


class FomImports:
    def __init__(self) -> None:
        self.sets: dict[Path, FomSet] = {}  # by the real path of the set root (§2.5)
        self.hla: FileScope | None = None
        self.joined: set[FileScope] = set()

    def load(
        self, loader: _Loader, scope: FileScope, token: Token, real: Path, root: Path
    ) -> FileScope | None:
        """The imported module's scope, its set loaded on first use; None when it failed."""
        length = (token.end_pos or 0) - (token.start_pos or 0)
        link = scope.source.note(token.line or 1, token.column or 1, "imported from here", length)
        if self.hla is None:
            self.hla = hla_scope(loader.universe)
        key = real.parent.parent
        fom = self.sets.get(key)
        if fom is None:
            fom = load_set(real, root, loader.universe, self.hla, (link, *scope.chain))
            self.sets[key] = fom
            for other in [*fom.scopes.values(), *fom.mapping_scopes]:
                loader.files.setdefault(other.path, other)
            if fom.problem is not None:
                _error(loader, scope, token, fom.problem)
        if real in fom.non_modules:
            _error(
                loader,
                scope,
                token,
                f"'{token}' is not an HLA FOM module: its root element is "
                f"'{fom.non_modules[real]}'",
            )
            return None
        if fom.failed or real not in fom.modules:
            return None
        if self.hla not in self.joined:
            self.joined.add(self.hla)
            loader.completed.append(self.hla)
        for module in fom.program_closure(fom.modules[real]):
            joining = fom.scopes[module.path]
            if joining not in self.joined:
                self.joined.add(joining)
                loader.completed.append(joining)
        return fom.scopes[real]


def _error(loader: _Loader, scope: FileScope, token: Token, message: str) -> None:
    """An error at the import's string token (E2, E3, E4); the importing file has failed."""
    length = (token.end_pos or 0) - (token.start_pos or 0)
    loader.universe.diagnostics.append(
        scope.source.diagnostic(
            Severity.ERROR, token.line or 1, token.column or 1, message, length, scope.chain
        )
    )
    scope.failed = True
