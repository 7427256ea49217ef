"""Model → Python source text: the Jinja2 templates of ``sengen.templates`` rendered module by
module, then black with a fixed mode (codegen.md §5, §6)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import black
import jinja2
from black.mode import TargetVersion

from sengen import templates
from sengen.codegen.naming import python_name, snake_case, variant_tags
from sengen.codegen.pyview import Layout, ModuleView, is_bytes, member
from sengen.runtime.abi import INTERFACE
from sengen.stl import model as m
from sengen.version import __version__

BLACK_MODE = black.Mode(
    line_length=100,
    target_versions={TargetVersion.PY311},
    string_normalization=True,
    magic_trailing_comma=True,
    preview=False,
)
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
_CATEGORIES = {
    m.PropertyCategory.STATIC_RW: "_rt.Category.STATIC_RW",
    m.PropertyCategory.STATIC_RO: "_rt.Category.STATIC_RO",
    m.PropertyCategory.DYNAMIC_RW: "_rt.Category.DYNAMIC_RW",
    m.PropertyCategory.DYNAMIC_RO: "_rt.Category.DYNAMIC_RO",
}
_TRANSPORTS = {
    m.TransportMode.UNICAST: "_rt.Transport.UNICAST",
    m.TransportMode.MULTICAST: "_rt.Transport.MULTICAST",
    m.TransportMode.CONFIRMED: "_rt.Transport.CONFIRMED",
}


def docstring(text: str, indent: int) -> str:
    """A triple-quoted literal whose content cannot end or break the string."""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').strip()
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    pad = "\n" + " " * indent
    lines = [line.rstrip() for line in body.splitlines()] or [""]
    joined = pad.join(lines)
    if len(lines) > 1:
        joined += pad
    return f'"""{joined}"""'


def _argument(a: m.Argument) -> str:
    return python_name(snake_case(a.name), "argument")


def _method_doc(method: m.Method) -> str:
    text = method.description or f"Call ``{method.name}``."
    documented = [a for a in method.arguments if a.description]
    if documented:
        items = "\n".join(
            f"    {snake_case(a.name)}: {' '.join(a.description.split())}" for a in documented
        )
        text += f"\n\nArguments:\n{items}"
    return text


def _literal(value: Any) -> str:
    """A Python literal; lists become tuples (``("a",)`` for one item)."""
    if isinstance(value, list | tuple):
        return tuple_text([_literal(v) for v in value])
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
        field_names=lambda t: [python_name(snake_case(f.name), "field") for f in t.all_fields],
        category=lambda p: _CATEGORIES[p.category],
        transport=lambda x: _TRANSPORTS[x.transport],
        method_doc=_method_doc,
        variant_tags=variant_tags,
        unique=_unique,
        is_bytes=is_bytes,
        bound=_bound,
        tuple_text=tuple_text,
    )
    return env


def render_module(layout: Layout, stl_file: m.StlFile) -> str:
    """The source of one STL file's module, unformatted."""
    env = environment()
    place = layout.files[stl_file.path]
    view = ModuleView(layout, place)
    view.use("_rt")

    def source_of(t: m.UserType) -> str:
        return f"{stl_file.relative_path}:{t.location.line}"

    def annotations(types: Iterable[m.Type]) -> list[str]:
        return [view.annotation(t) for t in types]

    def arg_meta(arguments: Iterable[m.Argument]) -> list[str]:
        return [
            f"_rt.ArgMeta({a.name!r}, {_argument(a)!r}, {view.meta(a.type)}, {a.description!r})"
            for a in arguments
        ]

    helpers = {"source_of": source_of, "annotations": annotations, "arg_meta": arg_meta}
    blocks = [
        env.get_template(_KIND_TEMPLATES[type(t)]).render(t=t, c=t, v=view, **helpers)
        for t in stl_file.types
    ]
    return env.get_template("module.py.j2").render(
        version=__version__,
        interface=INTERFACE,
        source=stl_file.relative_path,
        title=f"Python types of STL package {stl_file.package} ({stl_file.path.name}).",
        imports=view.imports(),
        depth=len(place.package) + 1,
        body="\n\n".join(blocks),
    )


def render_init(title: str, exports: list[tuple[str, str]]) -> str:
    """A package ``__init__``: explicit re-exports and a sorted ``__all__``."""
    ordered = sorted(exports, key=lambda e: (e[0], e[1]))
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


def format_source(source: str) -> str:
    """Format with the pinned black in its fixed mode; a parse failure is an internal error."""
    return black.format_str(source, mode=BLACK_MODE)


# Below this many lines in all, starting worker processes costs more than it saves.
_PARALLEL_LINES = 4000


def format_all(sources: list[str]) -> list[str]:
    """Format every source, in worker processes when the build is large: black dominates the
    build time and each file is independent. The result does not depend on the split."""
    workers = min(os.cpu_count() or 1, len(sources))
    if workers < 2 or sum(s.count("\n") for s in sources) < _PARALLEL_LINES:
        return [format_source(s) for s in sources]
    # The biggest files first, so that no worker is left with a long file at the end.
    order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))
    with ProcessPoolExecutor(workers) as pool:
        formatted = pool.map(format_source, [sources[i] for i in order], chunksize=1)
        by_index = dict(zip(order, formatted, strict=True))
    return [by_index[i] for i in range(len(sources))]
