"""FOM interactions (fom.md §8, §9.7): the class trees, interaction paths, parameter chains
and one struct per defined interaction."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sengen.stl import model as m
from sengen.stl.fom.context import Context
from sengen.stl.fom.datatypes import DataTypes
from sengen.stl.fom.modules import Module
from sengen.stl.fom.names import description, member_name, stem_suffix, type_name
from sengen.stl.fom.report import Spot, text_spot, value_spot
from sengen.stl.fom.xmltree import Element

ROOTS = {"objectClass": "HLAobjectRoot", "interactionClass": "HLAinteractionRoot"}
_CONTAINERS = {"objectClass": "objects", "interactionClass": "interactions"}
_WORDS = {"objectClass": "object", "interactionClass": "interaction"}


def is_defined(element: Element) -> bool:
    """§3.3: a class element with a ``semantics`` child; scaffolding otherwise."""
    return element.first("semantics") is not None


def class_tree(ctx: Context, module: Module, tag: str) -> Iterator[Element]:
    """Every class element ``tag`` below its root, in document order; E25 for other tops."""
    container = module.root.first(_CONTAINERS[tag]) if module.root is not None else None
    if container is None:
        return
    for top in container.all(tag):
        if top.value("name") != ROOTS[tag]:
            ctx.reporter.error(
                value_spot(module.source, top, "name"),
                f"top-level {_WORDS[tag]} class must be '{ROOTS[tag]}', found "
                f"'{top.value('name')}'",
            )
            continue
        stack = list(reversed(list(top.all(tag))))
        while stack:
            element = stack.pop()
            yield element
            stack.extend(reversed(list(element.all(tag))))


def path_above(element: Element) -> list[str]:
    """The names of the enclosing class elements below the root, root-most first."""
    names: list[str] = []
    parent = element.parent
    while parent is not None and parent.tag == element.tag and not _is_root(parent):
        names.append(parent.value("name"))
        parent = parent.parent
    return names[::-1]


def _is_root(element: Element) -> bool:
    return element.value("name") == ROOTS.get(element.tag) and (
        element.parent is None or element.parent.tag != element.tag
    )


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of an interaction's chain (§8.1), resolved in its own module."""

    hla: str
    name: str
    type: m.Type | None  # None: invalid, already reported
    description: str
    location: m.Location
    spot: Spot


@dataclass(eq=False)
class Interaction:
    module: Module
    element: Element
    struct_name: str = ""
    struct: m.StructType | None = None
    params: list[Param] | None = None  # None: the chain failed

    @property
    def hla(self) -> str:
        return self.element.value("name")

    def name_spot(self) -> Spot:
        return value_spot(self.module.source, self.element, "name")


