"""FOM data types (fom.md §6): representations, references, and every data-type construct.

Types are converted on first use and once. References are followed with an explicit stack, so
that neither a long chain of types nor a recursive one can exhaust Python's call stack (§6.3).
"""

from __future__ import annotations

import re

from sengen.stl import model as m
from sengen.stl.fom.context import Context, Decl
from sengen.stl.fom.hla import optional_name
from sengen.stl.fom.modules import Module
from sengen.stl.fom.names import description, enumerator_names, member_name, type_name
from sengen.stl.fom.report import Spot, value_spot
from sengen.stl.fom.xmltree import Element
from sengen.stl.units import find_unit

N = m.NATIVES
# §6.1: the built-in representations, and basicData encodings by their beginning.
REPRESENTATIONS: dict[str, m.NativeType] = {
    **{f"HLAinteger{b}{e}": N[f"i{b}"] for b in (16, 32, 64) for e in ("BE", "LE")},
    **{f"HLAfloat{b}{e}": N[f"f{b}"] for b in (32, 64) for e in ("BE", "LE")},
    "HLAoctet": N["u8"],
    "HLAoctetPairBE": N["u16"],
    "HLAoctetPairLE": N["u16"],
}
ENCODINGS = (
    *((f"{b}-bit unsigned integer", N[f"u{b}"]) for b in (8, 16, 32, 64)),
    *((f"{b}-bit signed integer", N[f"i{b}"]) for b in (16, 32, 64)),
)
# §6.2: the predefined HLA data types.
PREDEFINED: dict[str, m.NativeType] = {
    "HLAASCIIchar": N["u8"],
    "HLAbyte": N["u8"],
    "HLAunicodeChar": N["u16"],
    **{name: N["i32"] for name in ("HLAcount", "HLAseconds", "HLAmsec", "HLAindex")},
    "HLAinteger64Time": N["i64"],
    "HLAfloat64Time": N["f64"],
    "HLAboolean": N["bool"],
    "HLAASCIIstring": N["string"],
    "HLAunicodeString": N["string"],
}
# §6.4: the units that make a quantity.
UNITS = {
    "meter per second squared (m/(s^2))": "m_per_s_sq",
    "degree (deg)": "deg",
    "radian (rad)": "rad",
    "radian per second (rad/s)": "rad_per_s",
    "meter (m)": "m",
    "hertz (Hz)": "hz",
    "interrogations/second": "hz",
    "kilogram (kg)": "kg",
    "revolutions per minute (RPM)": "rpm",
    "RPM": "rpm",
    "degree Celsius (C)": "degC",
    "microsecond": "us",
    "millisecond (ms)": "ms",
    "second (s)": "s",
    "meter per second (m/s)": "m_per_s",
    "micron": "um",
    "decimeter per second (dm/s)": "dm_per_s",
}
_RANGE = re.compile(r"\[(0|[1-9][0-9]*)\.+(0|[1-9][0-9]*)\]")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")
_OPTIONAL_PREFIXES = ("Optional.", "Optional (", "Optional:", "Optional,")
_UNBOUNDED_FROM = 1048576
Target = m.NativeType | Decl | None


