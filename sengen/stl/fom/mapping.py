"""Mapping files (fom.md §9): events, methods and property changes for FOM classes."""

from __future__ import annotations

from sengen.stl import model as m
from sengen.stl.fom.context import Context, Decl
from sengen.stl.fom.datatypes import DataTypes
from sengen.stl.fom.interactions import Interaction, Interactions, transport_of
from sengen.stl.fom.modules import MappingFile, Module
from sengen.stl.fom.names import description, member_name, type_name
from sengen.stl.fom.objects import Classes, ClassMapping
from sengen.stl.fom.report import Spot, element_spot
from sengen.stl.fom.xmltree import Element

# §9.2: the elements and attributes a mapping file may hold, by element.
_ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "senMapping": (set(), {"class"}),
    "class": ({"name"}, {"property", "event", "method"}),
    "property": ({"name", "writable", "checked"}, set()),
    "event": ({"hlaInteraction", "pack"}, {"ignore"}),
    "method": ({"hlaInteraction", "pack", "local"}, {"ignore", "return"}),
    "return": ({"hlaInteraction", "dataType", "deferred"}, {"ignore"}),
    "ignore": ({"parameter"}, set()),
}
_EVENT_TRANSPORT = {
    "HLAbestEffort": m.TransportMode.MULTICAST,
    "HLAreliable": m.TransportMode.CONFIRMED,
}
_METHOD_TRANSPORT = {
    "HLAbestEffort": m.TransportMode.UNICAST,
    "HLAreliable": m.TransportMode.CONFIRMED,
}


