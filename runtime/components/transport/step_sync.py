"""Stepping across processes, reproducibly (runtime.md §6.8).

A kernel of a clock set stamps what its stepped components send to other processes with the
step it belongs to, and ends each step with an END marker to every other member, on the same
ordered stream. A kernel holds the stamped frames it receives; opening step k + 1 it awaits
END(k) of the kernels the master named, then hands the held frames of steps up to k over in
(step, kernel id, order of sending) order, and opens the interests those markers carry. So
what a drain sees never depends on network timing. Kernels stepped by another master (or by
none) are outside the guarantee: what they send is handed over at the next hand-over whatever
its stamp, and their stepped interests open there from their announcements (``wire.Interest``),
since no END marker of theirs comes here. :class:`RemoteClock` is how a master drives a kernel
clock of another process.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sengen.runtime import Call, Duration, RemoteProxy, TimeStamp
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.handles import RemoteHandle
from sengen.runtime.kernel.extension import Context, KernelClock, StepPlan

_log = logging.getLogger("sengen.transport")


@dataclass(frozen=True)
class InterestToken:
    """Another process's interest as it announced it (``wire.Interest``)."""

    zid: str
    iid: int
    step: int | None  # None: a real-time subscriber's
    text: str


class Exchange(Protocol):
    """What the step sync needs of the transport."""

    zid: str

    def send(self, zid: str, data: bytes, what: str) -> None:
        """To a process's inbox, unstamped."""

    def handle_frame(self, sender: str, data: bytes) -> None:
        """Decode and apply a frame (a held one, at the hand-over)."""

    def open_interest(self, zid: str, iid: int, text: str) -> None:
        """Open another process's interest here."""


class StepSync:
    """One kernel's part in stepping with other processes (installed on its clock)."""

    def __init__(self, exchange: Exchange, clock: KernelClock) -> None:
        self._exchange = exchange
        self._clock = clock
        self._ready = threading.Condition()
        self.in_set = False  # stepped by a master at least once
        self._held: list[tuple[int, int, str, bytes]] = []  # (step, arrival, sender, frame)
        self._arrivals = itertools.count()
        self._ends: dict[str, int] = {}  # the last END step each kernel sent
        self._kernels: dict[str, int] = {}  # process -> its kernel's id, from END markers
        self._interests: list[tuple[int, int, str, str]] = []  # (kernel, iid, process, query)
        self._opened: list[tuple[int, str]] = []  # stepped interests since our last END
        self._tokens: list[InterestToken] = []  # stepped interests, for the next hand-over
        self._members: frozenset[str] = frozenset()  # the clock set of the last step begun
        self._last_end = -1
        self._gone: set[str] = set()
        clock.member = exchange.zid
        clock.sync = self

    # -- what this kernel sends -----------------------------------------------------------------

    def stamp(self, data: bytes) -> bytes:
        """``data`` stamped with the step when a stepped component sends it during a step."""
        plan = self._clock.plan
        if plan is not None:
            context = Context.current()
            if context is not None and context.stepped:
                return wire.Stamped(self._exchange.zid, plan.step, data).encode()
        return data

    def mark(self) -> str:
        """How a subscription made on this thread is announced: ``s<k>`` from a stepped
        component (``k``: the current step, 0 before any), ``r`` otherwise."""
        context = Context.current()
        if context is None or not context.stepped:
            return "r"
        plan = self._clock.plan
        return f"s{plan.step if plan is not None else 0}"

    def opened(self, iid: int, text: str) -> None:
        """A stepped component's new interest: the next END marker carries it."""
        with self._ready:
            self._opened.append((iid, text))

    def takes_token(self, token: InterestToken) -> bool:
        """Whether an interest token opens at once here. A stepped subscriber's interest opens
        at a hand-over, so that the step it opens in does not depend on when the token arrived:
        from its END marker when its kernel is in this kernel's clock set, else from the token,
        kept for the next hand-over. Only one made before any step may open before this
        kernel's first step, which its END(0) then finds open already."""
        if token.step is None or (token.step == 0 and not self.in_set):
            return True
        with self._ready:
            self._tokens.append(token)
        return False

    def token_gone(self, zid: str, iid: int) -> None:
        """An interest closed before the hand-over that would have opened it."""
        with self._ready:
            self._tokens = [t for t in self._tokens if (t.zid, t.iid) != (zid, iid)]

    # -- what other kernels send ---------------------------------------------------------------

    def ordered(self, frame: wire.StepOrder) -> None:
        """A master's plan for the step its next ``processNoFlush`` call opens."""
        self._clock.plan = StepPlan(frame.step, frame.members, frame.awaited)

    def hold(self, frame: wire.Stamped) -> None:
        with self._ready:
            self._held.append((frame.step, next(self._arrivals), frame.sender, frame.inner))

    def end_arrived(self, frame: wire.EndOfStep) -> None:
        with self._ready:
            self._ends[frame.sender] = max(frame.step, self._ends.get(frame.sender, -1))
            self._kernels[frame.sender] = frame.kernel
            for iid, text in frame.interests:
                self._interests.append((frame.kernel, iid, frame.sender, text))
            self._ready.notify_all()

    def lost(self, zid: str) -> None:
        """A lost process's END markers are no longer awaited, its interests not opened."""
        with self._ready:
            self._gone.add(zid)
            self._tokens = [t for t in self._tokens if t.zid != zid]
            self._ready.notify_all()

    def back(self, zid: str) -> None:
        with self._ready:
            self._gone.discard(zid)

    # -- the clock's hooks ----------------------------------------------------------------------

    def begin(self, plan: StepPlan) -> None:
        """Opening step k: END(k - 1) first if it was never sent (the first step, or just
        joined), then wait for the awaited kernels' END(k - 1), then the hand-over."""
        previous = plan.step - 1
        self.in_set = True
        members = self._members = frozenset(plan.members)
        if self._last_end < previous:
            self._send_end(previous, plan.members)
        with self._ready:
            while not self._ready.wait_for(lambda: self._ends_in(plan), timeout=1.0):
                waiting = [z for z in plan.awaited if z not in self._gone]
                _log.debug("step %d waits for END(%d) of %s", plan.step, previous, waiting)
            # Outsiders' stamps count steps of another master: theirs go at every hand-over.
            due = [h for h in self._held if h[0] <= previous or h[2] not in members]
            self._held = [h for h in self._held if h[0] > previous and h[2] in members]
            interests, self._interests = self._interests, []
            tokens, self._tokens = self._tokens, []
            kernels = dict(self._kernels)
        due.sort(key=lambda h: (h[0], kernels.get(h[2], 0), h[2], h[1]))
        for _, _, sender, data in due:
            self._exchange.handle_frame(sender, data)
        for _, iid, zid, text in sorted(interests):
            self._exchange.open_interest(zid, iid, text)
        # A member's stepped interest comes with its END marker; an outsider's only so.
        for token in sorted(tokens, key=lambda t: (t.zid, t.iid)):
            if token.zid not in members:
                self._exchange.open_interest(token.zid, token.iid, token.text)

    def _ends_in(self, plan: StepPlan) -> bool:
        previous = plan.step - 1
        return all(self._ends.get(z, -1) >= previous or z in self._gone for z in plan.awaited)

    def end(self, plan: StepPlan) -> None:
        """After step k's commits, whose frames are already on their way: END(k)."""
        self._send_end(plan.step, plan.members)

    def _send_end(self, step: int, members: tuple[str, ...]) -> None:
        with self._ready:
            opened, self._opened = self._opened, []
        zid = self._exchange.zid
        frame = wire.EndOfStep(zid, step, self._clock.ident, tuple(opened)).encode()
        for member in members:
            if member != zid:
                self._exchange.send(member, frame, "an end-of-step marker")
        self._last_end = step


