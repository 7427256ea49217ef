"""Values as JSON: the configuration form (:func:`values.to_config`: enums by name, Durations as
``"20 ms"``, structs as maps) with each f32 as the float of its shortest decimal.

One form for every writer of values as JSON (the shell, the web component's API), so that a
value printed by one is read back by the others.
"""

from __future__ import annotations

import struct
from typing import Any

from sengen.runtime.objects import values
from sengen.runtime.objects.meta import (
    ArrayMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)


def json_form(meta: TypeMeta, value: Any) -> Any:
    """``value`` of type ``meta`` as a JSON-ready tree (dicts, lists, str, numbers, None)."""
    return _shortest(meta, values.to_config(meta, value))


def _shortest(meta: TypeMeta, form: Any) -> Any:
    """``form`` (a configuration form of ``meta``) with each f32 as the float of its shortest
    decimal: an f32 that crossed the wire is a double such as 0.10000000149011612, which is
    written as the 0.1 it was set to. f64 needs nothing: json writes the shortest repr."""
    meta = resolve_alias(meta)
    if isinstance(meta, QuantityMeta):
        meta = meta.value_type
    if isinstance(meta, NativeMeta):
        return _f32(form) if meta.qualified_name == "f32" and type(form) is float else form
    if isinstance(meta, StructMeta):
        return {f.stl_name: _shortest(f.type, form[f.stl_name]) for f in meta.fields}
    if isinstance(meta, VariantMeta):
        alternative = meta.alternative(form["type"])
        assert alternative is not None
        return {"type": form["type"], "value": _shortest(alternative.type, form["value"])}
    if isinstance(meta, SequenceMeta | ArrayMeta) and not meta.is_bytes:
        return [_shortest(meta.element, item) for item in form]
    if isinstance(meta, OptionalMeta) and form is not None:
        return _shortest(meta.target, form)
    return form


def _f32(value: float) -> float:
    """The float of the fewest significant digits that is the same f32 as ``value``."""
    try:
        single = struct.pack("<f", value)
    except OverflowError:  # not an f32 after all: written as it is
        return value
    for digits in range(1, 10):  # 9 digits always round-trip an f32
        shorter = float(f"{value:.{digits}g}")
        if struct.pack("<f", shorter) == single:
            return shorter
    return value
