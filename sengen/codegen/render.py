"""Model → Python source text: the Jinja2 templates of ``sengen.templates`` rendered module by
module, laid out as black would (codegen.md §5, §6; :mod:`sengen.codegen.layout`).

The templates write declarations (codegen.md §3): each STL member once, with keyword metadata
the runtime reads when the class is created. The helpers below spell those declarations; the
templates arrange them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2

from sengen import templates
from sengen.codegen import layout as lay
from sengen.codegen.naming import python_name, snake_case, variant_tags
from sengen.codegen.pyview import Layout, ModuleView, is_bytes, member
from sengen.runtime.abi import INTERFACE
from sengen.runtime.objects.declare import stl_name_of
from sengen.stl import model as m
from sengen.version import __version__

_KIND_TEMPLATES: dict[type[m.UserType], str] = {
    m.EnumType: "enum.py.j2",
    m.StructType: "struct.py.j2",
    m.VariantType: "variant.py.j2",
    m.SequenceType: "sequence.py.j2",
    m.ArrayType: "sequence.py.j2",
    m.OptionalType: "optional.py.j2",
    m.QuantityType: "quantity.py.j2",
    m.AliasType: "alias.py.j2",
    m.ClassType: "class.py.j2",
}
# The keyword of each property category; dynamic read-only is the default.
_CATEGORIES = {
    m.PropertyCategory.STATIC_RW: "static",
    m.PropertyCategory.STATIC_RO: "static_no_config",
    m.PropertyCategory.DYNAMIC_RW: "writable",
}
_TRANSPORTS = {
    m.TransportMode.UNICAST: "_rt.Transport.UNICAST",
    m.TransportMode.MULTICAST: "_rt.Transport.MULTICAST",
    m.TransportMode.CONFIRMED: "_rt.Transport.CONFIRMED",
}


def docstring(text: str, indent: int) -> str:
    """A triple-quoted literal whose content cannot end or break the string, as black writes
    it: a closing quote mark of the text is escaped and followed by a space."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    pad = "\n" + " " * indent
    lines = [line.rstrip() for line in body.splitlines()] or [""]
    joined = pad.join(lines)
    if len(lines) > 1:
        joined += pad
    elif joined.endswith('"'):
        joined += " "
    return f'"""{joined}"""'


def _argument(a: m.Argument) -> str:
    return python_name(snake_case(a.name), "argument")


def _literal(value: Any) -> str:
    """A Python literal as black writes it; lists become tuples (``("a",)`` for one item)."""
    if isinstance(value, list | tuple):
        return tuple_text([_literal(v) for v in value])
    if isinstance(value, str):
        return lay.string(value)
    return repr(value)


def tuple_text(items: list[str]) -> str:
    """A tuple display without a trailing comma black would keep exploded."""
    if len(items) == 1:
        return f"({items[0]},)"
    return "(" + ", ".join(items) + ")"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _bound(t: m.QuantityType, value: float | None) -> str:
    if value is None:
        return "None"
    if t.value_type.kind is m.NativeKind.INTEGER and float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def _parameter(name: str, annotation: str, default: str, indent: int) -> str:
    """A parameter on a line of its own; black parenthesises an annotation too long for it."""
    one = f"{name}: {annotation} = {default}"
    if lay.fits(" " * indent + one + ","):
        return one
    pad = " " * indent
    return f"{name}: (\n{pad}    {annotation}\n{pad}) = {default}"


def _declaration(name: str, annotation: lay.Bracket, value: lay.Bracket) -> str:
    """``name: annotation = value`` in a class body. Black splits an annotation too long for
    the first line before the value."""
    if lay.fits(f"    {name}: {annotation.flat()} = ("):
        return lay.text(f"{name}: {annotation.flat()} = ", value, "", 4)
    *lines, last = lay.lay(f"{name}: ", annotation, "", 4)
    return "\n".join([*lines, *lay.lay(last.strip() + " = ", value, "", 4)])[4:]


def _stl(py_name: str, stl_name: str) -> list[str]:
    """``stl=`` when the runtime's rule does not give the STL name back from the Python one."""
    return [] if stl_name_of(py_name) == stl_name else [f"stl={lay.string(stl_name)}"]


def _doc_keyword(description: str) -> list[str]:
    return [f"doc={lay.string(description)}"] if description else []


@functools.cache
def environment() -> jinja2.Environment:
    folder = Path(templates.__file__).parent
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["lit"] = _literal
    env.filters["member"] = member
    env.filters["arg"] = _argument
    env.filters["kind"] = lambda t: type(t).__name__.removesuffix("Type").lower()
    env.globals.update(
        doc=docstring,
        py=python_name,
        snake=snake_case,
        member=member,
        arg=_argument,
        variant_tags=variant_tags,
        unique=_unique,
        is_bytes=is_bytes,
        bound=_bound,
        tuple_text=tuple_text,
        lay=lay,
        lit=_literal,
    )
    return env


