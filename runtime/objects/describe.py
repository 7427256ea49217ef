"""Type descriptions: a class's metadata as bytes, and back (runtime.md §8.1 item 7).

A process that receives an object of a class it does not import builds the class's metadata
from the description its producer sends with the object's first publication, and gets a
**dynamic proxy**: an untyped remote proxy driven by that metadata, whose values decode into
stand-in classes (frozen dataclasses for structs, ``enum.Enum`` for enums, a tag/value pair
for variants). It is what lets the shell and the recorder show any object. The description is
JSON: types are referred to by qualified name and listed once each.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
from collections.abc import Callable
from typing import Any

from sengen.runtime.errors import SengenError
from sengen.runtime.objects.meta import (
    NATIVES,
    AliasMeta,
    AlternativeMeta,
    ArgMeta,
    ArrayMeta,
    Category,
    ClassMeta,
    EnumeratorMeta,
    EnumMeta,
    EventMeta,
    FieldMeta,
    MethodMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    Transport,
    TypeMeta,
    UnitMeta,
    VariantMeta,
)
from sengen.runtime.objects.objects import Object
from sengen.runtime.objects.proxies import RemoteProxy

DYNAMIC_SCOPE = "<remote>"


class DescriptionError(SengenError, ValueError):
    """A description that cannot be read."""


# -- writing ----------------------------------------------------------------------------------


@functools.cache
def describe(meta: ClassMeta) -> bytes:
    """The description of ``meta``, its parents and every type they use."""
    types: dict[str, Any] = {}
    classes: list[dict[str, Any]] = []
    cls: ClassMeta | None = meta
    while cls is not None:
        classes.append(_class(cls, types))
        cls = cls.parent
    document = {"class": meta.qualified_name, "classes": classes, "types": types}
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _class(meta: ClassMeta, types: dict[str, Any]) -> dict[str, Any]:
    def ref(t: TypeMeta) -> str:
        return _type(t, types)

    def args(items: tuple[ArgMeta, ...]) -> list[list[Any]]:
        return [[a.stl_name, a.py_name, ref(a.type), a.description] for a in items]

    return {
        "name": meta.qualified_name,
        "description": meta.description,
        "source": meta.source,
        "parent": meta.parent.qualified_name if meta.parent is not None else None,
        "abstract": meta.is_abstract,
        "instantiable": meta.instantiable,
        "hash": meta.type_hash,
        "properties": [
            [
                p.stl_name,
                p.py_name,
                ref(p.type),
                p.category.value,
                p.transport.value,
                p.checked,
                list(p.tags),
                p.description,
            ]
            for p in meta.properties
        ],
        "methods": [
            [
                m.stl_name,
                m.py_name,
                args(m.args),
                ref(m.return_type) if m.return_type is not None else None,
                m.constant,
                m.transport.value,
                m.deferred,
                m.local,
                m.description,
            ]
            for m in meta.methods
        ],
        "events": [
            [e.stl_name, e.py_name, args(e.args), e.transport.value, e.description]
            for e in meta.events
        ],
        "constructor": args(meta.constructor),
    }


def _type(meta: TypeMeta, types: dict[str, Any]) -> str:
    """Lists ``meta`` (and what it refers to) in ``types``; its reference."""
    name = meta.qualified_name
    if isinstance(meta, NativeMeta) or name in types:
        return name
    types[name] = entry = {"description": meta.description, "hash": meta.type_hash}
    if isinstance(meta, EnumMeta):
        entry["kind"] = "enum"
        entry["storage"] = meta.storage.qualified_name
        entry["enumerators"] = [
            [e.stl_name, e.py_name, e.key, e.description] for e in meta.enumerators
        ]
    elif isinstance(meta, StructMeta):
        entry["kind"] = "struct"
        entry["parent"] = _type(meta.parent, types) if meta.parent is not None else None
        entry["fields"] = [
            [f.stl_name, f.py_name, _type(f.type, types), f.description] for f in meta.fields
        ]
    elif isinstance(meta, VariantMeta):
        entry["kind"] = "variant"
        entry["alternatives"] = [
            [a.tag, a.key, _type(a.type, types), a.description] for a in meta.alternatives
        ]
    elif isinstance(meta, SequenceMeta):
        entry.update(kind="sequence", element=_type(meta.element, types))
        entry.update(max_size=meta.max_size, is_bytes=meta.is_bytes)
    elif isinstance(meta, ArrayMeta):
        entry.update(kind="array", element=_type(meta.element, types))
        entry.update(size=meta.size, is_bytes=meta.is_bytes)
    elif isinstance(meta, OptionalMeta):
        entry.update(kind="optional", target=_type(meta.target, types))
    elif isinstance(meta, QuantityMeta):
        unit = meta.unit
        entry.update(kind="quantity", value_type=meta.value_type.qualified_name)
        entry["unit"] = (
            None if unit is None else [unit.abbreviation, unit.name, unit.category, unit.factor]
        )
        entry.update(minimum=meta.minimum, maximum=meta.maximum)
    elif isinstance(meta, AliasMeta):
        entry.update(kind="alias", target=_type(meta.target, types))
    else:
        raise TypeError(f"cannot describe {meta!r}")
    return name


# -- reading ----------------------------------------------------------------------------------


class DynamicVariant:
    """A variant value of a class this process does not import: its tag and value."""

    __slots__ = ("tag", "value")

    def __init__(self, tag: str, value: Any) -> None:
        self.tag = tag
        self.value = value

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, DynamicVariant)
            and self.tag == other.tag
            and self.value == other.value
        )

    def __hash__(self) -> int:
        return hash((self.tag, self.value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tag!r}, {self.value!r})"


class DynamicObject(Object):
    """The interface of a dynamic proxy: members by STL name, since no class was generated."""

    __slots__ = ()

    def call(
        self,
        method: str,
        *args: Any,
        on_result: Callable[[Any], None] | None = None,
    ) -> Any:
        """Call ``method`` (its STL name) with ``args``; the call handle."""
        if self.META.method(method) is None:
            raise AttributeError(f"class '{self.META.qualified_name}' has no method '{method}'")
        return self._call_(method, args, on_result, None)

    def get(self, prop: str) -> Any:
        """The current value of property ``prop`` (its STL name)."""
        found = self.META.property(prop)
        if found is None:
            raise AttributeError(f"class '{self.META.qualified_name}' has no property '{prop}'")
        return getattr(self, found.py_name)

    def set_next(self, prop: str, value: Any) -> Any:
        """Ask the owner to set writable property ``prop``; the call handle."""
        if self.META.property(prop) is None:
            raise AttributeError(f"class '{self.META.qualified_name}' has no property '{prop}'")
        return self._setter_call_(prop, value)

    def on_changed(self, prop: str, callback: Callable[[Any], None]) -> Any:
        found = self.META.property(prop)
        if found is None:
            raise AttributeError(f"class '{self.META.qualified_name}' has no property '{prop}'")
        return self._on_changed_(found.py_name, callback)


def read(data: bytes) -> ClassMeta:
    """The class a description describes, with stand-in value classes; scope ``<remote>``."""
    try:
        document = json.loads(data)
        return _Reader(document).klass(document["class"])
    except DescriptionError:
        raise
    except (ValueError, KeyError, TypeError, IndexError) as error:
        raise DescriptionError(f"invalid type description: {error!r}") from None


@functools.cache
def dynamic_proxy(meta: ClassMeta) -> type[RemoteProxy]:
    """The proxy class of a described class (one per class and hash)."""
    names = tuple(p.py_name for p in meta.all_properties)
    namespace = {"__slots__": names, "META": meta, "_STL_VIEW": True}
    name = f"{meta.stl_name}DynamicProxy"
    proxy: type[RemoteProxy] = type(name, (RemoteProxy, DynamicObject), namespace)
    return proxy


class _Reader:
    def __init__(self, document: dict[str, Any]) -> None:
        self._classes = {c["name"]: c for c in document["classes"]}
        self._types: dict[str, Any] = document["types"]
        self._built: dict[str, TypeMeta] = {}

    def klass(self, name: str) -> ClassMeta:
        c = self._classes[name]
        parent = self.klass(c["parent"]) if c["parent"] is not None else None

        def args(items: list[list[Any]]) -> tuple[ArgMeta, ...]:
            return tuple(ArgMeta(s, _py(p), self.type(t), d) for s, p, t, d in items)

        return ClassMeta(
            name,
            str(c["description"]),
            str(c["source"]),
            parent,
            bool(c["abstract"]),
            bool(c["instantiable"]),
            properties=tuple(
                PropertyMeta(
                    s, _py(p), self.type(t), Category(cat), Transport(tr), bool(ck), tuple(tags), d
                )
                for s, p, t, cat, tr, ck, tags, d in c["properties"]
            ),
            methods=tuple(
                MethodMeta(
                    s,
                    _py(p),
                    args(a),
                    self.type(r) if r is not None else None,
                    bool(k),
                    Transport(tr),
                    bool(df),
                    bool(lc),
                    d,
                )
                for s, p, a, r, k, tr, df, lc, d in c["methods"]
            ),
            events=tuple(
                EventMeta(s, _py(p), args(a), Transport(tr), d) for s, p, a, tr, d in c["events"]
            ),
            constructor=args(c["constructor"]),
            type_hash=int(c["hash"]),
            scope=DYNAMIC_SCOPE,
        )

    def type(self, name: str) -> TypeMeta:
        native = NATIVES.get(name)
        if native is not None:
            return native
        built = self._built.get(name)
        if built is not None:
            return built
        t = self._types[name]
        description, type_hash, kind = str(t["description"]), int(t["hash"]), t["kind"]
        meta: TypeMeta
        if kind == "enum":
            members = [(_py(p), int(k)) for _, p, k, _ in t["enumerators"]]
            py_enum = enum.Enum(_class_name(name), members)  # type: ignore[misc]
            enumerators = tuple(
                EnumeratorMeta(s, _py(p), int(k), d) for s, p, k, d in t["enumerators"]
            )
            meta = EnumMeta(
                name, description, type_hash, NATIVES[t["storage"]], enumerators, py_enum
            )
        elif kind == "struct":
            parent = self.type(t["parent"]) if t["parent"] is not None else None
            fields = tuple(FieldMeta(s, _py(p), self.type(ft), d) for s, p, ft, d in t["fields"])
            py_struct = dataclasses.make_dataclass(
                _class_name(name), [f.py_name for f in fields], frozen=True, slots=True
            )
            assert parent is None or isinstance(parent, StructMeta)
            meta = StructMeta(name, description, type_hash, parent, fields, py_struct)
        elif kind == "variant":
            alternatives = tuple(
                AlternativeMeta(tag, int(key), self.type(at), d)
                for tag, key, at, d in t["alternatives"]
            )
            py_variant = type(_class_name(name), (DynamicVariant,), {"__slots__": ()})
            meta = VariantMeta(name, description, type_hash, alternatives, py_variant)
        elif kind == "sequence":
            meta = SequenceMeta(
                name,
                description,
                type_hash,
                self.type(t["element"]),
                t["max_size"],
                bool(t["is_bytes"]),
            )
        elif kind == "array":
            meta = ArrayMeta(
                name,
                description,
                type_hash,
                self.type(t["element"]),
                int(t["size"]),
                bool(t["is_bytes"]),
            )
        elif kind == "optional":
            meta = OptionalMeta(name, description, type_hash, self.type(t["target"]))
        elif kind == "quantity":
            unit = t["unit"]
            meta = QuantityMeta(
                name,
                description,
                type_hash,
                NATIVES[t["value_type"]],
                (
                    None
                    if unit is None
                    else UnitMeta(str(unit[0]), str(unit[1]), str(unit[2]), float(unit[3]))
                ),
                t["minimum"],
                t["maximum"],
            )
        elif kind == "alias":
            meta = AliasMeta(name, description, type_hash, self.type(t["target"]))
        else:
            raise DescriptionError(f"unknown type kind {kind!r} of '{name}'")
        self._built[name] = meta
        return meta


def _py(name: str) -> str:
    """A Python name from a description: an identifier, or the description is refused."""
    if not isinstance(name, str) or not name.isidentifier():
        raise DescriptionError(f"invalid member name {name!r}")
    return name


def _class_name(qualified: str) -> str:
    stem = qualified.rpartition(".")[2]
    return stem if stem.isidentifier() else "Value"
