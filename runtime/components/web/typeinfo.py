"""``/api/types/{name}``: classes and types as JSON, with their STL documentation, and for each
type the input a form needs (what the page's method forms are generated from)."""

from __future__ import annotations

from typing import Any

from sengen.runtime.errors import RegistryError
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
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    registry,
    resolve_alias,
)

from .errors import bad_request, not_found

# As the shell's ``info`` names them.
CATEGORIES = {
    Category.STATIC_RW: "static",
    Category.STATIC_RO: "static (set by the implementation)",
    Category.DYNAMIC_RO: "dynamic",
    Category.DYNAMIC_RW: "writable",
}
_INTEGERS = {"u8", "i16", "u16", "i32", "u32", "i64", "u64"}
_REALS = {"f32", "f64"}


def describe_name(name: str) -> dict[str, Any]:
    scopes = registry.scopes()
    try:
        entry = registry.find_stl_class(name, scopes)
        if entry is not None:
            return describe_class(entry.meta)
        meta = registry.find_type(name, scopes)
    except RegistryError as error:
        raise bad_request(str(error)) from None
    if meta is None:
        raise not_found(f"could not find type {name}")
    return describe_type(meta)


def describe_class(meta: ClassMeta) -> dict[str, Any]:
    return {
        "kind": "class",
        "name": meta.qualified_name,
        "description": meta.description,
        "parent": meta.parent.qualified_name if meta.parent is not None else None,
        "abstract": meta.is_abstract,
        "properties": [_property(p) for p in meta.all_properties],
        "methods": [_method(m) for m in meta.all_methods],
        "events": [_event(e) for e in meta.all_events],
    }


def _property(prop: PropertyMeta) -> dict[str, Any]:
    return {
        "name": prop.stl_name,
        "type": type_ref(prop.type),
        "category": CATEGORIES[prop.category],
        "writable": prop.writable,
        "dynamic": prop.dynamic,
        "description": prop.description,
    }


def _args(args: tuple[ArgMeta, ...]) -> list[dict[str, Any]]:
    return [
        {"name": a.stl_name, "type": type_ref(a.type), "description": a.description} for a in args
    ]


def _method(method: MethodMeta) -> dict[str, Any]:
    returned = method.return_type
    return {
        "name": method.stl_name,
        "args": _args(method.args),
        "returns": type_ref(returned) if returned is not None else None,
        "constant": method.constant,
        "local": method.local,
        "description": method.description,
    }


def _event(event: EventMeta) -> dict[str, Any]:
    return {"name": event.stl_name, "args": _args(event.args), "description": event.description}


def type_ref(meta: TypeMeta) -> dict[str, Any]:
    """The type's name and the input that edits one: integer, real, bool, string, enum (with
    its names), duration, or json (anything else, written as JSON)."""
    target = resolve_alias(meta)
    if isinstance(target, QuantityMeta):
        target = target.value_type
    ref: dict[str, Any] = {"name": meta.qualified_name, "input": "json"}
    if isinstance(target, NativeMeta):
        name = target.qualified_name
        if name in _INTEGERS:
            ref["input"] = "integer"
        elif name in _REALS:
            ref["input"] = "real"
        elif name in ("bool", "string"):
            ref["input"] = name
        elif name in ("Duration", "TimeStamp"):
            ref["input"] = "duration"
    elif isinstance(target, EnumMeta):
        ref["input"] = "enum"
        ref["values"] = [e.stl_name for e in target.enumerators]
    return ref


def describe_type(meta: TypeMeta) -> dict[str, Any]:
    found: dict[str, Any] = {
        "kind": meta.kind.value,
        "name": meta.qualified_name,
        "description": meta.description,
    }
    if isinstance(meta, EnumMeta):
        found["enumerators"] = [
            {"name": e.stl_name, "key": e.key, "description": e.description}
            for e in meta.enumerators
        ]
    elif isinstance(meta, StructMeta):
        found["fields"] = [
            {"name": f.stl_name, "type": type_ref(f.type), "description": f.description}
            for f in meta.fields
        ]
    elif isinstance(meta, VariantMeta):
        found["alternatives"] = [
            {"tag": a.tag, "type": type_ref(a.type), "description": a.description}
            for a in meta.alternatives
        ]
    elif isinstance(meta, SequenceMeta):
        found["element"] = type_ref(meta.element)
        found["maxSize"] = meta.max_size
    elif isinstance(meta, ArrayMeta):
        found["element"] = type_ref(meta.element)
        found["size"] = meta.size
    elif isinstance(meta, OptionalMeta | AliasMeta):
        found["target"] = type_ref(meta.target)
    elif isinstance(meta, QuantityMeta):
        found["valueType"] = meta.value_type.qualified_name
        found["unit"] = meta.unit.abbreviation if meta.unit is not None else None
        found["minimum"] = meta.minimum
        found["maximum"] = meta.maximum
    return found
