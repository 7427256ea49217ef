"""JSON Schemas of recorded values (runtime.md §9.2): what generic MCAP tools decode and plot.

A class's schema describes its state as the recorder writes it (the shell's JSON form): every
property optional, because a change message carries only the properties that changed. Named types
(structs, enums, variants) go once each under ``$defs``. A float may be ``null``: JSON has no NaN
or infinity, and msgspec writes them as ``null``.
"""

from __future__ import annotations

from typing import Any

from sengen.runtime.objects.meta import (
    AliasMeta,
    ArgMeta,
    ArrayMeta,
    ClassMeta,
    EnumMeta,
    EventMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
)

DIALECT = "https://json-schema.org/draft/2020-12/schema"

_FLOAT: dict[str, Any] = {"type": ["number", "null"]}


def class_schema(meta: ClassMeta) -> dict[str, Any]:
    """The schema of ``meta``'s state messages: an object of (some of) its properties."""
    defs: dict[str, Any] = {}
    properties = {p.stl_name: _type(p.type, defs) for p in meta.all_properties}
    return _document(meta.qualified_name, properties, (), defs)


def event_schema(meta: ClassMeta, event: EventMeta) -> dict[str, Any]:
    """The schema of one event's messages: an object of its arguments, all present."""
    defs: dict[str, Any] = {}
    return _args_document(f"{meta.qualified_name}.{event.stl_name}", event.args, defs)


def _args_document(title: str, args: tuple[ArgMeta, ...], defs: dict[str, Any]) -> dict[str, Any]:
    properties = {a.stl_name: _type(a.type, defs) for a in args}
    return _document(title, properties, tuple(properties), defs)


def _document(
    title: str, properties: dict[str, Any], required: tuple[str, ...], defs: dict[str, Any]
) -> dict[str, Any]:
    document: dict[str, Any] = {
        "$schema": DIALECT,
        "title": title,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        document["required"] = list(required)
    if defs:
        document["$defs"] = defs
    return document


def _native(meta: NativeMeta) -> dict[str, Any]:
    name = meta.qualified_name
    if name in ("f32", "f64"):
        return dict(_FLOAT)
    if name == "bool":
        return {"type": "boolean"}
    if name in ("string", "Duration", "TimeStamp"):
        # Durations and time stamps are written as the shell writes them: "20 ms".
        return {"type": "string"}
    if meta.signed:
        return {
            "type": "integer",
            "minimum": -(2 ** (meta.bits - 1)),
            "maximum": 2 ** (meta.bits - 1) - 1,
        }
    return {"type": "integer", "minimum": 0, "maximum": 2**meta.bits - 1}


def _type(meta: TypeMeta, defs: dict[str, Any]) -> dict[str, Any]:
    if isinstance(meta, NativeMeta):
        return _native(meta)
    if isinstance(meta, AliasMeta):
        return _type(meta.target, defs)
    if isinstance(meta, QuantityMeta):
        schema = _type(meta.value_type, defs)
        if meta.minimum is not None:
            schema["minimum"] = meta.minimum
        if meta.maximum is not None:
            schema["maximum"] = meta.maximum
        return schema
    if isinstance(meta, OptionalMeta):
        return {"anyOf": [_type(meta.target, defs), {"type": "null"}]}
    if isinstance(meta, SequenceMeta | ArrayMeta):
        element = {"type": "integer", "minimum": 0, "maximum": 255}
        schema = {"type": "array", "items": element if meta.is_bytes else _type(meta.element, defs)}
        if isinstance(meta, ArrayMeta):
            schema.update(minItems=meta.size, maxItems=meta.size)
        elif meta.max_size is not None:
            schema["maxItems"] = meta.max_size
        return schema
    return _named(meta, defs)


def _named(meta: TypeMeta, defs: dict[str, Any]) -> dict[str, Any]:
    """Structs, enums and variants: defined once under ``$defs``, referred to by name."""
    name = meta.qualified_name
    ref = {"$ref": f"#/$defs/{name}"}
    if name in defs:
        return ref
    defs[name] = {}  # claimed first: a type that refers to itself stops here
    if isinstance(meta, EnumMeta):
        defs[name] = {"enum": [e.stl_name for e in meta.enumerators]}
    elif isinstance(meta, StructMeta):
        # As values.to_config writes a struct: its fields, inherited ones included.
        fields = meta.fields
        properties = {f.stl_name: _type(f.type, defs) for f in fields}
        required = [f.stl_name for f in fields if not isinstance(f.type, OptionalMeta)]
        defs[name] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
    elif isinstance(meta, VariantMeta):
        defs[name] = {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"type": {"const": a.tag}, "value": _type(a.type, defs)},
                    "required": ["type", "value"],
                    "additionalProperties": False,
                }
                for a in meta.alternatives
            ]
        }
    else:
        raise TypeError(f"no JSON Schema for {meta!r}")
    return ref
