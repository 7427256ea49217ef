"""The structural type hash (codegen.md §3.10): computed at generation time, stored in the
metadata, carried by publications so that two processes agree on a type before exchanging it.

Its input is a canonical text of the type and, recursively, of every type it refers to: names,
kinds, fields, enumerators, alternatives, bounds, units, class members and their types, in
declaration order. Descriptions and tags never enter it, so editing a comment keeps two builds
compatible. The digest is BLAKE2b with 8 bytes, read big-endian: the same STL gives the same hash
in every process and on every machine.
"""

from __future__ import annotations

import hashlib
from typing import Final

from sengen.stl import model as m

# A referenced type whose canonical text is longer enters its referrer's text by its digest:
# texts that embed every ancestor grew with the depth of inheritance, so 5,000 levels built
# gigabytes. Every real type's text is far shorter, so the hashes of real types do not change.
MAX_EMBEDDED: Final = 16 * 1024


class TypeHasher:
    """Hashes of one program's types, each canonical text built once."""

    def __init__(self) -> None:
        self._texts: dict[int, str] = {}

    def hash(self, t: m.Type) -> int:
        digest = hashlib.blake2b(self._full(t).encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big")

    def _full(self, t: m.Type) -> str:
        key = id(t)
        found = self._texts.get(key)
        if found is None:
            found = self._texts[key] = self._describe(t)
        return found

    def text(self, t: m.Type) -> str:
        """The canonical text of ``t`` as it enters the text of a type referring to it."""
        full = self._full(t)
        if len(full) <= MAX_EMBEDDED:
            return full
        digest = hashlib.blake2b(full.encode(), digest_size=8).hexdigest()
        return f"#{digest}"

    def _ref(self, t: m.Type | None) -> str:
        return "void" if t is None else self.text(t)

    def _describe(self, t: m.Type) -> str:
        if isinstance(t, m.NativeType | m.VoidType):
            return t.name
        assert isinstance(t, m.UserType)
        head = f"{type(t).__name__}:{t.qualified_name}"
        return f"{head}{{{self._body(t)}}}"

    def _body(self, t: m.UserType) -> str:
        if isinstance(t, m.StructType):
            parent = self.text(t.parent) if t.parent is not None else "-"
            fields = ",".join(f"{f.name}:{self.text(f.type)}" for f in t.fields)
            return f"parent={parent};{fields}"
        if isinstance(t, m.EnumType):
            items = ",".join(f"{e.name}={e.key}" for e in t.enumerators)
            return f"storage={t.storage.name};{items}"
        if isinstance(t, m.VariantType):
            return ",".join(f"{a.key}:{self.text(a.type)}" for a in t.alternatives)
        if isinstance(t, m.SequenceType):
            return f"{self.text(t.element)};max={t.max_size}"
        if isinstance(t, m.ArrayType):
            return f"{self.text(t.element)};size={t.size}"
        if isinstance(t, m.QuantityType):
            return f"{t.value_type.name};unit={t.unit_name};min={t.minimum!r};max={t.maximum!r}"
        if isinstance(t, m.AliasType | m.OptionalType):
            return self.text(t.target)
        assert isinstance(t, m.ClassType)
        return self._class(t)

    def _class(self, cls: m.ClassType) -> str:
        parts = [f"parent={self.text(cls.parent) if cls.parent is not None else '-'}"]
        parts += [f"var {p.name}:{self.text(p.type)}:{p.category.value}" for p in cls.properties]
        for method in cls.methods:
            args = ",".join(f"{a.name}:{self.text(a.type)}" for a in method.arguments)
            parts.append(f"fn {method.name}({args})->{self._ref(method.return_type)}")
        for event in cls.events:
            args = ",".join(f"{a.name}:{self.text(a.type)}" for a in event.arguments)
            parts.append(f"event {event.name}({args})")
        return ";".join(parts)
