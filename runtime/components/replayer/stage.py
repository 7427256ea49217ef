"""The replayed objects: built from the archive's classes, published on their buses (or the ones
a bus map names), changed, made to emit and withdrawn as the player says."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sengen.runtime import DuplicateObjectName, RunApi
from sengen.runtime.components.replayer.classes import ClassClash, ReplayedObject, replay_class
from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.extension import Source, describe, values

__all__ = ["ObjectStage", "ReplayError", "split_address"]


class ReplayError(SengenError, ValueError):
    """What stops a replay: a class that cannot be built, a name already used on a bus."""


def split_address(address: str) -> tuple[str, str]:
    """``session/bus/object`` (an archive's topic) as (``session.bus``, ``object``)."""
    parts = address.replace("/", ".").split(".")
    if len(parts) != 3 or not all(parts):
        raise ReplayError(f"invalid object address '{address}' in the archive")
    return f"{parts[0]}.{parts[1]}", parts[2]


class ObjectStage:
    """The objects of one replay, by archive address."""

    def __init__(
        self, descriptions: Callable[[str], bytes | str | None], bus_map: Mapping[str, str]
    ) -> None:
        self.api: RunApi | None = None  # the replayer's, once it runs
        self._descriptions = descriptions
        self._bus_map = dict(bus_map)
        self._classes: dict[str, type[ReplayedObject]] = {}
        self._objects: dict[str, ReplayedObject] = {}
        self._unpublished: list[tuple[str, ReplayedObject]] = []

    def bus_of(self, address: str) -> str:
        bus = split_address(address)[0]
        return self._bus_map.get(bus, bus)

    def classes(self) -> dict[str, str]:
        return {a: o.META.qualified_name for a, o in self._objects.items()}

    def object(self, address: str) -> ReplayedObject | None:
        return self._objects.get(address)

    def create(self, address: str, class_name: str) -> None:
        if address in self._objects:
            self.remove(address)
        bus, name = split_address(address)
        obj = self._class(class_name)(name)
        self._objects[address] = obj
        self._unpublished.append((self._bus_map.get(bus, bus), obj))

    def load(self, address: str, state: Mapping[str, Any]) -> None:
        obj = self._objects.get(address)
        if obj is not None:
            try:
                obj.load_state(state)
            except values.Invalid as error:
                raise ReplayError(
                    f"a recorded state of '{address}' does not fit: {error}"
                ) from None

    def emit(self, address: str, event: str, arguments: Mapping[str, Any]) -> None:
        obj = self._objects.get(address)
        if obj is not None and obj.bus is not None:
            try:
                obj.emit_recorded(event, arguments)
            except values.Invalid as error:
                raise ReplayError(
                    f"a recorded event of '{address}' does not fit: {error}"
                ) from None

    def remove(self, address: str) -> None:
        obj = self._objects.pop(address, None)
        if obj is None:
            return
        waiting = [(b, o) for b, o in self._unpublished if o is not obj]
        if len(waiting) < len(self._unpublished):
            self._unpublished = waiting
        elif obj.bus is not None:
            self._source(obj.bus).remove(obj)

    def publish(self) -> None:
        """The objects created since the last call, one batch per bus, in creation order."""
        waiting, self._unpublished = self._unpublished, []
        by_bus: dict[str, list[ReplayedObject]] = {}
        for bus, obj in waiting:
            by_bus.setdefault(bus, []).append(obj)
        for bus, batch in by_bus.items():
            try:
                self._source(bus).add(batch)
            except DuplicateObjectName as error:
                for obj in batch:
                    self._objects = {a: o for a, o in self._objects.items() if o is not obj}
                raise ReplayError(f"{error} (replay onto another bus with --bus)") from None

    def _source(self, bus: str) -> Source:
        assert self.api is not None, "objects are published once the replayer runs"
        return self.api.get_source(bus)

    def _class(self, class_name: str) -> type[ReplayedObject]:
        found = self._classes.get(class_name)
        if found is not None:
            return found
        description = self._descriptions(class_name)
        if description is None:
            raise ReplayError(f"the archive has no type description of class '{class_name}'")
        data = description.encode() if isinstance(description, str) else description
        try:
            cls = replay_class(data)
        except (describe.DescriptionError, ClassClash) as error:
            raise ReplayError(str(error)) from None
        self._classes[class_name] = cls
        return cls
