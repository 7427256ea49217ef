"""The shell's sources: the buses and named queries it opened, and the objects they hold.

A source is an ordinary subscription (``SELECT * FROM s.b`` for a bus), so the shell sees
whatever any subscription sees: objects of this process as local proxies, objects of other
processes as remote ones once a transport delivers them. An object's path is
``<source>.<object name>``; a bare object name works too when only one object carries it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sengen.runtime import Object, RunApi
from sengen.runtime.kernel.extension import Query, Subscription, parse_query

from .jobs import CommandError

SUMMARY_ABOVE = 50  # more detections than this in one batch print one summary line


def query_name_problem(name: str) -> str | None:
    """Query names have no spaces or dots: a path's first part is then a query or a bus."""
    if re.fullmatch(r"[^\s.]+", name) is None:
        return f"invalid query name '{name}' (no spaces or dots)"
    return None


@dataclass(eq=False)
class Source:
    name: str
    query: Query
    subscription: Subscription
    announce: bool  # print detections (opened by a command, not by the configuration)
    objects: list[Object] = field(default_factory=list)

    def path(self, obj: Object) -> str:
        return f"{self.name}.{obj.name}"


class Sources:
    """Open, close and look up. Runs on the shell's thread only; ``on_change`` is told of every
    change so that completion can be refreshed."""

    def __init__(
        self, api: RunApi, say: Callable[[str], None], on_change: Callable[[], None]
    ) -> None:
        self._api = api
        self._say = say
        self._on_change = on_change
        self.sources: dict[str, Source] = {}
        self.removed: list[Callable[[list[Object]], None]] = []  # told of every removal
        self.sessions = api.sessions()  # the buses detected, opened or not
        self.sessions.on_detected(self._detected)
        self._watched: set[str] = set()  # sessions whose buses open as they are detected

    def open_session(self, session: str) -> None:
        """Open every bus of ``session`` detected now, and each one detected later."""
        self._watched.add(session)
        self._detected(self.sessions.buses(session))

    def _detected(self, buses: list[str]) -> None:
        for bus in buses:
            if bus.partition(".")[0] in self._watched and bus not in self.sources:
                self.open(bus, f"SELECT * FROM {bus}", announce=True)
                self._say(f"opened {bus}")

    def open(self, name: str, query: Query | str, announce: bool) -> Source:
        if name in self.sources:
            raise CommandError(f"source '{name}' is already open")
        parsed = parse_query(query) if isinstance(query, str) else query
        subscription = self._api.select(parsed)  # QueryError without a bus
        source = Source(name, parsed, subscription, announce)
        subscription.on_added(lambda objects: self._added(source, objects))
        subscription.on_removed(lambda objects: self._removed(source, objects))
        self.sources[name] = source
        self._on_change()
        return source

    def close(self, name: str) -> None:
        source = self.sources.pop(name, None)
        if source is None:
            raise CommandError(f"no open source '{name}'")
        source.subscription.close()
        gone = [o for o in source.objects if not self._held(o)]
        if gone:
            for tell in self.removed:
                tell(gone)
        self._on_change()

    def _held(self, obj: Object) -> bool:
        return any(obj in s.objects for s in self.sources.values())

    def _added(self, source: Source, objects: list[Object]) -> None:
        fresh = [o for o in objects if o not in source.objects]
        source.objects.extend(fresh)
        self._announce(source, "detected", fresh)
        self._on_change()

    def _removed(self, source: Source, objects: list[Object]) -> None:
        source.objects = [o for o in source.objects if o not in objects]
        self._announce(source, "removed", objects)
        gone = [o for o in objects if not self._held(o)]
        if gone:
            for tell in self.removed:
                tell(gone)
        self._on_change()

    def _announce(self, source: Source, what: str, objects: list[Object]) -> None:
        if not source.announce or not objects:
            return
        if len(objects) > SUMMARY_ABOVE:
            self._say(f"{what} {len(objects)} objects in {source.name}")
            return
        for obj in objects:
            self._say(f"{what} {source.path(obj)}")

    # -- lookups ---------------------------------------------------------------------------------

    def entries(self) -> Iterator[tuple[str, Object, Source]]:
        """Every (path, object, source), sources in opening order, objects in arrival order."""
        for source in self.sources.values():
            for obj in source.objects:
                yield source.path(obj), obj, source

    def find(self, path: str) -> Object | None:
        """The object at ``path``, or the one object named ``path``; None when there is none
        (yet). Two objects of one bare name are an error naming both."""
        named: dict[int, tuple[str, Object]] = {}
        for full, obj, _ in self.entries():
            if full == path:
                return obj
            if obj.name == path:
                named.setdefault(id(obj), (full, obj))
        if len(named) > 1:
            paths = ", ".join(sorted(full for full, _ in named.values()))
            raise CommandError(f"object name '{path}' is ambiguous: {paths}")
        return next(iter(named.values()))[1] if named else None

    def path_of(self, obj: Object) -> str:
        return next(full for full, found, _ in self.entries() if found is obj)

    def unique_names(self) -> dict[str, Object]:
        """Bare object names that denote one object."""
        seen: dict[str, set[int]] = {}
        objects: dict[str, Object] = {}
        for _, obj, _ in self.entries():
            seen.setdefault(obj.name, set()).add(id(obj))
            objects[obj.name] = obj
        return {name: objects[name] for name, ids in seen.items() if len(ids) == 1}
