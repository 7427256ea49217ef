"""The Markdown reference of a resolved STL program, with Mermaid class diagrams (codegen.md §8.1).

``render_docs`` turns a ``Program`` into one Markdown document: a title, an index of packages,
and per package a Mermaid ``classDiagram`` followed by one section per class and data type.

The work is split in two: this module builds *views* (small frozen dataclasses whose strings are
already escaped Markdown), and the Jinja2 templates in ``templates/docs/`` lay them out. Keeping
every decision about content and escaping in typed Python leaves the templates free of logic
that mypy could not check.

Determinism (codegen.md §6): the output depends only on the model. Orders are declaration order
inside a package and sorted names for the package index; no set or hash-ordered dict is ever
iterated; paths are the files' relative paths; there are no timestamps.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

import sengen.templates
from sengen.codegen.naming import python_name, snake_case, variant_tags
from sengen.stl import model as m

# --------------------------------------------------------------------------------------------
# Escaping

# Characters that start inline Markdown constructs (emphasis, code, links, HTML, tables,
# strikethrough) or a heading; a backslash makes each one literal in CommonMark and GFM.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~])")
# A line start that would open a list, a block quote or a thematic break in a paragraph.
_BLOCK_START = re.compile(r"^([-+=]|\d+[.)])")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BLANK_RUNS = re.compile(r"\n{3,}")


def md_text(text: str) -> str:
    """``text`` as literal Markdown prose, safe inside a table cell.

    Descriptions and tag values are user text: a ``|`` would end a table cell and a line break
    would end the table row, so every line break becomes ``<br>`` and every special character
    is escaped.
    """
    lines = [_escape_line(line.strip()) for line in _LINE_BREAK.split(text)]
    return "<br>".join(lines)


def _escape_line(line: str) -> str:
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", line.replace("&", "&amp;"))
    return _BLOCK_START.sub(r"\\\1", escaped)


def md_code(text: str) -> str:
    """``text`` as an inline code span, safe inside a table cell.

    The fence is one backtick longer than the longest backtick run inside (CommonMark's rule),
    ``|`` is escaped because GFM splits cells before it parses code spans, and a line break,
    which no code span can hold, separates one span per line with ``<br>``.
    """
    return "<br>".join(_code_span(line) for line in _LINE_BREAK.split(text))


def _code_span(text: str) -> str:
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {text} " if text[0] == "`" or text[-1] == "`" else text
    return fence + padded.replace("|", "\\|") + fence


def mermaid_identifier(qualified_name: str) -> str:
    """A Mermaid node identifier: dots and any other character outside ``[A-Za-z0-9_]`` become
    ``_`` (Mermaid's class names are word characters only)."""
    identifier = re.sub(r"[^A-Za-z0-9_]", "_", qualified_name)
    return "_" + identifier if identifier[:1].isdigit() else identifier


def _mermaid_label(text: str) -> str:
    """Text for a ``["…"]`` label: a double quote would end it, so anything outside a plain set
    becomes a Mermaid entity code (``#34;``)."""
    return re.sub(r"[^A-Za-z0-9_. -]", lambda c: f"#{ord(c.group())};", text)


def _mermaid_member(text: str) -> str:
    """Text for one member line of a class body: braces, quotes, tildes and line breaks would
    end the body, open a string or a generic, so everything outside a plain set becomes ``_``.
    STL names and types never contain such characters; this is a safety net."""
    return re.sub(r"[^A-Za-z0-9_.,:()= +-]", "_", text)


# --------------------------------------------------------------------------------------------
# Anchors and type references


def _anchor_base(name: str) -> str:
    return name.lower().replace(".", "-")


def package_anchor_name(package: str) -> str:
    return "package-" + _anchor_base(package)


class _Anchors:
    """Anchors from qualified names: lowercase, dots to ``-``.

    Lowercasing can merge names that differ only in case (``p.Foo``, ``p.FOO``); those get a
    ``-2``, ``-3`` suffix in sorted-name order, so each anchor depends only on the set of names,
    never on document order. A suffixed anchor cannot equal a natural one, because no STL
    segment is a bare number.
    """

    def __init__(self, packages: Sequence[str], types: Sequence[m.UserType]) -> None:
        self._taken: dict[str, str] = {"packages": "packages"}
        self._packages: dict[str, str] = {}
        self._types: dict[str, str] = {}
        for package in sorted(packages):
            self._packages[package] = self._allocate(package_anchor_name(package))
        for name in sorted(t.qualified_name for t in types):
            self._types[name] = self._allocate(_anchor_base(name))

    def _allocate(self, base: str) -> str:
        anchor, number = base, 1
        while anchor in self._taken:
            number += 1
            anchor = f"{base}-{number}"
        self._taken[anchor] = base
        return anchor

    def package(self, package: str) -> str:
        return self._packages[package]

    def type(self, user_type: m.UserType) -> str | None:
        return self._types.get(user_type.qualified_name)


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


class _Linker:
    """Type references as Markdown: user types link to their section, natives are code."""

    def __init__(self, anchors: _Anchors) -> None:
        self.anchors = anchors

    def link(self, t: m.Type | None) -> str:
        if t is None:
            return md_code("void")
        if isinstance(t, m.UserType):
            anchor = self.anchors.type(t)
            label = md_code(t.qualified_name)
            # A type outside the program cannot be linked; the model never produces one.
            return f"[{label}](#{anchor})" if anchor is not None else label
        return md_code(t.name)


# --------------------------------------------------------------------------------------------
# Views consumed by the templates. Every string is finished Markdown.


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class MemberView:
    """A method, an event or the constructor."""

    heading: str
    signature: str
    summary: Table | None  # None for the constructor: its flags are fixed
    description: str
    arguments: Table | None


@dataclass(frozen=True, slots=True)
class ClassView:
    anchor: str
    heading: str
    facts: tuple[str, ...]
    description: str
    properties: Table | None
    methods: tuple[MemberView, ...]
    events: tuple[MemberView, ...]
    constructor: MemberView


@dataclass(frozen=True, slots=True)
class DataTypeView:
    anchor: str
    heading: str
    facts: tuple[str, ...]
    description: str
    table: Table | None


@dataclass(frozen=True, slots=True)
class MermaidNode:
    identifier: str
    label: str
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MermaidEdge:
    source: str
    arrow: str
    target: str
    label: str


@dataclass(frozen=True, slots=True)
class DiagramView:
    nodes: tuple[MermaidNode, ...]
    edges: tuple[MermaidEdge, ...]


@dataclass(frozen=True, slots=True)
class PackageView:
    name: str
    anchor: str
    heading: str
    files: tuple[str, ...]
    contents: Table | None
    diagram: DiagramView | None
    classes: tuple[ClassView, ...]
    data_types: tuple[DataTypeView, ...]


@dataclass(frozen=True, slots=True)
class IndexEntry:
    link: str
    summary: str


@dataclass(frozen=True, slots=True)
class DocumentView:
    title: str
    index: tuple[IndexEntry, ...]
    packages: tuple[PackageView, ...]


# --------------------------------------------------------------------------------------------
# Program-wide context


@dataclass(frozen=True, slots=True)
class _Context:
    linker: _Linker
    files: dict[str, m.StlFile]  # qualified type name → the file that declares it

    def source(self, user_type: m.UserType) -> str:
        stl_file = self.files.get(user_type.qualified_name)
        # relative_path, not Location.file: the display path depends on the working directory.
        path = stl_file.relative_path if stl_file is not None else user_type.location.file
        return md_code(f"{path}:{user_type.location.line}")


_KIND_NAMES: tuple[tuple[type[m.UserType], str], ...] = (
    (m.ClassType, "class"),
    (m.StructType, "struct"),
    (m.VariantType, "variant"),
    (m.EnumType, "enum"),
    (m.SequenceType, "sequence"),
    (m.ArrayType, "array"),
    (m.OptionalType, "optional"),
    (m.QuantityType, "quantity"),
    (m.AliasType, "alias"),
)


def kind_name(user_type: m.UserType) -> str:
    for kind, name in _KIND_NAMES:
        if isinstance(user_type, kind):
            return name
    raise TypeError(f"unknown type kind: {type(user_type).__name__}")


def _heading(user_type: m.UserType) -> str:
    return f"{kind_name(user_type).capitalize()} {md_code(user_type.qualified_name)}"


# --------------------------------------------------------------------------------------------
# Classes

_CATEGORY_NAMES: dict[m.PropertyCategory, str] = {
    m.PropertyCategory.STATIC_RW: "static",
    m.PropertyCategory.STATIC_RO: "static_no_config",
    m.PropertyCategory.DYNAMIC_RW: "writable",
    m.PropertyCategory.DYNAMIC_RO: "read-only",
}


def _member_python(name: str, context: str) -> str:
    return md_code(python_name(snake_case(name), context))


def _signature(name: str, arguments: Sequence[m.Argument], returns: str | None) -> str:
    """``name(a: T, …) -> R`` with qualified type names; ``returns`` None for events."""
    args = ", ".join(f"{a.name}: {a.type.qualified_name}" for a in arguments)
    tail = f" -> {returns}" if returns is not None else ""
    return md_code(f"{name}({args}){tail}")


def _arguments_table(arguments: Sequence[m.Argument], ctx: _Context, context: str) -> Table | None:
    if not arguments:
        return None
    rows = tuple(
        (
            md_code(a.name),
            _member_python(a.name, context),
            ctx.linker.link(a.type),
            md_text(a.description),
        )
        for a in arguments
    )
    return Table(("Argument", "Python name", "Type", "Description"), rows)


def _method_view(method: m.Method, ctx: _Context) -> MemberView:
    returns = method.return_type.qualified_name if method.return_type is not None else "void"
    summary = Table(
        ("Python name", "Returns", "Transport", "const", "local", "deferred"),
        (
            (
                _member_python(method.name, "member"),
                ctx.linker.link(method.return_type),
                method.transport.value,
                _yes_no(method.const),
                _yes_no(method.local),
                _yes_no(method.deferred),
            ),
        ),
    )
    return MemberView(
        heading=md_code(method.name),
        signature=_signature(method.name, method.arguments, returns),
        summary=summary,
        description=md_text(method.description),
        arguments=_arguments_table(method.arguments, ctx, "argument"),
    )


def _event_view(event: m.Event, ctx: _Context) -> MemberView:
    summary = Table(
        ("Python name", "Transport"),
        ((_member_python(event.name, "event"), event.transport.value),),
    )
    return MemberView(
        heading=md_code(event.name),
        signature=_signature(event.name, event.arguments, None),
        summary=summary,
        description=md_text(event.description),
        arguments=_arguments_table(event.arguments, ctx, "argument"),
    )


def _constructor_view(cls: m.ClassType, ctx: _Context) -> MemberView:
    constructor = cls.constructor
    # The arguments are the [static] properties, passed to the generated __init__ by keyword
    # under their property names (codegen.md §3.1), so they are named in the member context.
    return MemberView(
        heading=md_code(constructor.name),
        signature=_signature(constructor.name, constructor.arguments, None),
        summary=None,
        description=md_text(constructor.description),
        arguments=_arguments_table(constructor.arguments, ctx, "member"),
    )


def _properties_table(cls: m.ClassType, ctx: _Context) -> Table | None:
    if not cls.properties:
        return None
    header = (
        "STL name",
        "Python name",
        "Type",
        "Category",
        "Transport",
        "Checked",
        "Tags",
        "Description",
    )
    rows = tuple(
        (
            md_code(p.name),
            _member_python(p.name, "member"),
            ctx.linker.link(p.type),
            _CATEGORY_NAMES[p.category],
            p.transport.value,
            _yes_no(p.checked),
            ", ".join(md_code(tag) for tag in p.tags),
            md_text(p.description),
        )
        for p in cls.properties
    )
    return Table(header, rows)


def _not_instantiable_reasons(cls: m.ClassType) -> list[str]:
    """Why ``cls`` needs user code (codegen.md §3.8), in the spec's order."""
    chain = (cls, *cls.ancestors())
    reasons = []
    if cls.abstract:
        reasons.append("abstract")
    if any(c.methods for c in chain):
        reasons.append("has methods")
    if any(p.checked for c in chain for p in c.properties):
        reasons.append("has checked properties")
    return reasons


def _instantiable_fact(cls: m.ClassType) -> str:
    if cls.instantiable:
        return "Instantiable without code: yes"
    # The model's rule decides; the reasons only explain it.
    reasons = ", ".join(_not_instantiable_reasons(cls))
    return (
        f"Instantiable without code: no ({reasons})" if reasons else "Instantiable without code: no"
    )


# Ancestors listed by name in a class's section: each section lists its lineage, so a chain of
# thousands of levels made the reference grow as its square (gigabytes for 5,000).
MAX_ANCESTORS_LISTED = 50


def _inherited_facts(cls: m.ClassType, ctx: _Context) -> Iterator[str]:
    for number, ancestor in enumerate(cls.ancestors()):
        if number == MAX_ANCESTORS_LISTED:
            rest = sum(1 for _ in ancestor.ancestors()) + 1
            more = f"{rest} more ancestor" + ("s" if rest > 1 else "")
            yield f"Inherited from {more}, up to {ctx.linker.link(_root(ancestor))}"
            return
        groups = [
            ("properties", [p.name for p in ancestor.properties]),
            ("methods", [x.name for x in ancestor.methods]),
            ("events", [e.name for e in ancestor.events]),
        ]
        listed = [
            f"{what} {', '.join(md_code(n) for n in names)}" for what, names in groups if names
        ]
        if listed:
            yield f"Inherited from {ctx.linker.link(ancestor)}: {'; '.join(listed)}"


def _root(cls: m.ClassType) -> m.ClassType:
    root = cls
    while root.parent is not None:
        root = root.parent
    return root


def _class_facts(cls: m.ClassType, ctx: _Context) -> tuple[str, ...]:
    # Only the bare name can be reserved (`None`); the suffixed names never are (§3.1).
    names = [python_name(cls.name, "type")]
    names += [cls.name + suffix for suffix in ("Base", "LocalProxy", "RemoteProxy")]
    python_classes = ", ".join(md_code(n) for n in names)
    parent = ctx.linker.link(cls.parent) if cls.parent is not None else "none"
    return (
        f"Declared in {ctx.source(cls)}",
        f"Extends: {parent}",
        f"Abstract: {_yes_no(cls.abstract)}",
        _instantiable_fact(cls),
        f"Python classes: {python_classes}",
        *_inherited_facts(cls, ctx),
    )


def class_view(cls: m.ClassType, ctx: _Context) -> ClassView:
    anchor = ctx.linker.anchors.type(cls)
    assert anchor is not None, cls.qualified_name  # every type of the program has an anchor
    return ClassView(
        anchor=anchor,
        heading=_heading(cls),
        facts=_class_facts(cls, ctx),
        description=md_text(cls.description),
        properties=_properties_table(cls, ctx),
        methods=tuple(_method_view(x, ctx) for x in cls.methods),
        events=tuple(_event_view(e, ctx) for e in cls.events),
        constructor=_constructor_view(cls, ctx),
    )


# --------------------------------------------------------------------------------------------
# Data types


def _owned_fields(struct: m.StructType) -> Iterator[tuple[m.Field, m.StructType]]:
    """Every field of ``struct`` with the struct that declares it, inherited fields first."""
    if struct.parent is not None:
        yield from _owned_fields(struct.parent)
    for f in struct.fields:
        yield f, struct


def _struct_parts(t: m.StructType, ctx: _Context) -> tuple[list[str], Table | None]:
    parent = ctx.linker.link(t.parent) if t.parent is not None else "none"
    facts = [f"Parent: {parent}", f"Fields (inherited included): {len(t.all_fields)}"]
    rows = tuple(
        (
            md_code(f.name),
            md_code(python_name(snake_case(f.name), "field")),
            ctx.linker.link(f.type),
            ctx.linker.link(owner),
            md_text(f.description),
        )
        for f, owner in _owned_fields(t)
    )
    header = ("Field", "Python name", "Type", "Declared in", "Description")
    return facts, Table(header, rows) if rows else None


def _variant_parts(t: m.VariantType, ctx: _Context) -> tuple[list[str], Table | None]:
    rows = tuple(
        (str(a.key), md_code(tag), ctx.linker.link(a.type), md_text(a.description))
        for a, tag in zip(t.alternatives, variant_tags(t), strict=True)
    )
    facts = [f"Alternatives: {len(rows)}"]
    return facts, Table(("Key", "Tag", "Type", "Description"), rows) if rows else None


def _enum_parts(t: m.EnumType, ctx: _Context) -> tuple[list[str], Table | None]:
    rows = tuple(
        (
            md_code(e.name),
            str(e.key),
            md_code(python_name(e.name, "enumerator")),
            md_text(e.description),
        )
        for e in t.enumerators
    )
    facts = [f"Storage: {ctx.linker.link(t.storage)}"]
    return facts, Table(("Enumerator", "Key", "Python name", "Description"), rows) if rows else None


def _sequence_parts(t: m.SequenceType, ctx: _Context) -> tuple[list[str], Table | None]:
    bound = str(t.max_size) if t.max_size is not None else "unbounded"
    return [f"Element: {ctx.linker.link(t.element)}", f"Bound: {bound}"], None


def _array_parts(t: m.ArrayType, ctx: _Context) -> tuple[list[str], Table | None]:
    return [f"Element: {ctx.linker.link(t.element)}", f"Size: {t.size}"], None


def _optional_parts(t: m.OptionalType, ctx: _Context) -> tuple[list[str], Table | None]:
    return [f"Target: {ctx.linker.link(t.target)}"], None


def _alias_parts(t: m.AliasType, ctx: _Context) -> tuple[list[str], Table | None]:
    return [f"Target: {ctx.linker.link(t.target)}"], None


def _limit(value: float | None) -> str:
    # repr gives the shortest text that round-trips, the same on every platform.
    return md_code(repr(value)) if value is not None else "none"


def _unit_text(t: m.QuantityType) -> str:
    if t.unit is None:
        return f"none ({md_code(t.unit_name)} is not a known unit: the quantity is unitless)"
    unit = t.unit
    return f"{md_code(unit.abbreviation)} ({md_text(unit.name)}, {md_text(unit.category)})"


def _quantity_parts(t: m.QuantityType, ctx: _Context) -> tuple[list[str], Table | None]:
    facts = [
        f"Value type: {ctx.linker.link(t.value_type)}",
        f"Unit: {_unit_text(t)}",
        f"Min: {_limit(t.minimum)}",
        f"Max: {_limit(t.maximum)}",
    ]
    return facts, None


def _parts_for(t: m.UserType, ctx: _Context) -> tuple[list[str], Table | None]:
    # isinstance dispatch keeps every branch typed (a dict of callables would lose the types).
    if isinstance(t, m.StructType):
        return _struct_parts(t, ctx)
    if isinstance(t, m.VariantType):
        return _variant_parts(t, ctx)
    if isinstance(t, m.EnumType):
        return _enum_parts(t, ctx)
    if isinstance(t, m.SequenceType):
        return _sequence_parts(t, ctx)
    if isinstance(t, m.ArrayType):
        return _array_parts(t, ctx)
    if isinstance(t, m.OptionalType):
        return _optional_parts(t, ctx)
    if isinstance(t, m.QuantityType):
        return _quantity_parts(t, ctx)
    if isinstance(t, m.AliasType):
        return _alias_parts(t, ctx)
    raise TypeError(f"not a data type: {type(t).__name__}")


def data_type_view(t: m.UserType, ctx: _Context) -> DataTypeView:
    anchor = ctx.linker.anchors.type(t)
    assert anchor is not None, t.qualified_name  # every type of the program has an anchor
    facts, table = _parts_for(t, ctx)
    python = f"Python name: {md_code(python_name(t.name, 'type'))}"
    return DataTypeView(
        anchor=anchor,
        heading=_heading(t),
        facts=(f"Declared in {ctx.source(t)}", python, *facts),
        description=md_text(t.description),
        table=table,
    )


# --------------------------------------------------------------------------------------------
# Mermaid diagrams

# The kinds drawn as boxes; the others (sequences, quantities, …) are looked through.
_BOXES = (m.ClassType, m.StructType, m.VariantType, m.EnumType)


def _used_boxes(t: m.Type) -> Iterator[m.UserType]:
    """The boxed types a member of type ``t`` uses, looking through containers and aliases:
    a property of type ``sequence<Point>`` uses ``Point``."""
    if isinstance(t, _BOXES):
        yield t
    elif isinstance(t, m.SequenceType | m.ArrayType):
        yield from _used_boxes(t.element)
    elif isinstance(t, m.OptionalType | m.AliasType):
        yield from _used_boxes(t.target)


def _class_member_types(cls: m.ClassType) -> Iterator[m.Type]:
    for p in cls.properties:
        yield p.type
    for method in cls.methods:
        yield from (a.type for a in method.arguments)
        if method.return_type is not None:
            yield method.return_type
    for e in cls.events:
        yield from (a.type for a in e.arguments)


class _Diagram:
    """One package's ``classDiagram``: its own boxes, plus bare boxes for the types of other
    packages that an edge reaches, so that every edge joins declared nodes."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.nodes: dict[str, MermaidNode] = {}  # qualified name → node, in declaration order
        self.identifiers: dict[str, str] = {}  # identifier → qualified name, for collisions
        self.edges: dict[tuple[str, str, str], MermaidEdge] = {}

    def _identifier(self, qualified_name: str) -> str:
        base = mermaid_identifier(qualified_name)
        identifier, number = base, 1
        # `a.b_c` and `a_b.c` sanitise alike; a suffix keeps them apart within the diagram.
        while self.identifiers.get(identifier, qualified_name) != qualified_name:
            number += 1
            identifier = f"{base}_{number}"
        self.identifiers[identifier] = qualified_name
        return identifier

    def node(self, t: m.UserType, members: tuple[str, ...]) -> str:
        existing = self.nodes.get(t.qualified_name)
        if existing is not None:
            return existing.identifier
        identifier = self._identifier(t.qualified_name)
        label = _mermaid_label(t.qualified_name)
        self.nodes[t.qualified_name] = MermaidNode(identifier, label, members)
        return identifier

    def reference(self, t: m.UserType) -> str:
        """The node of ``t``; a type of another package gets a box with its stereotype only."""
        return self.node(t, _stereotype(t))

    def edge(self, source: str, arrow: str, target: str, label: str) -> None:
        self.edges.setdefault((source, arrow, target), MermaidEdge(source, arrow, target, label))

    def type_text(self, t: m.Type | None) -> str:
        if t is None:
            return "void"
        if isinstance(t, m.UserType) and t.package == self.package:
            return t.name
        return t.qualified_name

    def view(self) -> DiagramView:
        return DiagramView(tuple(self.nodes.values()), tuple(self.edges.values()))


def _stereotype(t: m.UserType) -> tuple[str, ...]:
    if isinstance(t, m.ClassType):
        return ("<<abstract>>",) if t.abstract else ()
    return (f"<<{kind_name(t)}>>",)


def _arguments_text(arguments: Sequence[m.Argument], diagram: _Diagram) -> str:
    return ", ".join(f"{diagram.type_text(a.type)} {a.name}" for a in arguments)


def _class_members(cls: m.ClassType, diagram: _Diagram) -> tuple[str, ...]:
    lines = [f"+{diagram.type_text(p.type)} {p.name}" for p in cls.properties]
    for x in cls.methods:
        args = _arguments_text(x.arguments, diagram)
        lines.append(f"+{x.name}({args}) {diagram.type_text(x.return_type)}")
    lines += [f"+event {e.name}({_arguments_text(e.arguments, diagram)})" for e in cls.events]
    return _stereotype(cls) + tuple(_mermaid_member(line) for line in lines)


def _box_members(t: m.UserType, diagram: _Diagram) -> tuple[str, ...]:
    if isinstance(t, m.ClassType):
        return _class_members(t, diagram)
    lines: list[str] = []
    if isinstance(t, m.StructType):
        lines += [f"+{diagram.type_text(f.type)} {f.name}" for f in t.fields]
    elif isinstance(t, m.VariantType):
        lines += [f"+{diagram.type_text(a.type)}" for a in t.alternatives]
    elif isinstance(t, m.EnumType):
        lines += [f"+{e.name} = {e.key}" for e in t.enumerators]
    # The stereotype is ours and must keep its angle brackets; member text is sanitised.
    return _stereotype(t) + tuple(_mermaid_member(line) for line in lines)


def diagram_view(package: str, types: Sequence[m.UserType]) -> DiagramView | None:
    boxes = [t for t in types if isinstance(t, _BOXES)]
    if not boxes:
        return None
    diagram = _Diagram(package)
    # Own boxes first, all of them, so that a reference from an earlier box cannot declare a
    # later own type as a bare box.
    for t in boxes:
        diagram.node(t, _box_members(t, diagram))
    for t in boxes:
        own = diagram.reference(t)
        if isinstance(t, m.ClassType | m.StructType) and t.parent is not None:
            diagram.edge(diagram.reference(t.parent), "<|--", own, "extends")
        if isinstance(t, m.ClassType):
            for member_type in _class_member_types(t):
                for used in _used_boxes(member_type):
                    diagram.edge(own, "..>", diagram.reference(used), "uses")
    return diagram.view()


# --------------------------------------------------------------------------------------------
# Packages and the document


def _contents_table(types: Sequence[m.UserType], ctx: _Context) -> Table | None:
    if not types:
        return None
    rows = tuple((ctx.linker.link(t), kind_name(t), md_text(t.description)) for t in types)
    return Table(("Type", "Kind", "Description"), rows)


def package_view(
    package: str, files: Sequence[m.StlFile], types: Sequence[m.UserType], ctx: _Context
) -> PackageView:
    classes = [t for t in types if isinstance(t, m.ClassType)]
    data_types = [t for t in types if not isinstance(t, m.ClassType)]
    return PackageView(
        name=package,
        anchor=ctx.linker.anchors.package(package),
        heading=f"Package {md_code(package)}",
        files=tuple(md_code(f.relative_path) for f in files),
        contents=_contents_table(types, ctx),
        diagram=diagram_view(package, types),
        classes=tuple(class_view(c, ctx) for c in classes),
        data_types=tuple(data_type_view(t, ctx) for t in data_types),
    )


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _index_entry(view: PackageView) -> IndexEntry:
    link = f"[{md_code(view.name)}](#{view.anchor})"
    classes = _count(len(view.classes), "class", "classes")
    data_types = _count(len(view.data_types), "data type", "data types")
    return IndexEntry(link, f"{classes}, {data_types}")


def _group_by_package(program: m.Program) -> dict[str, tuple[list[m.StlFile], list[m.UserType]]]:
    """Files and types per package, in program order (dependencies first, then declaration
    order). Files without a package hold no types and are left out."""
    groups: dict[str, tuple[list[m.StlFile], list[m.UserType]]] = {}
    for stl_file in program.files:
        if not stl_file.package:
            continue
        files, types = groups.setdefault(stl_file.package, ([], []))
        files.append(stl_file)
        types.extend(stl_file.types)
    return groups


def document_view(program: m.Program, title: str) -> DocumentView:
    groups = _group_by_package(program)
    anchors = _Anchors(list(groups), program.types)
    files = {t.qualified_name: f for f in program.files for t in f.types}
    ctx = _Context(_Linker(anchors), files)
    packages = tuple(package_view(name, *groups[name], ctx) for name in sorted(groups))
    return DocumentView(
        title=md_text(title),
        index=tuple(_index_entry(p) for p in packages),
        packages=packages,
    )


@functools.cache
def _environment() -> jinja2.Environment:
    # FileSystemLoader on the installed package folder: templates/docs/ needs no __init__.py.
    folder = Path(sengen.templates.__file__).parent / "docs"
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # Markdown, escaped by this module, not HTML
    )


def render_docs(program: m.Program, *, title: str = "STL reference") -> str:
    """The Markdown reference of ``program`` (codegen.md §8.1), byte-identical for the same
    model in every process."""
    view = document_view(program, title)
    text = _environment().get_template("reference.md.j2").render(doc=view)
    # The templates separate blocks generously; collapsing blank-line runs here keeps them
    # readable. No block of the output (Mermaid included) holds a blank line of its own.
    return _BLANK_RUNS.sub("\n\n", text).strip("\n") + "\n"
