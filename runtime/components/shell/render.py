"""How the shell writes values, members, objects and types as text.

Values are printed in their configuration form as JSON (enums by name, Durations as ``"20 ms"``,
structs as maps), which is also the form the shell reads back in arguments, so a printed value
can be pasted into a call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sengen.runtime import LocalProxy, NativeObject, Object
from sengen.runtime.kernel.extension import (
    AliasMeta,
    ArgMeta,
    ArrayMeta,
    Category,
    ClassMeta,
    EnumMeta,
    EventMeta,
    MethodMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    json_form,
)

CATEGORIES = {
    Category.STATIC_RW: "static",
    Category.STATIC_RO: "static (set by the implementation)",
    Category.DYNAMIC_RO: "dynamic",
    Category.DYNAMIC_RW: "writable",
}


# 2001-09-09 in nanoseconds since the epoch: a wall-clock time is later, and virtual time since
# the start of a run never gets this far (31 years).
_WALL_CLOCK_NS = 10**18


def json_text(meta: TypeMeta, value: Any) -> str:
    return json.dumps(json_form(meta, value), ensure_ascii=False)


def arguments(args: Sequence[tuple[ArgMeta, Any]]) -> str:
    """``count=10, label="a"``: an event's arguments with their names."""
    return ", ".join(f"{arg.stl_name}={json_text(arg.type, value)}" for arg, value in args)


def signature(member: MethodMeta | EventMeta) -> str:
    """``add(x: i32, y: i32) -> i64``."""
    params = ", ".join(f"{a.stl_name}: {a.type.qualified_name}" for a in member.args)
    text = f"{member.stl_name}({params})"
    if isinstance(member, MethodMeta) and member.return_type is not None:
        text += f" -> {member.return_type.qualified_name}"
    return text


def method_line(method: MethodMeta) -> str:
    tags = [t for t, on in (("const", method.constant), ("local", method.local)) if on]
    return signature(method) + (f"  [{', '.join(tags)}]" if tags else "")


def table(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows with aligned columns; the last column is not padded."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append((indent + "  ".join([*cells, row[-1]])).rstrip())
    return lines


def time_text(ns: int, virtual: bool) -> str:
    """Virtual time as seconds since the start; real time as the local time of day.

    ``virtual``: the shell's own clock. A commit time from another process is on that process's
    clock, which may be of the other kind, so past 2001 a time is always a wall-clock time and
    before it virtual time; ``virtual`` decides only for 0, a time never set."""
    if ns >= _WALL_CLOCK_NS:
        virtual = False
    elif ns > 0:
        virtual = True
    if virtual:
        seconds, rest = divmod(ns, 10**9)
        return f"{seconds}.{rest:09d}"
    moment = datetime.fromtimestamp(ns / 1e9)
    return moment.strftime("%H:%M:%S.") + f"{ns // 10**6 % 1000:03d}"


def kind_of(obj: Object) -> str:
    if isinstance(obj, NativeObject):
        return "native"
    return "local" if isinstance(obj, LocalProxy) else "remote"


def owner_of(obj: Object) -> str:
    """The owning component, when this process knows it."""
    if isinstance(obj, LocalProxy):
        owner = obj.owner
        return owner.local_name.removesuffix(f".{owner.bus}.{owner.name}")
    return "this shell" if isinstance(obj, NativeObject) else "another process"


def object_info(path: str, obj: Object, virtual: bool, owner: str | None = None) -> list[str]:
    """``info <object>``: identity, properties with values and categories, methods, events.
    ``owner``: who owns a remote object, when its process said so."""
    meta = obj.META
    lines = table(
        [
            ("object", path),
            ("id", f"{obj.id:#018x}"),
            ("class", meta.qualified_name),
            ("owner", f"{owner or owner_of(obj)} ({kind_of(obj)})"),
            ("last commit", time_text(obj.last_commit_time, virtual)),
        ],
        indent="",
    )
    return lines + _members(meta, obj)


def _members(meta: ClassMeta, obj: Object | None) -> list[str]:
    lines: list[str] = []
    if meta.all_properties:
        lines.append("properties:")
        rows = []
        for prop in meta.all_properties:
            row = [prop.stl_name, prop.type.qualified_name, CATEGORIES[prop.category]]
            if obj is not None:
                row.insert(1, json_text(prop.type, getattr(obj, prop.py_name)))
            rows.append(row)
        lines += table(rows)
    if meta.all_methods:
        lines.append("methods:")
        lines += [f"  {method_line(m)}" for m in meta.all_methods]
    if meta.all_events:
        lines.append("events:")
        lines += [f"  {signature(e)}" for e in meta.all_events]
    return lines


def property_lines(path: str, obj: Object, virtual: bool) -> list[str]:
    """``<obj>.print``: every property and the last commit time."""
    rows = [
        (p.stl_name, json_text(p.type, getattr(obj, p.py_name))) for p in obj.META.all_properties
    ]
    rows.append(("last commit", time_text(obj.last_commit_time, virtual)))
    return [path, *table(rows)]


def class_info(meta: ClassMeta) -> list[str]:
    head = f"class {meta.qualified_name}"
    if meta.parent is not None:
        head += f" extends {meta.parent.qualified_name}"
    if meta.is_abstract:
        head = "abstract " + head
    return [head, *_described(meta.description), *_members(meta, None)]


def _described(description: str) -> list[str]:
    return [f"  {line}" for line in description.splitlines()] if description else []


def type_info(meta: TypeMeta) -> list[str]:
    """``info <type>``: the type's kind, description and structure."""
    lines = [f"{meta.kind.value} {meta.qualified_name}", *_described(meta.description)]
    if isinstance(meta, EnumMeta):
        lines += table([(e.stl_name, str(e.key)) for e in meta.enumerators])
    elif isinstance(meta, StructMeta):
        lines += table([(f.stl_name, f.type.qualified_name) for f in meta.fields])
    elif isinstance(meta, VariantMeta):
        lines += table([(a.tag, a.type.qualified_name) for a in meta.alternatives])
    elif isinstance(meta, SequenceMeta):
        bound = "unbounded" if meta.max_size is None else f"at most {meta.max_size}"
        lines.append(f"  of {meta.element.qualified_name}, {bound}")
    elif isinstance(meta, ArrayMeta):
        lines.append(f"  of {meta.size} {meta.element.qualified_name}")
    elif isinstance(meta, OptionalMeta | AliasMeta):
        lines.append(f"  of {meta.target.qualified_name}")
    elif isinstance(meta, QuantityMeta):
        unit = meta.unit.abbreviation if meta.unit is not None else "no unit"
        lines.append(f"  {meta.value_type.qualified_name} in {unit}")
        if meta.minimum is not None or meta.maximum is not None:
            lines.append(f"  range [{meta.minimum}, {meta.maximum}]")
    elif isinstance(meta, NativeMeta):
        lines.append("  a native type")
    return lines
