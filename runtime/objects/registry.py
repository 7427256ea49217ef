"""The type registry: generated types and classes by qualified STL name, within the scope of
their generated root package (codegen.md §3.10).

Importing a module never fails because of a name registered in another scope. Lookups name the
scopes to search (a configuration's ``imports:`` plus sengen's own).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

from sengen.runtime.errors import RegistryError
from sengen.runtime.objects import declare, objects
from sengen.runtime.objects.meta import ClassMeta, TypeMeta

if TYPE_CHECKING:
    from sengen.runtime.objects.objects import NativeObject, Object
    from sengen.runtime.objects.proxies import LocalProxy, RemoteProxy

OWN_SCOPE = "sengen.runtime"


# Plain classes rather than dataclasses: every generated module imports this one, and a
# dataclass costs about a millisecond to define.


class ClassEntry:
    """A registered class: its metadata, its module and the classes generated for it."""

    __slots__ = ("base", "interface", "local_proxy", "meta", "module", "remote_proxy")

    def __init__(
        self,
        meta: ClassMeta,
        module: str,
        interface: type[Object],
        base: type[NativeObject],
        local_proxy: type[LocalProxy],
        remote_proxy: type[RemoteProxy],
    ) -> None:
        self.meta = meta
        self.module = module
        self.interface = interface
        self.base = base
        self.local_proxy = local_proxy
        self.remote_proxy = remote_proxy

    def __repr__(self) -> str:
        return f"<ClassEntry {self.meta.qualified_name} from {self.module}>"


class _TypeEntry:
    __slots__ = ("meta", "module")

    def __init__(self, meta: TypeMeta, module: str) -> None:
        self.meta = meta
        self.module = module


_E = TypeVar("_E", ClassEntry, _TypeEntry)


class Registry:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[tuple[str, str], _TypeEntry] = {}
        self._classes: dict[tuple[str, str], ClassEntry] = {}

    # -- registration at import -------------------------------------------------------------------

    def _check(self, scope: str, qualified: str, type_hash: int, module: str) -> bool:
        """Whether a registration is new; the same hash again is ignored, another is an error."""
        key = (scope, qualified)
        existing = self._types.get(key) or self._classes.get(key)
        if existing is None:
            return True
        if existing.meta.type_hash == type_hash:
            return False
        raise RegistryError(
            f"type '{qualified}' registered by '{module}' conflicts with the one registered by"
            f" '{existing.module}'"
        )

    def register_type(self, scope: str, module: str, meta: TypeMeta) -> None:
        with self._lock:
            if self._check(scope, meta.qualified_name, meta.type_hash, module):
                self._types[(scope, meta.qualified_name)] = _TypeEntry(meta, module)

    def register_class(
        self,
        module: str,
        interface: type[Object],
        base: type[NativeObject],
        local_proxy: type[LocalProxy],
        remote_proxy: type[RemoteProxy],
    ) -> None:
        meta = interface.META
        with self._lock:
            if self._check(meta.scope, meta.qualified_name, meta.type_hash, module):
                entry = ClassEntry(meta, module, interface, base, local_proxy, remote_proxy)
                self._classes[(meta.scope, meta.qualified_name)] = entry

    def scopes(self) -> list[str]:
        """Every scope that registered something, sorted."""
        with self._lock:
            return sorted({s for s, _ in self._types} | {s for s, _ in self._classes})

    def implementations(self) -> list[type[NativeObject]]:
        """Every implementation class (a user class subclassing a generated base, registered as
        ``<stl package>.<PythonClassName>`` when defined), by that name then definition order."""
        found = objects.implementations()
        return [c for name in sorted(found) for c in found[name]]

    def entries(self, scope: str) -> tuple[list[TypeMeta], list[ClassEntry]]:
        """Every type and class registered in ``scope``, sorted by qualified name."""
        with self._lock:
            types = [e.meta for (s, _), e in sorted(self._types.items()) if s == scope]
            classes = [e for (s, _), e in sorted(self._classes.items()) if s == scope]
        return types, classes

    # -- lookups ----------------------------------------------------------------------------------

    def proxies(self, meta: ClassMeta) -> tuple[type[LocalProxy], type[RemoteProxy]]:
        entry = self._classes[(meta.scope, meta.qualified_name)]
        return entry.local_proxy, entry.remote_proxy

    def find_type(self, qualified: str, scopes: Iterable[str]) -> TypeMeta | None:
        found = self._unique(qualified, scopes, self._types, "type name")
        return found.meta if found is not None else None

    def find_stl_class(self, qualified: str, scopes: Iterable[str]) -> ClassEntry | None:
        return self._unique(qualified, scopes, self._classes, "class name")

    def find_implementation(self, name: str, scopes: Iterable[str]) -> type[NativeObject] | None:
        wanted = set(scopes)
        found = [c for c in objects.implementations().get(name, ()) if c.META.scope in wanted]
        if len(found) > 1:
            names = ", ".join(sorted(f"{c.__module__}.{c.__qualname__}" for c in found))
            raise RegistryError(f"class name '{name}' is ambiguous: {names}")
        return found[0] if found else None

    def knows_class(self, qualified: str) -> bool:
        """Whether any scope registered a class of that qualified name."""
        with self._lock:
            return any(name == qualified for _, name in self._classes)

    def by_hash(self, qualified: str, type_hash: int) -> ClassEntry | None:
        """The local class matching a remote publication's name and structural hash."""
        for (_, name), entry in sorted(self._classes.items()):
            if name == qualified and entry.meta.type_hash == type_hash:
                return entry
        return None

    def _unique(
        self, qualified: str, scopes: Iterable[str], table: dict[tuple[str, str], _E], what: str
    ) -> _E | None:
        hits = [
            (s, table[(s, qualified)]) for s in dict.fromkeys(scopes) if (s, qualified) in table
        ]
        if len({e.meta.type_hash for _, e in hits}) > 1:
            names = ", ".join(s for s, _ in hits)
            raise RegistryError(f"{what} '{qualified}' is ambiguous: {names}")
        return hits[0][1] if hits else None


registry = Registry()
declare.registrations.add_type = registry.register_type
declare.registrations.add_class = registry.register_class
