"""Shared by the evolution tests: a consumer's view of a producer's class of another version,
over the codecs exactly as the transport carries them, without a transport (evolution.md §2).

``Link(producer, consumer)`` holds the pair as the consumer checks it (the producer's metadata
read back from its description). ``seen`` is a property change published by the producer and
converted at the consumer's drain; ``sent`` a setter value from the consumer as the owner decodes
it; ``call``, ``result`` and ``event`` the same for methods and events.
"""

from __future__ import annotations

import logging
from typing import Any

from sengen.runtime.errors import CallFailed
from sengen.runtime.objects import describe
from sengen.runtime.objects.codec import class_codec
from sengen.runtime.objects.evolution.adapted import Adapter
from sengen.runtime.objects.evolution.classes import LABEL, check
from sengen.runtime.objects.evolution.convert import Notes, ValueFailure
from sengen.runtime.objects.meta import ClassMeta

ADDRESS = "s.b.obj"
LABEL_TEXT = "prod/4711"


class Keeps:
    """The marker of a value that did not convert: the property keeps its previous value."""

    def __repr__(self) -> str:
        return "KEEPS"


KEEPS = Keeps()


class Link:
    def __init__(self, producer: ClassMeta, consumer: ClassMeta) -> None:
        self.producer = producer
        self.remote = describe.read(describe.describe(producer))
        self.local = consumer
        self.plan = check(self.remote, consumer, LABEL)
        self.adapter = Adapter(self.plan, lambda: LABEL_TEXT)

    def seen(self, name: str, value: Any) -> Any:
        """The consumer's value after the producer set its property ``name`` to ``value``."""
        data = class_codec(self.producer).encode_properties({name: value})
        values, errors = self.adapter.latest([data], ADDRESS)
        assert not errors
        local = next((p.stl_name for p in self.local.all_properties if p.stl_name == name), None)
        return values.get(local, KEEPS) if local is not None else KEEPS

    def published(self, state: dict[str, Any]) -> dict[str, Any]:
        """The consumer's first state of an object published with ``state``."""
        data = class_codec(self.producer).encode_properties(state)
        remote = class_codec(self.remote).decode_properties(data)
        return self.adapter.state(remote, ADDRESS)

    def sent(self, name: str, value: Any) -> Any:
        """What the owner decodes when the consumer sets property ``name`` to ``value``."""
        member = self.local.property(name)
        assert member is not None
        out = self.adapter.outgoing(member, (value,), ADDRESS)
        if isinstance(out, CallFailed):
            return out
        remote, (converted,) = out
        data = class_codec(self.remote).encode_properties({remote.stl_name: converted})
        return class_codec(self.producer).decode_properties(data)[remote.stl_name]

    def call(self, method: str, *args: Any) -> tuple[Any, ...] | CallFailed:
        """The arguments the owner's implementation receives, in its own order."""
        member = self.local.method(method)
        assert member is not None
        out = self.adapter.outgoing(member, args, ADDRESS)
        if isinstance(out, CallFailed):
            return out
        remote, converted = out
        data = class_codec(self.remote).encode_call(remote.stl_name, converted)
        return class_codec(self.producer).decode_call(data)[1]

    def result(self, method: str, value: Any) -> Any:
        """The caller's result when the owner's implementation returns ``value``."""
        data = class_codec(self.producer).encode_result(method, value)
        remote = class_codec(self.remote).decode_result(method, data)
        convert = self.plan.methods[method].result
        notes: Notes = []
        try:
            return None if convert is None else convert(remote, notes)
        except ValueFailure as failure:
            return CallFailed("AdaptationError", failure.reason)

    def event(self, name: str, *args: Any) -> tuple[Any, ...] | None:
        """The arguments a consumer's subscriber receives (None: not delivered)."""
        data = class_codec(self.producer).encode_event(name, args)
        stl, remote = class_codec(self.remote).decode_event(data)
        return self.adapter.event(stl, remote, ADDRESS)


def messages(caplog: Any, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level]
