"""What the conversion of one FOM set shares: declarations, the model's scopes, registration."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lark import Token

from sengen.diagnostics import Note
from sengen.stl import model as m
from sengen.stl.fom.modules import Module
from sengen.stl.fom.report import Reporter, Spot, text_spot, value_spot
from sengen.stl.fom.xmltree import Element
from sengen.stl.resolver import FileScope, Universe
from sengen.stl.settings import Settings

DATA_KINDS = ("simpleData", "arrayData", "fixedRecordData", "variantRecordData", "enumeratedData")
_GROUPS = {
    "simpleData": "simpleDataTypes",
    "enumeratedData": "enumeratedDataTypes",
    "arrayData": "arrayDataTypes",
    "fixedRecordData": "fixedRecordDataTypes",
    "variantRecordData": "variantRecordDataTypes",
}
_TYPE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_MEMBER_NAME = re.compile(r"[a-z][A-Za-z0-9]*")


@dataclass(eq=False)
class Decl:
    """A data type element or a defined object class, by its HLA name in its module."""

    module: Module
    kind: str
    element: Element
    hla: str
    # Not a declared type, but a native: a Dynamic character array (string), RPRboolean (bool).
    native: m.NativeType | None = None

    def name_spot(self) -> Spot:
        return value_spot(self.module.source, self.element, "name")


@dataclass(eq=False)
class ModuleState:
    """Per module: its declarations by HLA name and the scope the STL side sees."""

    module: Module
    scope: FileScope
    decls: dict[str, Decl] = field(default_factory=dict)
    data: list[Decl] = field(default_factory=list)
    classes: list[Decl] = field(default_factory=list)


def data_elements(module: Module) -> list[tuple[str, Element]]:
    """§10.3: simple, array, record, variant, enumerated data elements, each in document order."""
    result: list[tuple[str, Element]] = []
    data_types = module.root.first("dataTypes") if module.root is not None else None
    if data_types is None:
        return result
    for kind in DATA_KINDS:
        for group in data_types.all(_GROUPS[kind]):
            result += [(kind, element) for element in group.all(kind)]
    return result


def name_problem(name: str, *, member: bool) -> str | None:
    """§5.5: the stl.md §7 texts for a converted name that breaks the naming rules."""
    word = "name" if member else "type name"
    if not name:
        return f"invalid {word} '': name is empty"
    if (_MEMBER_NAME if member else _TYPE_NAME).fullmatch(name):
        return None
    first = name[0]
    if first.isdigit():
        reason = "not allowed to start with digits"
    elif first == "_":
        reason = "not allowed to start with _"
    elif not member and first.islower():
        reason = "not allowed to start with lowercase letter"
    elif member and first.isupper():
        reason = "not allowed to start with uppercase letter"
    else:
        bad = next((c for c in name if not (c.isascii() and c.isalnum())), first)
        reason = (
            f"name must only contain alpha-numeric characters but '{bad}' was found in '{name}'"
        )
    return f"invalid {word} '{name}': {reason}"


class Context:
    def __init__(
        self,
        reporter: Reporter,
        universe: Universe,
        states: dict[Module, ModuleState],
    ) -> None:
        self.reporter = reporter
        self.universe = universe
        self.states = states
        self.home: dict[m.UserType, Module] = {}
        # Where each module's basicData are declared, for the note of §6.1.
        self.representation_spots: dict[tuple[Module, str], Spot] = {}

    @property
    def settings(self) -> Settings:
        return self.universe.settings

    def location(self, module: Module, spot: Spot) -> m.Location:
        return m.Location(module.path.as_posix(), module.display, spot.line, spot.column)

    def member_ok(self, name: str, spot: Spot) -> bool:
        problem = name_problem(name, member=True)
        if problem is not None:
            self.reporter.error(spot, problem)
        return problem is None

    def type_name_ok(self, name: str, spot: Spot) -> bool:
        problem = name_problem(name, member=False)
        if problem is not None:
            self.reporter.error(spot, problem)
        return problem is None

    def register(self, module: Module, built: m.UserType, spot: Spot) -> bool:
        """§5.6, §10.2: one qualified name per run; the type joins its module's scope."""
        state = self.states[module]
        qualified = built.qualified_name
        first = self.universe.declared.get(qualified)
        if first is not None:
            scope, token = first
            note = scope.source.note(
                token.line or 1, token.column or 1, "first declared here", len(str(token))
            )
            self.reporter.error(spot, f"There is already a type named '{qualified}'", [note])
            return False
        token = Token("NAME", built.name, line=spot.line, column=spot.column)
        self.universe.declared[qualified] = (state.scope, token)
        self.universe.by_simple.setdefault(built.name, []).append(built)
        state.scope.types.append(built)
        state.scope.simple.setdefault(built.name, built)
        state.scope.qualified.setdefault(qualified, built)
        self.home[built] = module
        return True

    def elsewhere_note(self, module: Module, hla: str) -> list[Note]:
        """§6.3: where another module outside the dependencies declares ``hla``."""
        visible = {module, *module.closure()}
        for state in self.states.values():
            decl = state.decls.get(hla)
            if decl is not None and state.module not in visible:
                return [
                    text_spot(state.module.source, decl.element.first("name") or decl.element).note(
                        f"'{hla}' is declared in {state.module.path.name}, which is not a "
                        f"dependency of {module.path.name}"
                    )
                ]
        return []
