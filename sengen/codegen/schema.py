"""The JSON Schema (draft-07) of a configuration file (codegen.md §8.2), for editors.

The ``kernel:``, ``load:`` and ``build:`` parts come from the runtime's pydantic models, the same
ones ``sengen run`` validates with; the objects' properties come from the STL classes of the
project. ``$defs`` are keyed by qualified STL name, sorted, so the output is deterministic.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from sengen.codegen.naming import variant_tags
from sengen.diagnostics import Diagnostic, Severity
from sengen.errors import InputError
from sengen.runtime.kernel.config.models import BuildEntry, KernelConfig, LoadEntry
from sengen.stl import model as m

DRAFT = "http://json-schema.org/draft-07/schema#"
# A struct or class schema lists its inherited keys too (draft-07 has no other way with
# additionalProperties: false), so the schema grows as the square of an inheritance chain's
# depth: 5,000 levels would take gigabytes. Past this many listed keys it is refused instead.
MAX_LISTED = 1_000_000
DURATION_PATTERN = r"^-?[0-9]+(\.[0-9]+)? ?(ns|us|ms|s|min|h)$"
_FIXED_KEYS = {
    "name": {"type": "string", "minLength": 1},
    "class": {"type": "string"},
    "bus": {"type": "string"},
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


class _Types:
    """Schemas of STL types, each once, under its qualified name."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self.listed = 0

    def _list(self, t: m.UserType, count: int) -> None:
        self.listed += count
        if self.listed > MAX_LISTED:
            where = t.location
            raise InputError(
                [
                    Diagnostic(
                        Severity.ERROR,
                        where.file,
                        where.line,
                        where.column,
                        f"the configuration schema would list more than {MAX_LISTED:,} keys"
                        f" (inheritance too deep, here at '{t.qualified_name}')",
                    )
                ]
            )

    def of(self, t: m.Type) -> dict[str, Any]:
        if isinstance(t, m.NativeType):
            return _native(t)
        assert isinstance(t, m.UserType)
        name = t.qualified_name
        if name not in self.defs:
            self.defs[name] = {}  # reserve: recursion through the type's members
            self.defs[name] = self._declare(t)
        return _ref(name)

    def _declare(self, t: m.UserType) -> dict[str, Any]:
        described: dict[str, Any] = {"description": t.description} if t.description else {}
        if isinstance(t, m.EnumType):
            return {**described, "enum": [e.name for e in t.enumerators]}
        if isinstance(t, m.StructType):
            fields = t.all_fields
            self._list(t, len(fields))
            schema: dict[str, Any] = {
                **described,
                "type": "object",
                "properties": {f.name: self._field(f.type, f.description) for f in fields},
                "additionalProperties": False,
            }
            required = [
                f.name for f in fields if not isinstance(m.unaliased(f.type), m.OptionalType)
            ]
            if required:
                schema["required"] = required
            return schema
        if isinstance(t, m.VariantType):
            # Configuration names an alternative by its tag or its qualified type name.
            names = [
                list(dict.fromkeys((tag, a.type.qualified_name)))
                for tag, a in zip(variant_tags(t), t.alternatives, strict=True)
            ]
            branches = [
                {
                    "if": {"properties": {"type": {"enum": spellings}}},
                    "then": {"properties": {"value": self.of(a.type)}},
                }
                for spellings, a in zip(names, t.alternatives, strict=True)
            ]
            accepted = list(dict.fromkeys(n for spellings in names for n in spellings))
            return {
                **described,
                "type": "object",
                "properties": {"type": {"enum": accepted}, "value": {}},
                "required": ["type"],
                "additionalProperties": False,
                "allOf": branches,
            }
        if isinstance(t, m.SequenceType):
            schema = {**described, "type": "array", "items": self.of(t.element)}
            if t.max_size is not None:
                schema["maxItems"] = t.max_size
            return schema
        if isinstance(t, m.ArrayType):
            items = self.of(t.element)
            return {
                **described,
                "type": "array",
                "items": items,
                "minItems": t.size,
                "maxItems": t.size,
            }
        if isinstance(t, m.OptionalType):
            return {**described, "oneOf": [{"type": "null"}, self.of(t.target)]}
        if isinstance(t, m.QuantityType):
            schema = {**described, **_native(t.value_type)}
            if t.minimum is not None:
                schema["minimum"] = _number(t, t.minimum)
            if t.maximum is not None:
                schema["maximum"] = _number(t, t.maximum)
            return schema
        if isinstance(t, m.AliasType):
            return {**described, **self.of(t.target)}
        raise TypeError(f"no schema for {t.qualified_name}")

    def _field(self, t: m.Type, description: str) -> dict[str, Any]:
        schema = self.of(t)
        return {**schema, "description": description} if description else schema

    def object_class(self, cls: m.ClassType) -> dict[str, Any]:
        """The keys of an object entry of ``cls``: its configurable properties, the [static]
        ones required, plus ``name``, ``class`` and ``bus``."""
        props = [p for p in cls.all_properties if p.category is not m.PropertyCategory.STATIC_RO]
        self._list(cls, len(props))
        properties = dict(_FIXED_KEYS)
        properties.update({p.name: self._field(p.type, p.description) for p in props})
        static = [p.name for p in props if p.category is m.PropertyCategory.STATIC_RW]
        schema: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": ["name", "class", *static],
            "additionalProperties": False,
        }
        if cls.description:
            schema["description"] = cls.description
        return schema