class Spelling:
    """The declarations of one module's body, spelt through its :class:`ModuleView` (which
    records the imports they need)."""

    def __init__(self, view: ModuleView) -> None:
        self.v = view

    def annotations(self, types: Iterable[m.Type]) -> list[str]:
        return [self.v.annotation(t) for t in types]

    def args(self, arguments: Iterable[m.Argument]) -> lay.Bracket:
        """The arguments' STL types by Python name, with their descriptions."""
        entries: list[tuple[str, lay.Item]] = []
        for a in arguments:
            py = _argument(a)
            extras = _doc_keyword(a.description) + _stl(py, a.name)
            meta = self.v.meta(a.type)
            entries.append(
                (lay.string(py), lay.call("_rt.arg", [meta, *extras]) if extras else meta)
            )
        return lay.mapping(entries)

    def callback(self, p: m.Property) -> lay.Bracket:
        """The ``callback`` parameter of ``on_<s>_changed``."""
        return lay.Bracket(
            "callback: _t.Callable[", (f"[{self.v.annotation(p.type)}]", "None"), "]"
        )

    def params(self, arguments: Iterable[m.Argument]) -> list[lay.Item]:
        return [f"{_argument(a)}: {self.v.annotation(a.type)}" for a in arguments]

    def transport(self, x: m.Property | m.Method | m.Event, default: m.TransportMode) -> list[str]:
        return [] if x.transport is default else [f"transport={_TRANSPORTS[x.transport]}"]

    def prop(self, p: m.Property) -> str:
        py = member(p.name)
        items: list[lay.Item] = [self.v.meta(p.type)]
        if p.category in _CATEGORIES:
            items.append(f"{_CATEGORIES[p.category]}=True")
        if p.checked:
            items.append("checked=True")
        items += self.transport(p, m.TransportMode.MULTICAST)
        if p.tags:
            items.append(f"tags={_literal(list(p.tags))}")
        items += _doc_keyword(p.description) + _stl(py, p.name)
        annotation = lay.Bracket("_rt.Prop[", (self.v.annotation(p.type),), "]")
        return _declaration(py, annotation, lay.call("_rt.prop", items))

    def event(self, e: m.Event) -> str:
        py = python_name(snake_case(e.name), "event")
        items: list[lay.Item] = [self.args(e.arguments)] if e.arguments else []
        items += self.transport(e, m.TransportMode.MULTICAST)
        items += _doc_keyword(e.description) + _stl(py, e.name)
        types = tuple(self.annotations(a.type for a in e.arguments))
        handle = lay.Bracket("_rt.Event[", (lay.Bracket("[", types, "]", display=True),), "]")
        return _declaration(py, handle, lay.call("_rt.event", items))

    def method(self, method: m.Method) -> str:
        """The decorator and signature of a method of the interface."""
        py = member(method.name)
        items: list[lay.Item] = [self.args(method.arguments)] if method.arguments else []
        if method.return_type is not None and not isinstance(method.return_type, m.VoidType):
            items.append(f"returns={self.v.meta(method.return_type)}")
        for flag in ("const", "deferred", "local"):
            if getattr(method, flag):
                items.append(f"{flag}=True")
        items += self.transport(method, m.TransportMode.CONFIRMED) + _stl(py, method.name)
        decorator = lay.text("@", lay.call("_rt.method", items), "", 4)
        result = self.v.annotation(method.return_type)
        params: list[lay.Item] = ["self", *self.params(method.arguments)]
        if method.local:
            tail = f") -> {result}:"
        else:
            annotation = f"{self.v.use('_t')}.Callable[[_rt.Call[{result}]], None] | None"
            params += ["*", _parameter("on_result", annotation, "None", 8)]
            params.append("timeout: _rt.Duration | None = None")
            tail = f") -> _rt.Call[{result}]:"
        header = lay.Bracket(f"def {py}(", tuple(params), tail, signature=True)
        signature = lay.text("", header, "", 4)
        return f"{decorator}\n    {signature}"

    def call_body(self, method: m.Method) -> str:
        names = [_argument(a) for a in method.arguments]
        items: list[lay.Item] = [lay.string(method.name), tuple_text(names), "on_result", "timeout"]
        return lay.text("return ", lay.call("self._call_", items), "", 8)

    def stub(self, name: str, params: list[lay.Item], result: str, indent: int = 8) -> str:
        """A signature without a body: one the runtime derives (in a TYPE_CHECKING block), or
        an abstract hook."""
        signature = lay.Bracket(
            f"def {name}(", ("self", *params), f") -> {result}: ...", signature=True
        )
        return lay.text("", signature, "", indent)

    def header(self, name: str, bases: list[lay.Item], body: str = "") -> str:
        """A class statement's first line(s); ``body`` " ..." for a class without a body."""
        return lay.text("", lay.Bracket(f"class {name}(", tuple(bases), "):" + body))

    def keywords(self, py_name: str, stl_name: str, description: str) -> list[str]:
        """A member's ``doc=`` and ``stl=``, each when needed."""
        return _doc_keyword(description) + _stl(py_name, stl_name)

    def doc(self, description: str) -> list[str]:
        return _doc_keyword(description)

    def unit(self, t: m.QuantityType) -> list[lay.Item]:
        u = t.unit
        if u is None:
            return []
        fields = [
            f"abbreviation={lay.string(u.abbreviation)}",
            f"name={lay.string(u.name)}",
            f"category={lay.string(u.category)}",
            f"factor={u.factor!r}",
        ]
        return [lay.keyword("unit", lay.call("_rt.UnitMeta", fields))]

    def alternatives(self, t: m.VariantType, tags: list[str]) -> str:
        items: list[lay.Item] = []
        for index, (a, tag) in enumerate(zip(t.alternatives, tags, strict=True)):
            spelt = [lay.string(tag), f"type={self.v.meta(a.type)}"]
            if a.key != index:
                spelt.append(f"key={a.key}")
            items.append(lay.call("_rt.alternative", spelt + _doc_keyword(a.description)))
        return lay.text("ALTERNATIVES = ", lay.Bracket("[", tuple(items), "]", True), "", 4)

    def variant_fields(self, types: list[str], tags: list[str]) -> str:
        """``tag`` and ``value`` of a variant, annotated for its alternatives."""
        literal = lay.Bracket("_t.Literal[", tuple(lay.string(tag) for tag in tags), "]")
        tag = lay.text("tag: ", literal, "", 4)
        return f"{tag}\n    {lay.union('value: ', types, 4)}"

    def alias(self, t: m.UserType) -> str:
        """``Name: TypeAlias = <the Python type>``, the subscript split as black splits it."""
        target = f"{t.name}: {self.v.use('_t')}.TypeAlias = "
        declared = self.v.declared(t)
        if lay.fits(target + declared) or "[" not in declared:
            if isinstance(t, m.OptionalType) and not lay.fits(target + declared):
                return lay.union(target, declared.split(" | "), 0)
            return target + declared
        head, _, rest = declared.partition("[")
        items = tuple(i.strip() for i in rest.removesuffix("]").rsplit(",", 1))
        return lay.text(target, lay.Bracket(head + "[", items, "]"))

    def call(self, target: str, callee: str, items: list[lay.Item], indent: int = 0) -> str:
        return lay.text(target, lay.call(callee, items), "", indent)


