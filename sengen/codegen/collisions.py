"""The collision check of codegen.md §2.4: two STL origins that would produce one Python name
are an error naming both; sengen never invents suffixes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from sengen.codegen.naming import python_name, snake_case
from sengen.codegen.pyview import Layout
from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.stl import model as m

# Names every object class gets from the runtime (codegen.md §2.3), by origin.
_RUNTIME_NAMES = (
    "name local_name id owner bus last_commit_time update registered unregistered pre_drain"
    " pre_commit from_config events META"
).split()
_Origin = tuple[str, m.Location | None]


_RUNTIME: Final[list[tuple[str, _Origin]]] = [(n, ("runtime member", None)) for n in _RUNTIME_NAMES]
_Pair = tuple[str, _Origin, _Origin]  # a name, its first origin, a later one


def _own_members(c: m.ClassType) -> list[tuple[str, _Origin]]:
    """The attribute names the class's own members add to its generated views."""
    names: list[tuple[str, _Origin]] = []
    for prop in c.properties:
        stem = snake_case(prop.name)
        origin = (f"property '{prop.name}'", prop.location)
        derived = [python_name(stem, "member")]
        if not prop.category.is_static:
            derived += [f"on_{stem}_changed", f"get_next_{stem}", f"set_next_{stem}"]
        elif prop.category is m.PropertyCategory.STATIC_RO:
            derived.append(f"set_{stem}")
        if prop.checked:
            derived.append(f"{stem}_accepts_set")
        names.extend((n, origin) for n in derived)
    for method in c.methods:
        stem = snake_case(method.name)
        origin = (f"method '{method.name}'", method.location)
        names.extend((n, origin) for n in (python_name(stem, "member"), f"{stem}_impl"))
    return names


def _own_events(c: m.ClassType) -> list[tuple[str, _Origin]]:
    return [
        (python_name(snake_case(e.name), "event"), (f"event '{e.name}'", e.location))
        for e in c.events
    ]


class _Lineages:
    """The collisions of every class's lineage (its ancestors' names, root first, then its
    own), each class's built on its parent's: walking every ancestor of every class made deep
    inheritance quadratic. A class's pairs are its parent's plus those its own names add."""

    def __init__(
        self,
        own: Callable[[m.ClassType], list[tuple[str, _Origin]]],
        base: list[tuple[str, _Origin]],
    ) -> None:
        self.own = own
        self.base = dict(reversed(base))  # the first origin of each name
        self.declared: dict[str, list[tuple[m.ClassType, _Origin]]] = {}
        self.depth: dict[m.ClassType, int] = {}
        self.pairs: dict[m.ClassType, list[_Pair]] = {}

    def _first(self, name: str, parent: m.ClassType | None) -> _Origin | None:
        """The first origin of ``name`` in the lineage ending at ``parent``."""
        if name in self.base:
            return self.base[name]
        best: tuple[int, _Origin] | None = None
        for cls, origin in self.declared.get(name, ()):
            if parent is None or (cls is not parent and cls not in set(parent.ancestors())):
                continue
            if best is None or self.depth[cls] < best[0]:
                best = (self.depth[cls], origin)
        return None if best is None else best[1]

    def of(self, cls: m.ClassType) -> list[_Pair]:
        chain: list[m.ClassType] = []
        current: m.ClassType | None = cls
        while current is not None and current not in self.pairs:
            chain.append(current)
            current = current.parent
        for c in reversed(chain):
            parent = c.parent
            self.depth[c] = 0 if parent is None else self.depth[parent] + 1
            pairs = list(self.pairs[parent]) if parent is not None else []
            reported: set[tuple[_Origin, _Origin]] = set()
            seen: dict[str, _Origin] = {}
            own = self.own(c)
            for name, origin in own:
                first = seen.get(name) or self._first(name, parent)
                if first is None:
                    first = seen[name] = origin
                else:
                    seen.setdefault(name, first)
                # One error per pair of origins: their derived names collide too.
                if first is origin or first == origin or (first, origin) in reported:
                    continue
                reported.add((first, origin))
                pairs.append((name, first, origin))
            for name, origin in own:
                self.declared.setdefault(name, []).append((c, origin))
            self.pairs[c] = pairs
        return self.pairs[cls]


def _duplicates(names: Sequence[tuple[str, _Origin]], scope: str) -> list[Diagnostic]:
    seen: dict[str, _Origin] = {}
    reported: set[tuple[_Origin, _Origin]] = set()
    pairs: list[_Pair] = []
    for name, origin in names:
        first = seen.setdefault(name, origin)
        # One error per pair of origins: their derived names collide too, which adds nothing.
        if first is origin or first == origin or (first, origin) in reported:
            continue
        reported.add((first, origin))
        pairs.append((name, first, origin))
    return _render(pairs, scope)


def _render(pairs: Sequence[_Pair], scope: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for name, first, origin in pairs:
        what, location = origin
        first_what, first_location = first
        where = location or first_location
        text = (
            f"Python name '{name}' in {scope} is produced by {first_what}"
            f"{_at(first_location)} and {what}{_at(location)}"
        )
        notes = (
            (
                Note(
                    first_location.file,
                    first_location.line,
                    first_location.column,
                    f"{first_what} is declared here",
                ),
            )
            if first_location and location
            else ()
        )
        found.append(
            Diagnostic(
                Severity.ERROR,
                where.file if where else "",
                where.line if where else 0,
                where.column if where else 0,
                text,
                notes,
            )
        )
    return found


def _at(location: m.Location | None) -> str:
    return f" ({location.file}:{location.line}:{location.column})" if location else ""


def collision_errors(program: m.Program, layout: Layout) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    members, events = _Lineages(_own_members, _RUNTIME), _Lineages(_own_events, [])
    for stl_file in layout.generated:
        top: list[tuple[str, _Origin]] = []
        for t in stl_file.types:
            origin = (f"type '{t.qualified_name}'", t.location)
            top.append((t.name, origin))
            if isinstance(t, m.ClassType):
                for suffix in ("Events", "Base", "BaseEvents", "LocalProxy", "RemoteProxy"):
                    top.append((t.name + suffix, origin))
                found += _render(members.of(t), f"class '{t.qualified_name}'")
                found += _render(events.of(t), f"the events of class '{t.qualified_name}'")
        place = layout.files[stl_file.path]
        found += _duplicates(top, f"module '{'.'.join((*place.package, place.name))}'")
    found += _package_collisions(layout)
    return found


def _package_collisions(layout: Layout) -> list[Diagnostic]:
    """Re-exported names per package, and module paths compared case-insensitively."""
    found: list[Diagnostic] = []
    exported: dict[tuple[str, ...], list[tuple[str, _Origin]]] = {}
    paths: list[tuple[str, _Origin]] = []
    for stl_file in layout.generated:
        place = layout.files[stl_file.path]
        origin = (
            f"file '{stl_file.display}'",
            m.Location(str(stl_file.path), stl_file.display, 1, 1),
        )
        entries = exported.setdefault(place.package, [])
        # Two modules of one name are reported once, by the path check below.
        if all(name != place.name for name, _ in entries):
            entries.append((place.name, origin))
        for t in stl_file.types:
            entries.append((t.name, (f"type '{t.qualified_name}'", t.location)))
        paths.append((place.relative_file.lower(), origin))
    for package, entries in sorted(exported.items()):
        found += _duplicates(entries, f"package '{'.'.join(package)}'")
    found += _duplicates(paths, "the output folder (compared case-insensitively)")
    return found
