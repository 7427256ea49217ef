"""The hand-over between the server's event loop and the component's cycle.

Whatever touches objects, subscriptions or calls runs on the component's thread, in its cycle
after the drain, as any component's work does; the server's handlers only queue it and await the
answer. The cycle never waits for the server: answers are handed to the loop without blocking.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

_MAX_WAITING = 10_000  # requests queued for the cycle; beyond that the server is overloaded


@dataclass
class _Job:
    work: Callable[[], Any]
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]


class Bridge:
    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()

    async def run(self, work: Callable[[], Any]) -> Any:
        """``work()`` on the component's thread; its result, or what it raised."""
        if self._jobs.qsize() >= _MAX_WAITING:
            raise ApiError(503, "the web component is overloaded: try again")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._jobs.put(_Job(work, loop, future))
        return await future

    def serve(self) -> None:
        """On the component's thread: run what is queued now."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            try:
                result = job.work()
            except Exception as error:  # the handler's answer, raised again in the handler
                _settle(job, None, error)
            else:
                _settle(job, result, None)


def _settle(job: _Job, result: Any, error: BaseException | None) -> None:
    def done() -> None:
        if job.future.done():  # the client went away
            return
        if error is not None:
            job.future.set_exception(error)
        else:
            job.future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the loop has closed: the server stopped
        job.loop.call_soon_threadsafe(done)
