"""asyncio adapters: awaiting a call handle resumes on the awaiting loop (runtime.md §10.2)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Outcome(Protocol[R_co]):
    """What awaiting needs of a call handle (:class:`~sengen.runtime.objects.calls.Call`, whose
    ``__await__`` imports this module: by its class, the reference back would be a cycle)."""

    def add_done_callback(self, callback: Callable[[Any], None]) -> None: ...

    def result(self) -> R_co: ...


async def await_call(call: Outcome[R]) -> R:
    """The call's value, or its error raised, once it completes (in whatever thread)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not future.done():
            future.set_result(None)

    def settle(_: Any) -> None:
        loop.call_soon_threadsafe(wake)

    call.add_done_callback(settle)
    await future
    return call.result()