class RemoteClock:
    """A kernel clock of another process, as a master steps it (runtime.md §6.3, §6.8): its
    commands are ``[confirmed]`` calls sent at once, whose results a wait collects; the plan
    of each step travels ahead of the ``processNoFlush`` call on the same ordered stream."""

    remote = True

    def __init__(self, exchange: Exchange, handle: RemoteHandle, proxy: RemoteProxy) -> None:
        self._exchange = exchange
        self._proxy = proxy
        self.member = handle.zid
        self.name = handle.name
        self.plan: StepPlan | None = None
        published = getattr(proxy, "time", None)
        self._time = published.ns if isinstance(published, TimeStamp) else 0

    @property
    def time(self) -> int:
        return self._time

    def issue_process_no_flush(self, delta: int) -> Callable[[], int]:
        plan = self.plan
        if plan is not None:
            order = wire.StepOrder(self._exchange.zid, plan.step, plan.members, plan.awaited)
            self._exchange.send(self.member, order.encode(), "a step order")
        self._time += delta
        wait = self._invoke("processNoFlush", (Duration(delta),))
        return lambda: _ns(wait()) or 0

    def issue_flush_outputs(self) -> Callable[[], int | None]:
        wait = self._invoke("flushOutputs", ())
        return lambda: _ns(wait())

    def process_no_flush(self, delta: int) -> int:
        return self.issue_process_no_flush(delta)()

    def flush_outputs(self) -> int | None:
        return self.issue_flush_outputs()()

    def _invoke(self, name: str, args: tuple[Any, ...]) -> Callable[[], Any]:
        proxy = self._proxy
        member = proxy.META.method(name)
        assert member is not None
        call: Call[Any] = Call(f"{proxy._address_}.{name}")
        done = threading.Event()
        call.add_done_callback(lambda _: done.set())
        proxy._send_call_(member, args, call, None)  # at once, not at a commit

        def wait() -> Any:
            done.wait()  # a lost process fails the call: never forever
            error = call.exception()
            if error is not None:
                _log.warning("kernel clock %s: %s failed: %s", proxy._address_, name, error)
                return None
            return call.result()

        return wait


def _ns(value: Any) -> int | None:
    return value.ns if isinstance(value, Duration) else None
