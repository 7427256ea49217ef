"""The name guard's announcements keep the order of what happened: a name published and then
withdrawn before the guard's thread could send it reaches the others as added, then withdrawn
(a receiver applies a frame's withdrawals before its additions), so the process that registered
it earlier still hears of the clash and no one keeps the withdrawn name."""

from __future__ import annotations

import random
import threading
from types import SimpleNamespace
from typing import Any, cast

from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.faults import Faults
from sengen.runtime.components.transport.name_guard import NameGuard

BUS = "net.b"


class Frames:
    """The guard's ``send``: holds the thread in the first call until released, so that what
    comes meanwhile is batched."""

    def __init__(self) -> None:
        self.sent: list[wire.Names] = []
        self.first = threading.Event()
        self.release = threading.Event()
        self.all_sent = threading.Condition()

    def __call__(self, data: bytes, what: str) -> None:
        if not self.sent:
            self.first.set()
            assert self.release.wait(10)
        frame = wire.decode(data)
        assert isinstance(frame, wire.Names)
        with self.all_sent:
            self.sent.append(frame)
            self.all_sent.notify_all()


def guard(me: str, send: Any) -> NameGuard:
    directory = SimpleNamespace(add=lambda bus: None, remove=lambda bus: None)
    return NameGuard(me, str, cast(Any, directory), send, 1 << 20, 1000, Faults())


def test_a_name_added_then_withdrawn_in_one_batch_is_announced_then_withdrawn() -> None:
    frames = Frames()
    sender = guard("b", frames)
    receiver = guard("a", lambda data, what: None)
    source = cast(Any, SimpleNamespace(bus=BUS))
    names = [f"n{random.randrange(10**6)}_{i}" for i in range(3)]
    objects = [cast(Any, SimpleNamespace(name=n, _ctx_=None)) for n in names]
    try:
        sender.published(source, [objects[0]], True)
        assert frames.first.wait(10)  # the thread is held in its first send
        sender.published(source, [objects[1]], True)
        sender.published(source, [objects[1]], False)  # added then withdrawn, unsent
        sender.published(source, [objects[2]], True)
        frames.release.set()
        with frames.all_sent:
            assert frames.all_sent.wait_for(lambda: len(frames.sent) == 3, 10)
        for frame in frames.sent:
            receiver.names(frame, alive=True)
        # In the order it happened: the withdrawal in a later frame than the addition.
        assert [([n for n, _ in f.added], list(f.withdrawn)) for f in frames.sent] == [
            ([names[0]], []),
            ([names[1]], []),
            ([names[2]], [names[1]]),
        ]
        held = receiver._holders["b"].buses[BUS]  # what the receiver keeps
        assert sorted(held) == sorted([names[0], names[2]])
    finally:
        frames.release.set()
        sender.close()
        receiver.close()