def render_module(layout: Layout, stl_file: m.StlFile) -> str:
    """The source of one STL file's module, as black would lay it out."""
    env = environment()
    place = layout.files[stl_file.path]
    view = ModuleView(layout, place)
    view.use("_rt")
    spell = Spelling(view)
    blocks = [
        env.get_template(_KIND_TEMPLATES[type(t)]).render(
            t=t, c=t, v=view, s=spell, annotations=spell.annotations
        )
        for t in stl_file.types
    ]
    module = lay.call(
        "_rt.Module",
        [
            "__name__",
            f"package={lay.string(stl_file.package)}",
            f"file={lay.string(stl_file.relative_path)}",
            f"depth={len(place.package) + 1}",
        ],
    )
    return env.get_template("module.py.j2").render(
        version=__version__,
        interface=INTERFACE,
        source=stl_file.relative_path,
        title=f"Python types of STL package {stl_file.package} ({stl_file.path.name}).",
        imports=view.imports(),
        module=lay.text("_M = ", module),
        body="\n\n\n".join(block.strip("\n") for block in blocks),
    )


def _reexport(module: str, name: str) -> str:
    one = f"from .{module} import {name} as {name}"
    return one if lay.fits(one) else f"from .{module} import (\n    {name} as {name},\n)"


def render_init(title: str, exports: list[tuple[str, str]]) -> str:
    """A package ``__init__``: explicit re-exports and a sorted ``__all__``."""
    ordered = [_reexport(module, name) for module, name in sorted(exports)]
    return (
        environment()
        .get_template("package_init.py.j2")
        .render(
            version=__version__,
            title=title,
            exports=ordered,
            names=sorted(name for _, name in exports),
        )
    )