def _number(t: m.QuantityType, value: float) -> int | float:
    integral = t.value_type.kind is m.NativeKind.INTEGER and float(value).is_integer()
    return int(value) if integral else value


def _native(t: m.NativeType) -> dict[str, Any]:
    if t.kind is m.NativeKind.INTEGER:
        low, high = (
            (-(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1) if t.signed else (0, 2**t.bits - 1)
        )
        return {"type": "integer", "minimum": low, "maximum": high}
    if t.kind is m.NativeKind.FLOAT:
        return {"type": "number"}
    if t.kind is m.NativeKind.BOOL:
        return {"type": "boolean"}
    if t.kind is m.NativeKind.STRING:
        return {"type": "string"}
    if t.name == "Duration":
        return {"type": "string", "pattern": DURATION_PATTERN}
    return {"type": "string", "format": "date-time"}


def _model(model: type[BaseModel], defs: dict[str, Any]) -> dict[str, Any]:
    """A pydantic model's schema with its nested models moved into ``defs``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # defaults such as Duration are not JSON values
        schema = model.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
    for name, nested in schema.pop("$defs", {}).items():
        defs.setdefault(name, nested)
    return schema


def config_schema(
    program: m.Program | None, schema_classes: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The schema of a whole configuration file. ``schema_classes`` maps implementation class
    names (YAML ``class:``) to the STL classes they implement."""
    types = _Types()
    defs: dict[str, Any] = {}
    kernel = _model(KernelConfig, defs)
    load = _model(LoadEntry, defs)
    build = _model(BuildEntry, defs)
    classes: dict[str, m.ClassType] = {}
    if program is not None:
        for t in program.types:
            if not isinstance(t, m.ClassType):
                types.of(t)  # every value type reachable from the inputs
            elif t.instantiable:
                classes[t.qualified_name] = t
        for implementation, stl in (schema_classes or {}).items():
            found = program.find(stl)
            if isinstance(found, m.ClassType):
                classes[implementation] = found
    branches = []
    for name in sorted(classes):
        cls = classes[name]
        key = cls.qualified_name
        types.defs.setdefault(key, types.object_class(cls))
        branches.append({"if": {"properties": {"class": {"const": name}}}, "then": _ref(key)})
    object_entry: dict[str, Any] = {
        "type": "object",
        "properties": {**_FIXED_KEYS, "class": {"enum": sorted(classes)}},
        "required": ["name", "class"],
    }
    if branches:
        object_entry["allOf"] = branches
    build["properties"]["objects"] = {"type": "array", "minItems": 1, "items": object_entry}
    defs.pop("ObjectEntry", None)
    includes = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
    every = {**defs, **types.defs}
    return {
        "$schema": DRAFT,
        "title": "sengen configuration",
        "type": "object",
        "properties": {
            "include": includes,
            "kernel": kernel,
            "load": {"type": "array", "items": load},
            "build": {"type": "array", "items": build},
        },
        "$defs": {name: every[name] for name in sorted(every)},
    }


def render_schema(program: m.Program | None, schema_classes: Mapping[str, str] | None) -> str:
    """The schema as JSON text: sorted keys, two-space indent, a final newline."""
    return json.dumps(config_schema(program, schema_classes), indent=2, sort_keys=True) + "\n"