class Mappings:
    def __init__(
        self, ctx: Context, types: DataTypes, interactions: Interactions, classes: Classes
    ) -> None:
        self.ctx = ctx
        self.types = types
        self.interactions = interactions
        self.classes = classes

    def apply(self, mapping: MappingFile) -> None:
        self.file = mapping
        root = mapping.root
        if root is None:
            return
        self._check_shape(root)
        for element in root.all("class"):
            path = element.attrs.get("name", "")
            decls = self.classes.paths.get(path, [])
            if not decls:
                self.ctx.reporter.warning(
                    self.spot(element),
                    f"mapping for class '{path}' matches no object class of the FOM set",
                )
            for decl in decls:
                self._class(decl, element)

    def spot(self, element: Element) -> Spot:
        return element_spot(self.file.source, element)

    def _check_shape(self, root: Element) -> None:
        """W7: every element and attribute §9.2 does not name."""
        stack = [root]
        while stack:
            element = stack.pop()
            attributes, children = _ALLOWED[element.tag]
            for name in element.attrs:
                if name not in attributes:
                    self.ctx.reporter.warning(
                        self.spot(element), f"unknown attribute '{name}' on '{element.tag}'"
                    )
            for child in element.children:
                if child.tag in children:
                    stack.append(child)
                else:
                    self.ctx.reporter.warning(
                        self.spot(child), f"unknown element '{child.tag}' in a mapping file"
                    )

    def boolean(self, element: Element, name: str) -> bool | None:
        """§9.2: absent or empty false; true/false in any case; else E17 (None)."""
        text = element.attrs.get(name, "")
        if text.lower() in ("", "false", "true"):
            return text.lower() == "true"
        self.ctx.reporter.error(
            self.spot(element),
            f"invalid value '{text}' for a boolean parameter (expecting 'true' or 'false')",
        )
        return None

    def _class(self, decl: Decl, element: Element) -> None:
        mapping = self.classes.mappings.setdefault(decl, ClassMapping())
        qualified = f"{decl.module.package}.{_stl_name(decl)}"
        own = self.classes.own_properties(decl)
        for child in element.all("property"):
            name = child.attrs.get("name", "")
            writable = self.boolean(child, "writable")
            checked = self.boolean(child, "checked") if "checked" in child.attrs else None
            if "checked" in child.attrs:
                self.ctx.reporter.warning(
                    self.spot(child),
                    f"property {name} is mapped as 'checked'. This is now deprecated. "
                    "Please use code generation settings.",
                )
            if name not in own:
                self.ctx.reporter.warning(
                    self.spot(child),
                    f"class '{qualified}' has no property '{name}'; the mapping is ignored",
                )
                continue
            if writable:
                mapping.writable.add(name)
            if checked is not None:
                mapping.checked[name] = checked
        for child in element.children:
            if child.tag in ("event", "method"):
                self._callable(decl, child, mapping, qualified)

    def _callable(
        self, decl: Decl, element: Element, mapping: ClassMapping, qualified: str
    ) -> None:
        spot = self.spot(element)
        path = element.attrs.get("hlaInteraction", "")
        pack = self.boolean(element, "pack")
        local = self.boolean(element, "local") if element.tag == "method" else False
        interaction = self.interactions.lookup(path, spot)
        if interaction is None or pack is None or local is None:
            return
        if (
            interaction.module is not decl.module
            and interaction.module not in decl.module.mapping_deps
        ):
            decl.module.mapping_deps.append(interaction.module)
        arguments = self._arguments(interaction, element, pack, path)
        transport = transport_of(self.ctx, interaction.module, interaction.element)
        location = m.Location(
            self.file.path.as_posix(), self.file.source.display, spot.line, spot.column
        )
        name = member_name(interaction.hla)
        semantics = description(interaction.element.value("semantics"))
        if arguments is None or transport is None or not self.ctx.member_ok(name, spot):
            return
        if element.tag == "event":
            event = m.Event(name, arguments, _EVENT_TRANSPORT[transport], semantics, location)
            mapping.events.append((event, spot))
            return
        returned = self._return(element, interaction, decl)
        if returned is None:
            return
        result, deferred = returned
        deferred = deferred or self.ctx.settings.is_deferred(qualified, name)
        method = m.Method(
            name, arguments, result, False, bool(local), deferred,
            _METHOD_TRANSPORT[transport], semantics, location,
        )  # fmt: skip
        mapping.methods.append((method, spot))

    def _arguments(
        self, interaction: Interaction, element: Element, pack: bool, path: str
    ) -> tuple[m.Argument, ...] | None:
        params = self.interactions.chain(interaction)
        if params is None:
            return None
        if pack:
            struct = self._struct(interaction, element)
            for ignore in element.all("ignore"):
                self._w3(ignore, struct)
            return None if struct is None else (m.Argument("args", struct, "", struct.location),)
        ignored = {i.attrs.get("parameter", "") for i in element.all("ignore")}
        known = {p.hla for p in params}
        for ignore in element.all("ignore"):
            name = ignore.attrs.get("parameter", "")
            if name not in known:
                self.ctx.reporter.warning(
                    self.spot(ignore), f"interaction '{path}' has no parameter '{name}'"
                )
        arguments: list[m.Argument] = []
        seen: set[str] = set()
        ok = True
        for param in params:
            if param.hla in ignored:
                continue
            if param.type is None:
                ok = False
                continue
            if param.name in seen:
                owner = f"{interaction.module.package}.{interaction.struct_name}"
                self.ctx.reporter.error(
                    self.spot(element), f"Type '{owner}': duplicated argument name '{param.name}'"
                )
                ok = False
            seen.add(param.name)
            arguments.append(m.Argument(param.name, param.type, param.description, param.location))
        return tuple(arguments) if ok else None

    def _w3(self, ignore: Element, struct: m.StructType | None) -> None:
        if struct is not None:
            self.ctx.reporter.warning(
                self.spot(ignore),
                f"'ignore' has no effect here: the interaction's whole struct "
                f"'{struct.qualified_name}' is used",
            )

    def _struct(self, interaction: Interaction, element: Element) -> m.StructType | None:
        """The interaction's own struct; E23 when §8.4 left it without one."""
        if interaction.struct is not None:
            return interaction.struct
        taken = self._taken_by(interaction.module, type_name(interaction.hla))
        if taken is not None:
            self.ctx.reporter.error(
                self.spot(element),
                f"interaction '{interaction.hla}' has no struct of its own: {taken}",
            )
        return None  # otherwise the struct failed, and that was reported

    def _taken_by(self, module: Module, name: str) -> str | None:
        """§8.4: what already has ``name`` in the module or its dependencies, described."""
        for place in (module, *module.closure()):
            state = self.ctx.states[place]
            for decl in (*state.data, *state.classes):
                if type_name(decl.hla) == name:
                    kind = "object class" if decl.kind == "objectClass" else "data type"
                    spot = decl.name_spot()
                    where = f"{place.display}:{spot.line}:{spot.column}"
                    return f"'{place.package}.{name}' is the {kind} declared at {where}"
            for built in state.scope.types:
                if built.name == name:
                    return f"'{built.qualified_name}' is the struct declared at {built.location}"
        return None

    def _return(
        self, element: Element, interaction: Interaction, decl: Decl
    ) -> tuple[m.Type | None, bool] | None:
        """§9.6: the return type (None: void) and the deprecated ``deferred``; None when
        invalid."""
        ret = element.first("return")
        if ret is None:
            return None, False
        spot = self.spot(ret)
        deferred = ret.attrs.get("deferred", "") in ("true", "yes")
        if "deferred" in ret.attrs:
            name = member_name(interaction.hla)
            self.ctx.reporter.warning(
                spot,
                f"method {name} is mapped as 'deferred'. This is now deprecated. "
                "Please use code generation settings.",
            )
        if "hlaInteraction" in ret.attrs:
            target = self.interactions.lookup(ret.attrs["hlaInteraction"], spot)
            if target is None:
                return None
            struct = self._struct(target, ret)
            for ignore in ret.all("ignore"):
                self._w3(ignore, struct)
            if struct is None:
                return None
            if target.module is not decl.module and target.module not in decl.module.mapping_deps:
                decl.module.mapping_deps.append(target.module)
            return struct, deferred
        if "dataType" in ret.attrs:
            found = self.types.value_text(interaction.module, ret.attrs["dataType"], spot)
            return None if found is None else (found, deferred)
        self.ctx.reporter.error(
            spot,
            "could not find type '': <return> needs an 'hlaInteraction' or a 'dataType' attribute",
        )
        return None


def _stl_name(decl: Decl) -> str:
    return type_name(decl.hla)
