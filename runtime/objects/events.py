"""Subscriptions and event handles (codegen.md §3.2, §3.3; runtime.md §3.7, §3.8).

A callback always runs in its subscriber's drain: the owner's commit queues it in the work queue
of the context that subscribed. Handles stay alive until closed, or until the object is removed
or the subscriber stops; garbage collection never closes them.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, ParamSpec, Protocol, cast

from sengen.runtime.objects import values
from sengen.runtime.objects.checks import checks
from sengen.runtime.objects.context import CHANGES, EVENTS
from sengen.runtime.objects.meta import ClassMeta, EventMeta

if TYPE_CHECKING:
    from sengen.runtime.objects.context import Context

P = ParamSpec("P")
_get_ident = threading.get_ident


class Owner(Protocol):
    """What an event handle uses of its object (:class:`~sengen.runtime.objects.objects.Object`,
    which imports this module: by its class, the reference back would be an import cycle)."""

    META: ClassVar[ClassMeta]

    def _connect_event_(
        self, meta: EventMeta, callback: Callable[..., None], with_info: bool, /
    ) -> Connection: ...


class EventInfo:
    """What ``connect(callback, with_info=True)`` passes first: the emitting cycle's time."""

    __slots__ = ("creation_time",)

    def __init__(self, creation_time: int) -> None:
        self.creation_time = creation_time

    def __repr__(self) -> str:
        return f"EventInfo(creation_time={self.creation_time})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EventInfo) and other.creation_time == self.creation_time

    def __hash__(self) -> int:
        return hash(self.creation_time)


class Connection:
    """A callback registration. ``close()`` is idempotent; also a context manager."""

    __slots__ = ("_on_close", "callback", "closed", "context", "droppable", "with_info")

    def __init__(
        self,
        context: Context | None,
        callback: Callable[..., None],
        on_close: Callable[[Connection], None],
        with_info: bool = False,
    ) -> None:
        self.context = context
        self.callback = callback
        self.with_info = with_info
        self.closed = False
        self._on_close = on_close
        self.droppable = False  # best-effort deliveries may go when a bounded queue is full

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._on_close(self)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def deliver(self, args: tuple[Any, ...], created: int | None = None) -> None:
        """Queue the callback in the subscriber's drain (at once outside any context).
        ``created`` is the emitting cycle's time of an event (None for property changes)."""
        if self.closed:
            return
        context = self.context
        if context is None:
            self.run(args, created)
        elif context.limit:
            kind = CHANGES if created is None else EVENTS
            context.push(kind, self.run, (args, created), self.droppable)
        elif context.running:  # Context.post, inlined: this runs once per delivery
            context.lane(CHANGES if created is None else EVENTS).append((self.run, (args, created)))

    def run(self, args: tuple[Any, ...], created: int | None) -> None:
        """Run the callback now, unless closed: in the subscriber's drain, where
        :meth:`deliver` queues it (a transport runs it there for remote events)."""
        if self.closed:
            return
        if self.with_info and created is not None:
            # Built only for the subscribers that asked for it: most never do.
            self.callback(EventInfo(created), *args)
        else:
            self.callback(*args)


class EventHandle(Generic[P]):
    """``obj.events.<e>``: connect callbacks that receive the event's arguments in STL order."""

    __slots__ = ("_check", "_obj", "_single", "meta")

    def __init__(self, obj: Owner, meta: EventMeta) -> None:
        self._obj = obj
        self.meta = meta
        self._check = values.arguments_checker(tuple(a.type for a in meta.args))
        # Most events have one argument: its check is called directly, without a wrapper.
        self._single = values.checker(meta.args[0].type) if len(meta.args) == 1 else None

    def connect(self, callback: Callable[P, None], *, with_info: bool = False) -> Connection:
        return self._obj._connect_event_(self.meta, callback, with_info)

    def connect_with_info(self, callback: Callable[..., None]) -> Connection:
        """Like ``connect(callback, with_info=True)``: ``callback(info, *args)``."""
        return self._obj._connect_event_(self.meta, callback, True)

    def __aiter__(self) -> AsyncGenerator[tuple[Any, ...], None]:
        return self._stream()

    async def _stream(self) -> AsyncGenerator[tuple[Any, ...], None]:
        # Loaded by the first stream: a process that never iterates events never needs asyncio.
        import asyncio

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
        Emitter.emit(cast("Emitter[...]", self), *args)

    def _invalid(self, error: values.Invalid, single: bool) -> ValueError:
        """The error of an emission whose argument failed its check."""
        if single:
            error = error.inside("0")
        arg = self.meta.args[int(error.path[0])]
        inner = values.Invalid(error.message, error.path[1:])
        where = f"{self.meta.stl_name}.{arg.stl_name}"
        owner = self._obj.META.qualified_name
        return ValueError(values.describe(inner, where, "event argument", owner))


class Emitter(EventHandle[P]):
    """The owner's handle of an event: ``emit`` it, in STL argument order."""

    __slots__ = ()

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        """Emit the event: delivered to subscribers once the owner commits."""
        if kwargs:
            # By Python argument name, as a generated signature would take them.
            named = dict(zip((a.py_name for a in self.meta.args), args, strict=False))
            named.update(kwargs)
            args = tuple(named[a.py_name] for a in self.meta.args)  # type: ignore[assignment]
        # The hot path of every event, in one frame: the check (most events have one argument,
        # checked directly), then NativeObject._emit, inlined.
        if checks.enabled:
            single = self._single
            try:
                if single is not None:
                    single(args[0])
                else:
                    self._check(args)
            except values.Invalid as error:
                raise self._invalid(error, single is not None) from None
        obj: Any = self._obj
        context = obj._ctx_
        if context is None:  # before registration: queued on the object until it is bound
            obj._emitted_.append((self.meta, args))
            return
        if context.writer != _get_ident():
            obj._guard_(self.meta.stl_name)  # a foreign thread or a [const] method, or unbound
        # One list per component: its commit dispatches in emission order across objects.
        context.emissions.append((obj, self.meta, args))


class Events:
    """The ``events`` namespace of an object: one handle per event, inherited ones included.
    Generated subclasses declare the events; ``HANDLES`` may name a handle class per event."""

    HANDLES: ClassVar[dict[str, type[EventHandle[...]]]] = {}
    _HANDLE: ClassVar[type[EventHandle[...]]] = EventHandle

    def __init__(self, obj: Owner, events: tuple[EventMeta, ...]) -> None:
        handles = type(self).HANDLES
        default = self._HANDLE
        for meta in events:
            setattr(self, meta.py_name, handles.get(meta.py_name, default)(obj, meta))


class BaseEvents(Events):
    """The ``events`` namespace of a native object: its handles can ``emit``."""

    _HANDLE = Emitter
