"""The FOM set around an imported module (fom.md §2.3, §2.4) and its modules' dependencies
(§4): discovery in one deterministic set order, parsing, package names, matching, cycles."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sengen.diagnostics import Severity
from sengen.stl.fom.report import Reporter, Spot, text_spot, value_spot
from sengen.stl.fom.xmltree import Element, XmlError, parse_xml
from sengen.stl.model import NativeType
from sengen.stl.source import SourceFile, is_regular_file

_PACKAGE = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(eq=False)
class Module:
    """One FOM module file of the set."""

    path: Path
    package: str
    source: SourceFile
    root: Element | None = None  # None: unreadable or not well-formed
    name: str = ""
    deps: list[Module] = field(default_factory=list)
    mapping_deps: list[Module] = field(default_factory=list)
    representations: dict[str, NativeType] = field(default_factory=dict)  # own basicData

    @property
    def stem(self) -> str:
        return self.path.name.rpartition(".")[0]

    @property
    def display(self) -> str:
        return self.source.display

    def closure(self) -> list[Module]:
        """Dependencies, directly or indirectly, depth-first in declaration order (§6.3)."""
        result: list[Module] = []
        stack = list(reversed(self.deps))
        while stack:
            module = stack.pop()
            if module is self or module in result:
                continue
            result.append(module)
            stack.extend(reversed(module.deps))
        return result


@dataclass(eq=False)
class MappingFile:
    path: Path
    source: SourceFile
    root: Element | None = None


@dataclass(frozen=True, slots=True)
class SetProblem:
    """A problem reported at the import's string token (E2, E3, E4)."""

    message: str


def package_name(folder: str) -> str:
    """§2.4: drop a dotted suffix, lower-case ASCII letters."""
    dot = folder.rfind(".")
    if dot > 0:
        folder = folder[:dot]
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in folder)


def _is_xml(path: Path) -> bool:
    return path.name.lower().endswith(".xml") and is_regular_file(path)


def _listing(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return []


def _read(path: Path, reporter: Reporter) -> tuple[SourceFile, Element | None]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        source = SourceFile(path, "")
        reporter.file_problem(source.display, f"cannot read file: {exc.strerror}", Severity.ERROR)
        return source, None
    source = SourceFile(path, data.decode("utf-8", errors="replace").removeprefix("\ufeff"))
    try:
        return source, parse_xml(data)
    except XmlError as exc:
        reporter.error(Spot(source, exc.line, exc.column), f"invalid XML: {exc.message}")
        return source, None


def discover(
    imported: Path, reporter: Reporter
) -> tuple[list[Module], list[MappingFile], SetProblem | None, dict[Path, str]]:
    """Every module and mapping file of the set around ``imported``, in set order, parsed, and
    the XML files of module folders that are not modules, with their root elements."""
    folder = imported.parent
    non_modules: dict[Path, str] = {}
    if folder.parent == folder:
        return [], [], SetProblem("invalid FOM folder layout"), non_modules
    root = folder.parent
    modules: list[Module] = []
    mappings: list[MappingFile] = []
    entries = _listing(root)
    for entry in entries:
        if not entry.is_dir():
            continue
        files = [p for p in _listing(entry) if _is_xml(p)]
        if not files:
            continue
        package = package_name(entry.name)
        if not _PACKAGE.fullmatch(package):
            return (
                [],
                [],
                SetProblem(
                    f"FOM folder '{entry.name}' gives the package name '{package}', "
                    "which is not an identifier"
                ),
                non_modules,
            )
        for path in files:
            source, element = _read(path.resolve(), reporter)
            module = Module(path.resolve(), package, source, element)
            if element is not None and element.tag != "objectModel":
                non_modules[module.path] = element.tag
                if module.path == imported:
                    continue  # E2, at the import that names it
                reporter.file_problem(
                    source.display,
                    f"'{source.display}' is not an HLA FOM module (root element "
                    f"'{element.tag}'); it is ignored",
                    Severity.WARNING,
                )
                continue
            modules.append(module)
    for entry in entries:
        if _is_xml(entry):
            source, element = _read(entry.resolve(), reporter)
            if element is not None and element.tag != "senMapping":
                reporter.file_problem(
                    source.display,
                    f"'{source.display}' is not a mapping file (root element "
                    f"'{element.tag}'); it is ignored",
                    Severity.WARNING,
                )
                continue
            mappings.append(MappingFile(entry.resolve(), source, element))
    for module in modules:
        if module.root is not None:
            identification = module.root.first("modelIdentification")
            module.name = identification.value("name") if identification is not None else ""
    return modules, mappings, None, non_modules


def _rank(identification: str, module: Module) -> int | None:
    """§4.2: 0 exact name, 1 exact stem, 2 name substring, 3 stem substring; None: no match."""
    wanted = identification.lower()
    name, stem = module.name.lower(), module.stem.lower()
    for rank, hit in enumerate((wanted == name, wanted == stem, wanted in name, wanted in stem)):
        if hit:
            return rank
    return None


def link_dependencies(modules: list[Module], reporter: Reporter) -> None:
    """§4.1, §4.2: each module's declared dependencies; then §4.4: cycles are errors."""
    edges: dict[Module, list[tuple[Module, Element]]] = {}
    for module in modules:
        edges[module] = []
        identification = module.root.first("modelIdentification") if module.root else None
        if identification is None:
            continue
        for reference in identification.all("reference"):
            if "Dependency" not in reference.value("type"):
                continue
            wanted = reference.value("identification")
            if wanted == "MIM":
                continue
            spot = value_spot(module.source, reference, "identification")
            ranked = [
                (rank, other)
                for other in modules
                if other is not module and (rank := _rank(wanted, other)) is not None
            ]
            if not ranked:
                reporter.error(
                    spot, f"could not find dependent document '{wanted}' for '{module.display}'"
                )
                continue
            best = min(rank for rank, _ in ranked)
            winners = [other for rank, other in ranked if rank == best]
            if len(winners) > 1:
                names = ", ".join(w.path.name for w in winners)
                reporter.warning(
                    spot,
                    f"dependency '{wanted}' matches several modules: {names}; "
                    f"'{winners[0].path.name}' is used",
                )
            target = winners[0]
            if target not in module.deps:
                module.deps.append(target)
                place = reference.first("identification")
                edges[module].append((target, place if place is not None else reference))
    _reject_cycles(modules, edges, reporter)


def _reject_cycles(
    modules: list[Module],
    edges: dict[Module, list[tuple[Module, Element]]],
    reporter: Reporter,
) -> None:
    """Iterative depth-first search; each back edge closes one cycle, reported there."""
    state: dict[Module, int] = {}  # 1 on the path, 2 done
    for start in modules:
        if start in state:
            continue
        path: list[Module] = [start]
        iterators = [iter(edges[start])]
        state[start] = 1
        while iterators:
            step = next(iterators[-1], None)
            if step is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            target, place = step
            if state.get(target) == 1:
                members = path[path.index(target) :]
                names = [m.path.name for m in (*members, target)]
                notes = [
                    text_spot(a.source, e).note(f"depends on {b.path.name}")
                    for a, b in zip(members, [*members[1:], target], strict=True)
                    for t, e in edges[a]
                    if t is b
                ]
                reporter.error(
                    text_spot(path[-1].source, place),
                    "cyclic FOM module dependency: " + " -> ".join(names),
                    notes,
                )
                path[-1].deps.remove(target)
            elif target not in state:
                state[target] = 1
                path.append(target)
                iterators.append(iter(edges[target]))
