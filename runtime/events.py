"""Subscriptions and event handles (codegen.md §3.2, §3.3; runtime.md §3.7, §3.8).

A callback always runs in its subscriber's drain: the owner's commit queues it in the work queue
of the context that subscribed. Handles stay alive until closed, or until the object is removed
or the subscriber stops; garbage collection never closes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, ParamSpec

from sengen.runtime import values
from sengen.runtime.checks import checks
from sengen.runtime.meta import EventMeta

if TYPE_CHECKING:
    from sengen.runtime.context import Context
    from sengen.runtime.objects import Object

P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class EventInfo:
    """What ``connect(callback, with_info=True)`` passes first: the emitting cycle's time."""

    creation_time: int


class Subscription:
    """A callback registration. ``close()`` is idempotent; also a context manager."""

    __slots__ = ("_on_close", "callback", "closed", "context", "with_info")

    def __init__(
        self,
        context: Context | None,
        callback: Callable[..., None],
        on_close: Callable[[Subscription], None],
        with_info: bool = False,
    ) -> None:
        self.context = context
        self.callback = callback
        self.with_info = with_info
        self.closed = False
        self._on_close = on_close

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._on_close(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def deliver(self, args: tuple[Any, ...], info: EventInfo | None = None) -> None:
        """Queue the callback in the subscriber's drain (at once outside any context)."""
        if self.closed:
            return
        if self.context is None:
            self._run(args, info)
        else:
            self.context.post(self._run, args, info)

    def _run(self, args: tuple[Any, ...], info: EventInfo | None) -> None:
        if self.closed:
            return
        if self.with_info and info is not None:
            self.callback(info, *args)
        else:
            self.callback(*args)


class EventHandle(Generic[P]):
    """``obj.events.<e>``: connect callbacks that receive the event's arguments in STL order."""

    __slots__ = ("_checks", "_obj", "meta")

    def __init__(self, obj: Object, meta: EventMeta) -> None:
        self._obj = obj
        self.meta = meta
        self._checks = [values.checker(a.type) for a in meta.args]

    def connect(self, callback: Callable[P, None], *, with_info: bool = False) -> Subscription:
        return self._obj._connect_event(self.meta, callback, with_info)

    def connect_with_info(self, callback: Callable[..., None]) -> Subscription:
        """Like ``connect(callback, with_info=True)``: ``callback(info, *args)``."""
        return self._obj._connect_event(self.meta, callback, True)

    def __aiter__(self) -> AsyncIterator[tuple[Any, ...]]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[tuple[Any, ...]]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

        def forward(_info: EventInfo, *args: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, args)

        subscription = self.connect_with_info(forward)
        try:
            while True:
                yield await queue.get()
        finally:
            subscription.close()

    def _emit(self, args: tuple[Any, ...]) -> None:
        """Validate (when checks are on) and queue one emission until the owner's commit."""
        if checks.enabled:
            for arg, check, value in zip(self.meta.args, self._checks, args, strict=True):
                try:
                    check(value)
                except values.Invalid as error:
                    owner = self._obj.META.qualified_name
                    where = f"{self.meta.stl_name}.{arg.stl_name}"
                    raise ValueError(
                        values.describe(error, where, "event argument", owner)
                    ) from None
        self._obj._emit(self.meta, args)


class Events:
    """The ``events`` namespace of an object: one handle per event, inherited ones included.
    Generated subclasses annotate the handles and name the emitter classes in ``HANDLES``."""

    HANDLES: ClassVar[dict[str, type[EventHandle[Any]]]] = {}

    def __init__(self, obj: Object, events: tuple[EventMeta, ...]) -> None:
        handles = type(self).HANDLES
        for meta in events:
            setattr(self, meta.py_name, handles.get(meta.py_name, EventHandle)(obj, meta))

    def __iter__(self) -> Any:
        return iter(vars(self).values())