class DataTypes:
    """Resolves ``dataType`` references and converts the data types of a set."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.built: dict[Decl, m.Type | None] = {}
        self.optionals: dict[m.Type, m.OptionalType] = {}
        self.hla_optionals: dict[str, m.OptionalType] = {}

    # --- lookup ----------------------------------------------------------------------------

    def resolve(self, module: Module, text: str) -> Target:
        """§6.3, first hit wins: predefined, RPRboolean, the module, its dependencies."""
        native = PREDEFINED.get(text)
        if native is not None:
            return native
        for place in (module, *module.closure()):
            decl = self.ctx.states[place].decls.get(text)
            if decl is not None:
                return decl.native or decl
        return None

    def representation(self, module: Module, name: str) -> m.NativeType | None:
        """§6.1: built in, or declared by the module or a dependency (first found wins)."""
        native = REPRESENTATIONS.get(name)
        if native is not None:
            return native
        for place in (module, *module.closure()):
            native = place.representations.get(name)
            if native is not None:
                return native
        return None

    def value(self, module: Module, container: Element, tag: str = "dataType") -> m.Type | None:
        """A reference in a value position; None when invalid (reported unless inherited)."""
        spot = value_spot(module.source, container, tag)
        return self.value_text(module, container.value(tag), spot)

    def value_text(self, module: Module, text: str, spot: Spot) -> m.Type | None:
        target = self.resolve(module, text)
        if target is None:
            notes = self.ctx.elsewhere_note(module, text)
            self.ctx.reporter.error(spot, f"could not find type '{text}'", notes)
            return None
        if isinstance(target, m.NativeType):
            return target
        if target.kind == "objectClass":
            name = f"{target.module.package}.{type_name(target.hla)}"
            self.ctx.reporter.error(spot, f"{name} is not a value type")
            return None
        return self.type_of(target)

    def member_type(self, module: Module, element: Element) -> m.Type | None:
        """An attribute's or parameter's type: §6.3, or an optional for "Optional" semantics."""
        found = self.value(module, element)
        if found is None or not element.value("semantics").startswith(_OPTIONAL_PREFIXES):
            return found
        return self.optional(found)

    def optional(self, target: m.Type) -> m.Type | None:
        """§6.9: one optional per target type in the set, declared where the target is."""
        native = target
        if isinstance(native, m.AliasType) and isinstance(native.target, m.NativeType):
            native = native.target
        if isinstance(native, m.NativeType):
            return self.hla_optionals[optional_name(native)]
        existing = self.optionals.get(target)
        if existing is not None:
            return existing
        assert isinstance(target, m.UserType)
        home = self.ctx.home[target]
        made = m.OptionalType(f"Maybe{target.name}", target.package, "", target.location, target)
        at = Spot(home.source, target.location.line, target.location.column, len(target.name))
        if not self.ctx.register(home, made, at):
            return None
        self.optionals[target] = made
        return made

    # --- conversion ------------------------------------------------------------------------

    def references(self, decl: Decl) -> list[str]:
        element = decl.element
        if decl.kind == "arrayData":
            return [element.value("dataType")]
        if decl.kind == "fixedRecordData":
            return [f.value("dataType") for f in element.all("field")]
        if decl.kind == "variantRecordData":
            return [a.value("dataType") for a in element.all("alternative")]
        return []

    def type_of(self, decl: Decl) -> m.Type | None:
        """The converted type of a data type declaration, converting what it needs first."""
        if decl in self.built:
            return self.built[decl]
        path: list[Decl] = [decl]
        pending = [iter(self.references(decl))]
        cyclic: set[Decl] = set()
        while path:
            text = next(pending[-1], None)
            if text is None:
                done = path.pop()
                pending.pop()
                self.built[done] = None if done in cyclic else self.construct(done)
                continue
            target = self.resolve(path[-1].module, text)
            if not isinstance(target, Decl) or target.kind == "objectClass":
                continue
            if target in self.built:
                continue
            if target in path:
                members = path[path.index(target) :]
                names = " -> ".join(d.hla for d in (*members, target))
                self.ctx.reporter.error(target.name_spot(), f"recursive data type: {names}")
                cyclic.update(members)
                continue
            path.append(target)
            pending.append(iter(self.references(target)))
        return self.built[decl]

    def construct(self, decl: Decl) -> m.Type | None:
        module = decl.module
        spot = decl.name_spot()
        name = type_name(decl.hla)
        name_ok = self.ctx.type_name_ok(name, spot)
        common = (
            name,
            module.package,
            description(decl.element.value("semantics")),
            self.ctx.location(module, spot),
        )
        builder = getattr(self, f"_{decl.kind}")
        built: m.UserType | None = builder(decl, common)
        if built is None or not name_ok or not self.ctx.register(module, built, spot):
            return None
        return built

    def _representation(self, decl: Decl) -> m.NativeType | None:
        module, element = decl.module, decl.element
        name = element.value("representation")
        native = self.representation(module, name)
        if native is None:
            spot = value_spot(module.source, element, "representation")
            notes = [
                at.note(
                    f"'{name}' is declared in {other.path.name}, which is not a dependency of "
                    f"{module.path.name}"
                )
                for (other, declared), at in self.ctx.representation_spots.items()
                if declared == name
            ][:1]
            self.ctx.reporter.error(
                spot, f"data representation '{name}' is not yet supported", notes
            )
        return native

    def _simpleData(
        self, decl: Decl, common: tuple[str, str, str, m.Location]
    ) -> m.UserType | None:
        native = self._representation(decl)
        if native is None:
            return None
        unit = UNITS.get(decl.element.value("units"))
        if unit is None:
            return m.AliasType(*common, native)
        return m.QuantityType(*common, native, unit, find_unit(unit), None, None)

    def _enumeratedData(
        self, decl: Decl, common: tuple[str, str, str, m.Location]
    ) -> m.UserType | None:
        module, element = decl.module, decl.element
        storage = self._representation(decl)
        if storage is None:
            return None
        qualified = f"{module.package}.{common[0]}"
        if storage.kind is not m.NativeKind.INTEGER:
            spot = value_spot(module.source, element, "representation")
            rep = element.value("representation")
            self.ctx.reporter.error(
                spot, f"storage type '{rep}' for enumeration '{decl.hla}' is not an integral type"
            )
            return None
        items = list(element.all("enumerator"))
        names = enumerator_names([item.value("name") for item in items])
        low, high = storage.value_range
        ok = True
        enumerators: list[m.Enumerator] = []
        by_key: dict[int, str] = {}
        by_name: dict[str, int] = {}
        for item, label in zip(items, names, strict=True):
            name_spot = value_spot(module.source, item, "name")
            ok = self.ctx.member_ok(label, name_spot) and ok
            text = item.value("value")
            value_at = value_spot(module.source, item, "value")
            if not _INTEGER.fullmatch(text):
                self.ctx.reporter.error(value_at, f"invalid enumerator value '{text}'")
                ok = False
                continue
            key = int(text)
            if not low <= key <= high:
                self.ctx.reporter.error(
                    value_at,
                    f"enumerator value {key} of '{label}' cannot be represented using "
                    f"{storage.name}",
                )
                ok = False
                continue
            if key in by_key:
                self.ctx.reporter.error(
                    decl.name_spot(),
                    f"Type '{qualified}': enumerator {by_key[key]} and {label} have the same "
                    f"key {key}",
                )
                ok = False
            elif label in by_name:
                self.ctx.reporter.error(
                    decl.name_spot(),
                    f"Type '{qualified}': enumerators with keys {by_name[label]} and {key} have "
                    f"the same name '{label}'",
                )
                ok = False
            by_key.setdefault(key, label)
            by_name.setdefault(label, key)
            location = self.ctx.location(module, name_spot)
            enumerators.append(m.Enumerator(label, key, "", location))
        if not items:
            self.ctx.reporter.error(decl.name_spot(), f"Type '{qualified}': no enumerators")
            ok = False
        return m.EnumType(*common, storage, tuple(enumerators)) if ok else None

    def _arrayData(self, decl: Decl, common: tuple[str, str, str, m.Location]) -> m.UserType | None:
        module, element = decl.module, decl.element
        item = self.value(module, element)
        cardinality = element.value("cardinality")
        spot = value_spot(module.source, element, "cardinality")
        qualified = f"{module.package}.{common[0]}"
        size: int | None = None
        bounds = _RANGE.fullmatch(cardinality)
        if cardinality.isdecimal() and cardinality.isascii():
            size = int(cardinality)
        elif bounds is not None:
            high = int(bounds.group(2))
            size = high if high < _UNBOUNDED_FROM else None
        elif cardinality != "Dynamic":
            self.ctx.reporter.warning(
                spot, f"cardinality '{cardinality}' is not understood; '{qualified}' is unbounded"
            )
        if size == 0:
            self.ctx.reporter.warning(
                spot, f"sequence or array '{qualified}' of size 0 can hold no elements"
            )
        return None if item is None else m.SequenceType(*common, item, size)

    def _fixedRecordData(
        self, decl: Decl, common: tuple[str, str, str, m.Location]
    ) -> m.UserType | None:
        module = decl.module
        qualified = f"{module.package}.{common[0]}"
        fields: list[m.Field] = []
        ok = True
        seen: set[str] = set()
        for item in decl.element.all("field"):
            spot = value_spot(module.source, item, "name")
            label = member_name(item.value("name"))
            if not self.ctx.member_ok(label, spot):
                ok = False
            elif label in seen:
                self.ctx.reporter.error(
                    spot, f"Type '{qualified}': repeated struct field name '{label}'"
                )
                ok = False
            seen.add(label)
            found = self.value(module, item)
            if found is None:
                ok = False
                continue
            semantics = description(item.value("semantics"))
            fields.append(m.Field(label, found, semantics, self.ctx.location(module, spot)))
        return m.StructType(*common, None, tuple(fields)) if ok else None

    def _variantRecordData(
        self, decl: Decl, common: tuple[str, str, str, m.Location]
    ) -> m.UserType | None:
        module = decl.module
        alternatives: list[m.Alternative] = []
        ok = True
        for key, item in enumerate(decl.element.all("alternative")):
            found = self.value(module, item)
            if found is None:
                ok = False
                continue
            spot = value_spot(module.source, item, "name")
            alternatives.append(
                m.Alternative(
                    key,
                    found,
                    description(item.value("semantics")),
                    self.ctx.location(module, spot),
                    item.value("name"),
                )
            )
        return m.VariantType(*common, tuple(alternatives)) if ok else None


def check_basic_data(ctx: Context, module: Module) -> None:
    """§6.1: every basicData's encoding is checked; built-in names are then ignored."""
    data_types = module.root.first("dataTypes") if module.root is not None else None
    if data_types is None:
        return
    for group in data_types.all("basicDataRepresentations"):
        for item in group.all("basicData"):
            name, encoding = item.value("name"), item.value("encoding")
            native = next((t for start, t in ENCODINGS if encoding.startswith(start)), None)
            if native is None:
                ctx.reporter.error(
                    value_spot(module.source, item, "encoding"),
                    f"unknown encoding '{encoding}' for basic data representation '{name}'",
                )
            elif name not in REPRESENTATIONS and name not in module.representations:
                module.representations[name] = native
                ctx.representation_spots[(module, name)] = value_spot(module.source, item, "name")


def index_module(ctx: Context, module: Module, elements: list[tuple[str, Element]]) -> None:
    """Every data type element of a module, by HLA name; strings and RPRboolean are natives."""
    state = ctx.states[module]
    for kind, element in elements:
        hla = element.value("name")
        decl = Decl(module, kind, element, hla)
        if hla in PREDEFINED:
            spot = value_spot(module.source, element, "name")
            ctx.reporter.warning(
                spot, f"'{hla}' is a predefined HLA data type; this declaration is ignored"
            )
            continue
        if kind == "enumeratedData" and hla == "RPRboolean":
            decl.native = N["bool"]
        elif (
            kind == "arrayData"
            and element.value("dataType") in ("HLAASCIIchar", "HLAunicodeChar")
            and element.value("cardinality") == "Dynamic"
        ):
            decl.native = N["string"]
        else:
            state.data.append(decl)
        state.decls.setdefault(hla, decl)
