"""FOM object classes (fom.md §7): hierarchy, class paths, attributes as properties, and the
classes themselves with what the mapping files add (§9)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sengen.stl import model as m
from sengen.stl.fom.context import Context, Decl
from sengen.stl.fom.datatypes import DataTypes
from sengen.stl.fom.interactions import class_tree, is_defined, transport_of
from sengen.stl.fom.modules import Module
from sengen.stl.fom.names import description, property_name, type_name
from sengen.stl.fom.report import Spot, value_spot
from sengen.stl.fom.xmltree import Element

_STATIC = {
    "PublishSubscribe": m.PropertyCategory.STATIC_RW,
    "Publish": m.PropertyCategory.STATIC_RW,
    "Subscribe": m.PropertyCategory.STATIC_RO,
    "Neither": m.PropertyCategory.STATIC_RO,
}
ROOT = "hla.ObjectRoot"  # the parent of a class directly below HLAobjectRoot
_TRANSPORT = {"HLAbestEffort": m.TransportMode.MULTICAST, "HLAreliable": m.TransportMode.CONFIRMED}


@dataclass
class ClassMapping:
    """What the mapping files do to one class (§9.4 to §9.6)."""

    writable: set[str] = field(default_factory=set)
    checked: dict[str, bool] = field(default_factory=dict)
    events: list[tuple[m.Event, Spot]] = field(default_factory=list)
    methods: list[tuple[m.Method, Spot]] = field(default_factory=list)


class Classes:
    def __init__(self, ctx: Context, types: DataTypes, modules: list[Module]) -> None:
        self.ctx = ctx
        self.types = types
        self.parents: dict[Decl, Decl | None] = {}  # None: hla.ObjectRoot
        self.valid: set[Decl] = set()
        self.paths: dict[str, list[Decl]] = {}
        self.class_paths: dict[Decl, str] = {}
        self.targets: dict[Decl, Decl | str | None] = {}
        self.linked: set[Decl] = set()
        self.order: list[Decl] = []  # the valid classes, parents first
        self.mappings: dict[Decl, ClassMapping] = {}
        self.built: dict[Decl, m.ClassType | None] = {}
        self.root: m.ClassType | None = None
        for module in modules:
            state = ctx.states[module]
            for element in class_tree(ctx, module, "objectClass"):
                if is_defined(element):
                    decl = Decl(module, "objectClass", element, element.value("name"))
                    state.classes.append(decl)
                    state.decls.setdefault(decl.hla, decl)

    def link(self, modules: list[Module]) -> None:
        """§7.2: each class's parent, then its class path (§9.3); modules dependencies first,
        and within a module parents first, followed with an explicit stack."""
        for module in modules:
            for decl in self.ctx.states[module].classes:
                self._link(decl)

    def _link(self, start: Decl) -> None:
        if start in self.linked:
            return
        path = [start]
        while path:
            decl = path[-1]
            target = self._parent(decl)
            if isinstance(target, Decl) and target not in self.linked:
                if target not in path:
                    path.append(target)
                    continue
                names = " -> ".join(d.hla for d in (*path[path.index(target) :], target))
                self.ctx.reporter.error(
                    self._enclosing_spot(decl), f"cyclic class hierarchy: {names}"
                )
                target = None
            path.pop()
            self.linked.add(decl)
            if target is None or (isinstance(target, Decl) and target not in self.valid):
                continue  # reported, here or at the parent
            name = type_name(decl.hla)
            if isinstance(target, Decl):
                self.parents[decl] = target
                name = f"{self.class_paths[target]}.{name}"
            else:
                self.parents[decl] = None
            self.valid.add(decl)
            self.order.append(decl)
            self.paths.setdefault(name, []).append(decl)
            self.class_paths[decl] = name

    def _enclosing_spot(self, decl: Decl) -> Spot:
        enclosing = decl.element.parent
        assert enclosing is not None
        return value_spot(decl.module.source, enclosing, "name")

    def _parent(self, decl: Decl) -> Decl | str | None:
        """The parent's declaration, ``ROOT`` for hla.ObjectRoot, None when it is invalid
        (reported once: the result is kept)."""
        if decl in self.targets:
            return self.targets[decl]
        enclosing = decl.element.parent
        assert enclosing is not None
        result: Decl | str | None = ROOT
        if enclosing.parent is not None and enclosing.parent.tag == "objectClass":
            text = enclosing.value("name")
            spot = self._enclosing_spot(decl)
            target = self.types.resolve(decl.module, text)
            if target is None:
                notes = self.ctx.elsewhere_note(decl.module, text)
                self.ctx.reporter.error(spot, f"could not find type '{text}'", notes)
                result = None
            elif not isinstance(target, Decl) or target.kind != "objectClass":
                name = (
                    target.name
                    if isinstance(target, m.NativeType)
                    else f"{target.module.package}.{type_name(target.hla)}"
                )
                self.ctx.reporter.error(spot, f"{name} is not a class type")
                result = None
            else:
                result = target
        self.targets[decl] = result
        return result

    def own_properties(self, decl: Decl) -> set[str]:
        return {property_name(a.value("name")) for a in decl.element.all("attribute")}

    def build(self, module: Module) -> None:
        """The module's classes, parents first (the order :meth:`link` found)."""
        for decl in self.order:
            if decl.module is module:
                self.built[decl] = self._build(decl)

    def _build(self, decl: Decl) -> m.ClassType | None:
        module = decl.module
        spot = decl.name_spot()
        name = type_name(decl.hla)
        qualified = f"{module.package}.{name}"
        ok = self.ctx.type_name_ok(name, spot)
        parent_decl = self.parents[decl]
        parent = self.root if parent_decl is None else self.built.get(parent_decl)
        if parent is None:
            return None
        spec = f"Type '{qualified}': error in class '{name}' spec: "
        mapping = self.mappings.get(decl, ClassMapping())
        properties: list[m.Property] = []
        seen: set[str] = set()
        for item in decl.element.all("attribute"):
            prop_spot = value_spot(module.source, item, "name")
            label = property_name(item.value("name"))
            if not self.ctx.member_ok(label, prop_spot):
                ok = False
                continue
            if not self._unique(label, seen, "property", parent, spec, prop_spot):
                ok = False
                continue
            prop = self._property(decl, item, label, prop_spot, mapping, qualified)
            if prop is None:
                ok = False
                continue
            properties.append(prop)
        callables: dict[str, set[str]] = {"method": set(), "event": set()}
        for method, where in mapping.methods:
            ok = (
                self._unique(method.name, callables["method"], "method", parent, spec, where) and ok
            )
        for event, where in mapping.events:
            ok = self._unique(event.name, callables["event"], "event", parent, spec, where) and ok
        if not ok:
            return None
        location = self.ctx.location(module, spot)
        built = m.ClassType(
            name,
            module.package,
            description(decl.element.value("semantics")),
            location,
            False,
            parent,
            tuple(properties),
            tuple(method for method, _ in mapping.methods),
            tuple(event for event, _ in mapping.events),
            _constructor(name, parent, properties, location),
        )
        return built if self.ctx.register(module, built, spot) else None

    def _unique(
        self,
        label: str,
        seen: set[str],
        kind: str,
        parent: m.ClassType,
        spec: str,
        spot: Spot,
    ) -> bool:
        """§7.4: unique within the class and against every ancestor (stl.md §8.3 texts)."""
        repeated = {
            "property": "duplicated property name '{}'",
            "method": "method with repeated name '{}'",
            "event": "event with repeated name '{}'",
        }
        if label in seen:
            self.ctx.reporter.error(spot, spec + repeated[kind].format(label))
            return False
        seen.add(label)
        article = {"property": "a property", "method": "a method", "event": "an event"}[kind]
        for ancestor in (parent, *parent.ancestors()):
            members = {
                "property": [p.name for p in ancestor.properties],
                "method": [f.name for f in ancestor.methods],
                "event": [e.name for e in ancestor.events],
            }[kind]
            if label in members:
                self.ctx.reporter.error(
                    spot,
                    f"{spec}parent class {ancestor.qualified_name} already has {article} "
                    f"named {label}",
                )
                return False
        return True

    def _property(
        self,
        decl: Decl,
        item: Element,
        label: str,
        spot: Spot,
        mapping: ClassMapping,
        qualified: str,
    ) -> m.Property | None:
        module = decl.module
        found = self.types.member_type(module, item)
        update, sharing = item.value("updateType"), item.value("sharing")
        ok = found is not None
        if update == "Static":
            category = _STATIC.get(sharing)
            if category is None:
                self.ctx.reporter.error(
                    value_spot(module.source, item, "sharing"), f"unknown sharing mode '{sharing}'"
                )
                ok = False
        elif sharing == "Writeable":
            category = m.PropertyCategory.DYNAMIC_RW
        else:
            category = m.PropertyCategory.DYNAMIC_RO
        transport = transport_of(self.ctx, module, item)
        if not ok or transport is None or category is None or found is None:
            return None
        if label in mapping.writable:
            category = m.PropertyCategory.DYNAMIC_RW
        checked = mapping.checked.get(label, self.ctx.settings.is_checked(qualified, label))
        return m.Property(
            label,
            found,
            category,
            _TRANSPORT[transport],
            (),
            checked,
            description(item.value("semantics")),
            self.ctx.location(module, spot),
        )


def _constructor(
    name: str, parent: m.ClassType, properties: list[m.Property], location: m.Location
) -> m.Method:
    """stl.md §8.3: the staticRW properties of the ancestors, root first, then the class's."""
    lineage = [*reversed([parent, *parent.ancestors()]), None]
    statics = [
        p
        for props in [*(c.properties for c in lineage if c is not None), tuple(properties)]
        for p in props
        if p.category is m.PropertyCategory.STATIC_RW
    ]
    arguments = tuple(m.Argument(p.name, p.type, p.description, p.location) for p in statics)
    return m.Method(
        f"constructor{name}", arguments, None, False, False, False,
        m.TransportMode.CONFIRMED, "constructor", location,
    )  # fmt: skip
