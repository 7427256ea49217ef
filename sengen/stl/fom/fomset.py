"""Loading one FOM set (fom.md §2.5, §10.8): discover, index, link, convert, map, scope."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path

from lark import Token

from sengen.diagnostics import Note
from sengen.stl import model as m
from sengen.stl.fom.context import Context, ModuleState, data_elements
from sengen.stl.fom.datatypes import DataTypes, check_basic_data, index_module
from sengen.stl.fom.hla import HLA_DISPLAY, HLA_PATH, hla_types
from sengen.stl.fom.interactions import Interactions, taken_names
from sengen.stl.fom.mapping import Mappings
from sengen.stl.fom.modules import MappingFile, Module, discover, link_dependencies
from sengen.stl.fom.objects import Classes
from sengen.stl.fom.report import Reporter
from sengen.stl.resolver import FileScope, Universe
from sengen.stl.source import SourceFile


@dataclass(eq=False)
class FomSet:
    """The outcome of loading one set: its modules' scopes, in program order."""

    problem: str | None = None  # reported at the import's string token (E3, E4)
    failed: bool = False
    order: list[Module] = field(default_factory=list)  # declared dependencies first
    scopes: dict[Path, FileScope] = field(default_factory=dict)
    non_modules: dict[Path, str] = field(default_factory=dict)  # path -> root element
    mapping_scopes: list[FileScope] = field(default_factory=list)
    modules: dict[Path, Module] = field(default_factory=dict)

    def program_closure(self, module: Module) -> list[Module]:
        """§2.6: the module, its dependencies and mapping dependencies, transitively."""
        stack = [module]
        seen = {module}
        while stack:
            current = stack.pop()
            for other in (*current.deps, *current.mapping_deps):
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        return [m for m in self.order if m in seen]


def hla_scope(universe: Universe) -> FileScope:
    """The synthetic hla file (§7.1), its declarations registered in the run."""
    scope = FileScope(HLA_PATH, SourceFile(HLA_PATH, "", HLA_DISPLAY), HLA_PATH.parent, ())
    scope.package = "hla"
    for built in hla_types():
        scope.types.append(built)
        scope.simple[built.name] = built
        scope.qualified[built.qualified_name] = built
        universe.declared[built.qualified_name] = (
            scope,
            Token("NAME", built.name, line=0, column=0),
        )
        universe.by_simple.setdefault(built.name, []).append(built)
    return scope


def _program_order(modules: list[Module]) -> list[Module]:
    """Declared dependencies first; ties in set order (§10.1)."""
    rank = {module: i for i, module in enumerate(modules)}
    waiting = {module: len(module.deps) for module in modules}
    users: dict[Module, list[Module]] = {module: [] for module in modules}
    for module in modules:
        for dep in module.deps:
            users[dep].append(module)
    ready = [rank[module] for module in modules if waiting[module] == 0]
    heapq.heapify(ready)
    order: list[Module] = []
    while ready:
        module = modules[heapq.heappop(ready)]
        order.append(module)
        for user in users[module]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, rank[user])
    return order


def load_set(
    imported: Path,
    root: Path,
    universe: Universe,
    hla: FileScope,
    chain: tuple[Note, ...],
) -> FomSet:
    reporter = Reporter(universe.diagnostics, chain)
    modules, mappings, problem, non_modules = discover(imported, reporter)
    result = FomSet(problem=problem.message if problem is not None else None)
    result.non_modules = non_modules
    if problem is not None:
        result.failed = True
        return result
    link_dependencies(modules, reporter)
    states = {module: ModuleState(module, _module_scope(module, root, chain)) for module in modules}
    ctx = Context(reporter, universe, states)
    types = DataTypes(ctx)
    types.hla_optionals = {t.name: t for t in hla.types if isinstance(t, m.OptionalType)}
    for module in modules:
        check_basic_data(ctx, module)
        index_module(ctx, module, data_elements(module))
    classes = Classes(ctx, types, modules)
    interactions = Interactions(ctx, types, modules)
    order = _program_order(modules)
    for module in order:
        for decl in states[module].data:
            types.type_of(decl)
    classes.link(order)
    structs: dict[Module, set[str]] = {}
    for module in order:
        taken = taken_names(ctx, module)
        for dep in module.closure():
            taken |= structs.get(dep, set())
        interactions.build_structs(module, taken)
        structs[module] = {i.struct_name for i in interactions.by_module[module] if i.struct}
    mapper = Mappings(ctx, types, interactions, classes)
    for mapping in mappings:
        mapper.apply(mapping)
    classes.root = next(t for t in hla.types if isinstance(t, m.ClassType))
    for module in order:
        classes.build(module)
    _link_scopes(states, hla)
    result.failed = reporter.errors > 0
    result.order = order
    result.modules = {module.path: module for module in modules}
    result.scopes = {module.path: states[module].scope for module in modules}
    result.mapping_scopes = [_mapping_scope(mapping, root, chain) for mapping in mappings]
    return result


def _module_scope(module: Module, root: Path, chain: tuple[Note, ...]) -> FileScope:
    scope = FileScope(module.path, module.source, root, chain)
    scope.package = module.package
    return scope


def _mapping_scope(mapping: MappingFile, root: Path, chain: tuple[Note, ...]) -> FileScope:
    return FileScope(mapping.path, mapping.source, root, chain)


def _link_scopes(states: dict[Module, ModuleState], hla: FileScope) -> None:
    """§10.1: imports are the declared, then the mapping dependencies, then the hla file."""
    for module, state in states.items():
        direct = [states[d].scope for d in dict.fromkeys([*module.deps, *module.mapping_deps])]
        direct = [s for s in direct if s is not state.scope]
        state.scope.direct = [*direct, hla]
        state.scope.imports = [s.path for s in state.scope.direct]
    for state in states.values():
        closure: list[FileScope] = []
        stack = list(reversed(state.scope.direct))
        while stack:
            scope = stack.pop()
            if scope is state.scope or scope in closure:
                continue
            closure.append(scope)
            stack.extend(reversed(scope.direct))
        state.scope.closure = closure
