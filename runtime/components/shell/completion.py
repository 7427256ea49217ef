"""Tab completion (runtime.md §9.1): commands, sources, sessions and buses (detected ones too),
object paths group by group, members, type names for ``info``, and each command's options, read
from its usage in the commands table (``--csv`` in ``echo <obj>.<property> [--csv]``).

The shell's thread builds an immutable :class:`Index` whenever its sources change; the prompt's
thread only reads the latest one, so completing never touches a proxy or the kernel.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from sengen.runtime.kernel.extension import ClassMeta, registry

from .members import setter_name
from .sources import Sources


@dataclass(frozen=True)
class Names:
    """What can follow ``<object>.``: ``members`` in a command of its own (properties,
    methods, setters of writable properties, ``print``), ``events`` for ``listen`` and
    ``dynamic`` properties for ``watch``."""

    members: tuple[str, ...]
    events: tuple[str, ...]
    dynamic: tuple[str, ...]


class Usage(Protocol):
    """A command of the commands table, as completion reads it."""

    @property
    def usage(self) -> str: ...


_OPTION = re.compile(r"--[a-z][a-z-]*")


def options_of(commands: Mapping[str, Usage]) -> dict[str, tuple[str, ...]]:
    """Each command's options, as its usage spells them."""
    return {name: tuple(sorted(set(_OPTION.findall(c.usage)))) for name, c in commands.items()}


@dataclass(frozen=True)
class Index:
    commands: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    objects: Mapping[str, Names] = field(default_factory=dict)  # by path and unique name
    buses: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    listening: tuple[str, ...] = ()
    watching: tuple[str, ...] = ()
    streaming: tuple[str, ...] = ()  # the kinds of stream in progress (echo, hz, bw)
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # by command


def build_index(
    commands: Mapping[str, Usage], sources: Sources, listening: list[str], watching: list[str]
) -> Index:
    """``listening`` and ``watching``: the active targets, for ``unlisten`` and ``unwatch``."""
    objects: dict[str, Names] = {}
    buses = {s for s in sources.sources if "." in s}
    buses.update(sources.sessions.buses())  # detected, open or not: what ``ls`` lists
    for path, obj, _ in sources.entries():
        objects[path] = names_of(obj.META)
        if obj.bus is not None:
            buses.add(obj.bus)
    for name, obj in sources.unique_names().items():
        objects.setdefault(name, names_of(obj.META))
    types: set[str] = set()
    for scope in registry.scopes():
        metas, classes = registry.entries(scope)
        types.update(m.qualified_name for m in metas)
        types.update(c.meta.qualified_name for c in classes)
    return Index(
        tuple(commands),
        tuple(sources.sources),
        objects,
        tuple(sorted(buses)),
        tuple(sorted(types)),
        tuple(listening),
        tuple(watching),
        options=options_of(commands),
    )


def names_of(meta: ClassMeta) -> Names:
    """What completion offers after ``<object>.`` for an object of class ``meta``."""
    props = meta.all_properties
    members = [p.stl_name for p in props]
    members += [m.stl_name for m in meta.all_methods]
    members += [setter_name(p) for p in props if p.writable]
    members.append("print")
    return Names(
        tuple(sorted(set(members))),
        tuple(e.stl_name for e in meta.all_events),
        tuple(p.stl_name for p in props if p.dynamic),
    )


def candidates(index: Index, before: str) -> tuple[str, list[str]]:
    """The word being completed at the end of ``before`` and what may replace it, sorted."""
    words = before.split()
    word = "" if not words or before[-1:].isspace() else words[-1]
    position = len(words) - (1 if word else 0)
    if position == 0:
        found = {c for c in index.commands if c.startswith(word)}
        found |= _paths(word, index.objects, lambda n: n.members)
        return word, sorted(found)
    command = words[0]
    options = {o for o in index.options.get(command, ()) if o.startswith(word)}
    if word.startswith("-"):
        return word, sorted(options)
    if position > 1:  # past the first argument, only options
        return word, sorted(options)
    chosen: set[str]
    if command in ("close", "src"):
        chosen = {s for s in index.sources if s.startswith(word)}
    elif command == "open":  # a session, or one of its buses
        sessions = {b.partition(".")[0] for b in index.buses}
        chosen = {b for b in (*sessions, *index.buses) if b.startswith(word)}
    elif command in ("info", "ls"):
        chosen = _paths(word, index.objects, lambda n: ())
        if command == "info":
            chosen |= {t for t in index.types if t.startswith(word)}
    elif command == "listen":
        chosen = _paths(word, index.objects, lambda n: n.events, objects_too=True)
    elif command in ("watch", "echo", "hz", "bw"):
        chosen = _paths(word, index.objects, lambda n: n.dynamic, objects_too=True)
    elif command in ("unlisten", "unwatch"):
        active = index.listening if command == "unlisten" else index.watching
        chosen = {a for a in active if a.startswith(word)}
    elif command == "help":
        chosen = {c for c in index.commands if c.startswith(word)}
    else:
        chosen = set()
    return word, sorted(chosen)


def _paths(
    word: str,
    objects: Mapping[str, Names],
    members: Callable[[Names], tuple[str, ...]],
    objects_too: bool = False,
) -> set[str]:
    """Object paths completed up to their next dot (group by group); past an object's path,
    its members. ``objects_too``: an object's path alone is a complete word as well."""
    found: set[str] = set()
    for path, names in objects.items():
        following = members(names)
        if path.startswith(word):
            if not following or objects_too:
                _next_group(word, path, found)
            if following:
                _next_group(word, path + ".", found)
        elif word.startswith(path + ".") and following:
            rest = word[len(path) + 1 :]
            found.update(f"{path}.{m}" for m in following if m.startswith(rest))
    return found


def _next_group(word: str, path: str, found: set[str]) -> None:
    dot = path.find(".", len(word))
    found.add(path if dot < 0 else path[: dot + 1])