class Interactions:
    def __init__(self, ctx: Context, types: DataTypes, modules: list[Module]) -> None:
        self.ctx = ctx
        self.types = types
        self.modules = modules
        self.by_element: dict[Element, Interaction] = {}
        self.by_module: dict[Module, list[Interaction]] = {}
        self.by_name: dict[Module, dict[str, list[Element]]] = {}
        self.chains_done: set[Interaction] = set()
        for module in modules:
            names: dict[str, list[Element]] = {}
            defined: list[Interaction] = []
            for element in class_tree(ctx, module, "interactionClass"):
                names.setdefault(element.value("name"), []).append(element)
                if is_defined(element):
                    interaction = Interaction(module, element)
                    self.by_element[element] = interaction
                    defined.append(interaction)
            self.by_name[module] = names
            self.by_module[module] = defined
        self._name_structs()

    def _name_structs(self) -> None:
        """§8.3: a suffix when another module defines an interaction of the same struct name."""
        owners: dict[tuple[str, str], set[Module]] = {}
        for module, defined in self.by_module.items():
            for interaction in defined:
                key = (module.package, type_name(interaction.hla))
                owners.setdefault(key, set()).add(module)
        for module, defined in self.by_module.items():
            for interaction in defined:
                base = type_name(interaction.hla)
                shared = len(owners[(module.package, base)]) > 1
                interaction.struct_name = base + (stem_suffix(module.stem) if shared else "")

    def find(self, module: Module, path: list[str]) -> Element | None:
        """§9.7: the first element matching ``path`` in the module, if it is defined."""
        for candidate in self.by_name[module].get(path[-1], []):
            if path_above(candidate)[-(len(path) - 1) :] == path[:-1] or len(path) == 1:
                return candidate if is_defined(candidate) else None
        return None

    def chain(self, interaction: Interaction) -> list[Param] | None:
        """§8.1, §8.2: ancestors' parameters first, each level resolved in its own module."""
        if interaction in self.chains_done:
            return interaction.params
        self.chains_done.add(interaction)
        origin = interaction.module
        levels = [interaction]
        current = interaction
        while True:
            above = path_above(current.element)
            if not above:
                break
            found: Interaction | None = None
            for place in (origin, *origin.deps):
                element = self.find(place, above)
                if element is not None:
                    found = self.by_element[element]
                    break
            if found is None:
                self._missing_parent(current, above)
                return None
            if found in levels:  # scaffolding that leads back down: Sen recurses without end
                scaffold = current.element.parent
                assert scaffold is not None
                names = " -> ".join(level.hla for level in (*levels, found))
                self.ctx.reporter.error(
                    value_spot(current.module.source, scaffold, "name"),
                    f"cyclic interaction hierarchy: {names}",
                )
                return None
            levels.append(found)
            current = found
        params: list[Param] = []
        for level in reversed(levels):
            for item in level.element.all("parameter"):
                spot = value_spot(level.module.source, item, "name")
                params.append(
                    Param(
                        item.value("name"),
                        member_name(item.value("name")),
                        self.types.member_type(level.module, item),
                        description(item.value("semantics")),
                        self.ctx.location(level.module, spot),
                        spot,
                    )
                )
        interaction.params = params
        return params

    def _missing_parent(self, child: Interaction, above: list[str]) -> None:
        scaffold = child.element.parent
        assert scaffold is not None
        spot = value_spot(child.module.source, scaffold, "name")
        notes = []
        for module in self.modules:
            element = self.find(module, above)
            if element is not None:
                notes.append(
                    value_spot(module.source, element, "name").note(
                        "the interaction is defined here"
                    )
                )
                break
        self.ctx.reporter.error(spot, f"could not find interaction '{'.'.join(above)}'", notes)

    def lookup(self, path: str, spot: Spot) -> Interaction | None:
        """§9.7 for mapping files: the one module of the set that defines ``path``."""
        pieces = path.split(".")
        hits = [
            self.by_element[element]
            for module in self.modules
            if (element := self.find(module, pieces)) is not None
        ]
        if not hits:
            self.ctx.reporter.error(spot, f"could not find interaction '{path}'")
            return None
        if len(hits) > 1:
            notes = [h.name_spot().note("defined here") for h in hits]
            self.ctx.reporter.error(spot, f"multiple '{path}' interactions found", notes)
            return None
        return hits[0]

    def build_structs(self, module: Module, taken: set[str]) -> None:
        """§8.1, §8.4: the module's structs; ``taken`` holds the type names of the module and
        its dependencies (any package), and grows with each struct made."""
        for interaction in self.by_module[module]:
            params = self.chain(interaction)
            base = type_name(interaction.hla)
            if base in taken:
                continue  # §8.4: silently no struct
            spot = interaction.name_spot()
            qualified = f"{module.package}.{interaction.struct_name}"
            ok = self.ctx.type_name_ok(interaction.struct_name, spot) and params is not None
            fields: list[m.Field] = []
            seen: set[str] = set()
            for param in params or []:
                if not self.ctx.member_ok(param.name, param.spot):
                    ok = False
                elif param.name in seen:
                    self.ctx.reporter.error(
                        param.spot, f"Type '{qualified}': repeated struct field name '{param.name}'"
                    )
                    ok = False
                seen.add(param.name)
                if param.type is None:
                    ok = False
                    continue
                fields.append(m.Field(param.name, param.type, param.description, param.location))
            taken.add(base)
            taken.add(interaction.struct_name)
            if not ok:
                continue
            struct = m.StructType(
                interaction.struct_name,
                module.package,
                description(interaction.element.value("semantics")),
                self.ctx.location(module, spot),
                None,
                tuple(fields),
            )
            if self.ctx.register(module, struct, spot):
                interaction.struct = struct


def taken_names(ctx: Context, module: Module) -> set[str]:
    """§8.4: the STL names of the data types and classes of a module and its dependencies."""
    names: set[str] = set()
    for place in (module, *module.closure()):
        state = ctx.states[place]
        names.update(type_name(d.hla) for d in (*state.data, *state.classes))
    return names


def transport_of(ctx: Context, module: Module, element: Element) -> str | None:
    """The ``transportation`` text when valid; E14 otherwise."""
    text = element.value("transportation")
    if text in ("HLAbestEffort", "HLAreliable"):
        return text
    child = element.first("transportation")
    spot = (
        text_spot(module.source, child)
        if child is not None
        else Spot(module.source, element.line, element.column, len(element.tag) + 1)
    )
    ctx.reporter.error(spot, f"unknown transport mode '{text}'")
    return None
