"""``listen`` and ``watch``: event and property-change connections that print what they see.

The connections are the ordinary ones of any subscriber, so their callbacks run in the shell's
drain: events once per emission, in emission order, stamped with the emitting cycle's time;
property changes with the latest value at each drain (states, not streams: runtime.md §3.7).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sengen.runtime import Connection, EventInfo, Object
from sengen.runtime.kernel.extension import EventMeta, PropertyMeta, did_you_mean

from .jobs import CommandError
from .render import arguments, json_text, time_text


@dataclass(eq=False)
class Tap:
    """One connection: ``member`` is an event (listen) or a property (watch)."""

    obj: Object
    path: str
    member: str
    connection: Connection


class Watches:
    def __init__(self, say: Callable[[str], None], virtual: bool, on_change: Callable[[], None]):
        self._say = say
        self._virtual = virtual
        self._on_change = on_change
        self.events: list[Tap] = []
        self.changes: list[Tap] = []

    def listen(self, path: str, obj: Object, event: str | None) -> None:
        chosen = list(obj.META.all_events)
        if event is not None:
            chosen = [e for e in chosen if e.stl_name == event]
            if not chosen:
                hint = did_you_mean(event, (e.stl_name for e in obj.META.all_events))
                raise CommandError(f"event '{event}' not found in {path}{hint}")
        if not chosen:
            raise CommandError(f"{path} has no events")
        for meta in chosen:
            if self._tap(self.events, obj, meta.stl_name) is None:
                connection = obj._connect_event_(meta, self._event_printer(path, meta), True)
                self.events.append(Tap(obj, path, meta.stl_name, connection))
        self._on_change()

    def watch(self, path: str, obj: Object, prop: str | None) -> None:
        chosen = [p for p in obj.META.all_properties if p.dynamic]
        if prop is not None:
            meta = obj.META.property(prop)
            if meta is None:
                hint = did_you_mean(prop, (p.stl_name for p in obj.META.all_properties))
                raise CommandError(f"property '{prop}' not found in {path}{hint}")
            if not meta.dynamic:
                raise CommandError(f"property '{prop}' of {path} is static: it never changes")
            chosen = [meta]
        if not chosen:
            raise CommandError(f"{path} has no properties that change")
        for meta in chosen:
            if self._tap(self.changes, obj, meta.stl_name) is None:
                # The dynamic form of the generated on_<property>_changed.
                connection = obj._on_changed_(meta.py_name, self._change_printer(path, obj, meta))
                self.changes.append(Tap(obj, path, meta.stl_name, connection))
        self._on_change()

    def stop(self, taps: list[Tap], obj: Object | None, member: str | None) -> int:
        """Close the taps of ``obj`` (all of them when None) and ``member`` (any when None);
        how many were closed."""
        closing = [
            t
            for t in taps
            if (obj is None or t.obj is obj) and (member is None or t.member == member)
        ]
        for tap in closing:
            tap.connection.close()
            taps.remove(tap)
        self._on_change()
        return len(closing)

    def forget(self, objects: list[Object]) -> None:
        """Objects gone from every source: their connections end with them."""
        for taps in (self.events, self.changes):
            for tap in [t for t in taps if t.obj in objects]:
                tap.connection.close()
                taps.remove(tap)
        self._on_change()

    def _tap(self, taps: list[Tap], obj: Object, member: str) -> Tap | None:
        return next((t for t in taps if t.obj is obj and t.member == member), None)

    def _event_printer(self, path: str, meta: EventMeta) -> Callable[..., None]:
        def show(info: EventInfo, *args: Any) -> None:
            when = time_text(info.creation_time, self._virtual)
            text = arguments(list(zip(meta.args, args, strict=True)))
            self._say(f"[{when}] {path}.{meta.stl_name}({text})")

        return show

    def _change_printer(self, path: str, obj: Object, meta: PropertyMeta) -> Callable[[Any], None]:
        def show(value: Any) -> None:
            when = time_text(obj.last_commit_time, self._virtual)
            self._say(f"[{when}] {path}.{meta.stl_name} = {json_text(meta.type, value)}")

        return show
