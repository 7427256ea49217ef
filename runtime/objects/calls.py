"""Call handles and promises (codegen.md §3.5, runtime.md §3.9, §10.2).

A call never blocks its caller: the handle completes in the caller's drain, where its done
callbacks run. Only a thread that is not a component's may wait for a result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sengen.runtime.errors import CallError, CallFailed
from sengen.runtime.objects.context import RESULTS

if TYPE_CHECKING:
    from sengen.runtime.objects.context import Context

R = TypeVar("R")
# The logger is looked up where a failure is logged: logging is loaded by the first such message,
# so a process that only imports generated code does not load it.
_LOGGER = "sengen.calls"
_PENDING = object()


class Call(Generic[R]):
    """The handle of one asynchronous call: ``done()``, ``result()``, done callbacks, ``await``."""

    __slots__ = ("_callbacks", "_error", "_value", "_waiter", "deadline", "label")

    def __init__(self, label: str) -> None:
        self.label = label
        self.deadline: int | None = None  # caller-cycle time after which it times out
        self._value: Any = _PENDING
        self._error: BaseException | None = None
        self._callbacks: list[Callable[[Call[R]], None]] | None = None
        self._waiter: threading.Event | None = None

    def done(self) -> bool:
        return self._value is not _PENDING or self._error is not None

    def result(self, timeout: float | None = None) -> R:
        """The value, or the call's error raised. On a component thread a pending call raises
        ``RuntimeError`` at once: its result can only arrive in that thread's own next drain."""
        if not self.done():
            from sengen.runtime.objects.context import Context

            if Context.current() is not None:
                raise RuntimeError(
                    f"call {self.label} is not done; a component cannot wait for a result"
                    " (use on_result= or add_done_callback)"
                )
            waiter = self._waiter
            if waiter is None:
                waiter = self._waiter = threading.Event()
            if not self.done() and not waiter.wait(timeout):
                raise TimeoutError(f"call {self.label} did not complete in {timeout} s")
        if self._error is not None:
            raise self._error
        value: R = self._value
        return value

    def exception(self) -> BaseException | None:
        return self._error

    def waited_for(self) -> bool:
        """Whether something waits for the result: a done callback (``on_result=``, ``await``,
        the reply to a remote caller) or a thread blocked in :meth:`result`."""
        return self._callbacks is not None or self._waiter is not None

    def add_done_callback(self, callback: Callable[[Call[R]], None]) -> None:
        """``callback(call)`` runs in the caller's drain where the result arrives (at once if it
        has already arrived)."""
        if self.done():
            callback(self)
        elif self._callbacks is None:
            self._callbacks = [callback]
        else:
            self._callbacks.append(callback)

    def __await__(self) -> Generator[Any, None, R]:
        from sengen.runtime.objects.aio import await_call

        return await_call(self).__await__()

    def complete(self, value: Any, error: BaseException | None) -> None:
        """Set the outcome and run the done callbacks; the runtime calls it in the caller's
        drain (:func:`completed`), and only the first outcome counts."""
        if self.done():
            return
        if error is not None:
            self._error = error
        else:
            self._value = value
        if self._waiter is not None:
            self._waiter.set()
        callbacks, self._callbacks = self._callbacks, None
        if callbacks is None:
            if error is not None:
                import logging

                logging.getLogger(_LOGGER).debug("call %s failed: %s", self.label, error)
            return
        for callback in callbacks:
            callback(self)

    def __repr__(self) -> str:
        state = "pending" if not self.done() else ("failed" if self._error else "done")
        return f"<Call {self.label} {state}>"


class Promise(Generic[R]):
    """The result of a deferred method, completed by the implementation in this or a later
    cycle. A promise dropped without being completed fails the call."""

    __slots__ = ("__weakref__", "_complete", "_settled", "label")

    def __init__(self, label: str, complete: Callable[[Any, BaseException | None], None]) -> None:
        self.label = label
        self._complete = complete
        self._settled = False

    def set_result(self, value: R) -> None:
        self._settle(value, None)

    def set_exception(self, error: BaseException) -> None:
        if not isinstance(error, CallError):
            error = _failure(error)
        self._settle(None, error)

    def forward(self, call: Call[R]) -> None:
        """Complete this promise with the outcome of another call."""
        call.add_done_callback(
            lambda c: (
                self._settle(None, c.exception())
                if c.exception() is not None
                else self._settle(c.result(), None)
            )
        )

    @property
    def settled(self) -> bool:
        """Whether a result or an error was set (or the promise was dropped)."""
        return self._settled

    def _settle(self, value: Any, error: BaseException | None) -> None:
        if self._settled:
            raise RuntimeError(f"the promise of {self.label} is already completed")
        self._settled = True
        self._complete(value, error)

    def __del__(self) -> None:
        if not self._settled:
            self._settled = True
            error = CallFailed("PromiseDropped", f"{self.label} was never completed")
            self._complete(None, error)


def _failure(error: BaseException) -> CallFailed:
    failed = CallFailed(type(error).__name__, str(error))
    failed.__cause__ = error
    return failed


def failure(error: BaseException) -> CallError:
    """What the caller of an implementation that raised ``error`` receives."""
    return error if isinstance(error, CallError) else _failure(error)


def log_raised(
    call: Call[Any], owner: Context, caller: Context | None, error: BaseException
) -> None:
    """Log, at the owner, an implementation that raised, with its traceback, besides the error
    its caller receives: at DEBUG, or at WARNING when the caller does not wait for the result
    (a component's call without ``on_result``, whose result is discarded), as no one else would
    see the error. A thread outside any component may still block in ``result()`` after the
    call ran, and a remote caller's intent does not travel: their calls count as waited for."""
    import logging

    unseen = caller is not None and not call.waited_for()
    logging.getLogger(_LOGGER).log(
        logging.WARNING if unseen else logging.DEBUG,
        "call %s raised in component '%s': %s: %s",
        call.label,
        owner.name,
        type(error).__name__,
        error,
        exc_info=error,
    )


def completed(
    context: Context | None, call: Call[Any], value: Any, error: BaseException | None
) -> None:
    """Complete ``call`` in ``context``'s next drain, or at once for a caller outside any."""
    if context is None:
        call.complete(value, error)
    else:
        context.post_kind(RESULTS, call.complete, value, error)
