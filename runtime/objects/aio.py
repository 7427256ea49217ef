"""asyncio adapters: awaiting a call handle resumes on the awaiting loop (runtime.md §10.2)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from sengen.runtime.objects.calls import Call

R = TypeVar("R")


async def await_call(call: Call[R]) -> R:
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
