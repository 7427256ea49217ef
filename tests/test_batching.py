"""What one commit shows another process leaves as one message (runtime.md §8.1, §8.2), in
process, without Zenoh: the batch frame, the outbox that builds the messages within
``maxMessageBytes``, the subscriber's side that takes a batch apart, and the lazy decoding of
changes (only the latest value of each property is decoded, at the drain)."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from kernel_support import make_package

from sengen.runtime import Duration, set_checks
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.handles import RemoteHandle
from sengen.runtime.components.transport.outbox import Outbox
from sengen.runtime.components.transport.transport import Peer, Transport
from sengen.runtime.errors import CallFailed
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.kernel.query import parse_query
from sengen.runtime.objects import proxies
from sengen.runtime.objects.codec import class_codec
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.registry import registry

SENDER = "a" * 32
BUS = "batching.b"


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("batching"), "batching_gen")


def frames_of(message: bytes) -> list[wire.Frame]:
    batch = wire.decode(message)
    assert isinstance(batch, wire.Batch)
    return [wire.read_item(batch.sender, k, batch.data[s:e]) for k, s, e in batch.items()]


# -- the frame -----------------------------------------------------------------------------------


def test_a_batch_carries_frames_of_every_kind_in_order() -> None:
    frames: list[wire.Frame] = [
        wire.Removed(SENDER, 3, 9),
        wire.Changes(SENDER, 17, (9, 4), (b"\x01\x02", b"")),
        wire.Emitted(SENDER, 9, 17, b"\x03"),
        wire.Result(SENDER, 5, wire.FAILED, "X", "why", b""),
    ]
    message = wire.Batch.header(SENDER) + b"".join(f.item() for f in frames)
    assert frames_of(message) == frames
    batch = wire.decode(message)
    assert isinstance(batch, wire.Batch) and batch.encode() == message


@pytest.mark.parametrize(
    ("tail", "problem"),
    [
        (b"\x02\x00", "batch item truncated"),
        (b"\x02\xff\x00\x00\x00abc", "truncated at byte"),
        (wire.Bye(SENDER).item().replace(b"\x0a", b"\x0b", 1), "frame kind 11 in a batch"),
        (wire.Stamped(SENDER, 1, b"").item(), "frame kind 7 in a batch"),
        (b"\x63\x00\x00\x00\x00", "frame kind 99 in a batch"),
    ],
)
def test_a_malformed_batch_fails_at_the_bad_item_after_the_good_ones(
    tail: bytes, problem: str
) -> None:
    good = wire.Removed(SENDER, 1, 2)
    batch = wire.decode(wire.Batch.header(SENDER) + good.item() + tail)
    assert isinstance(batch, wire.Batch)
    items = batch.items()
    kind, start, end = next(items)
    assert wire.read_item(SENDER, kind, batch.data[start:end]) == good
    with pytest.raises(wire.WireError, match=problem):
        next(items)


def test_changes_are_split_in_place_in_the_order_of_their_objects() -> None:
    changes = wire.Changes(SENDER, -5, (7, 1 << 63, 2), (b"st", b"", b"xyz"))
    body = b"pad" + changes.body()
    time, oids, states = wire.Changes.split(body, 3, len(body))
    assert (time, oids, list(states)) == (-5, (7, 1 << 63, 2), [b"st", b"", b"xyz"])
    assert wire.decode(changes.encode()) == changes
    ids = wire.pack_ids(changes.oids)
    assert wire.Changes.item_head(-5, ids, [2, 2, 5]) + b"stxyz" == changes.item()
    # States of one size: their ends as a range are packed as the same list would be.
    assert wire.Changes.item_head(1, ids, range(4, 13, 4)) == wire.Changes.item_head(
        1, ids, [4, 8, 12]
    )


def _body(count: int, oids: bytes, ends: bytes, states: bytes) -> bytes:
    return wire._CHANGES_HEAD.pack(0, count) + oids + ends + states


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"\x00" * 11, "changes of 11 bytes are too short"),
        (_body(0, b"", b"", b""), "0 changes do not fit"),
        (_body(2, b"\x01" * 8, b"\x00" * 4, b""), "2 changes do not fit in 24 bytes"),
        (_body(1, b"\x01" * 8, b"\x05\x00\x00\x00", b"abcd"), "do not add up to 4 bytes"),
        (_body(2, b"\x01" * 16, b"\x03\x00\x00\x00\x02\x00\x00\x00", b"ab"), "add up"),
    ],
)
def test_changes_whose_columns_disagree_are_refused(body: bytes, problem: str) -> None:
    with pytest.raises(wire.WireError, match=problem):
        wire.Changes.split(body, 0, len(body))


# -- the producer's side: one message per commit, split at the limit ------------------------------


class Committing(Component):
    """Self-driven: publishes ``count`` counting sensors and commits ``cycles`` times, with an
    outbox holding an interest in them; the messages the outbox sends are kept."""

    def __init__(self, impls: ModuleType, count: int, cycles: int, limit: int) -> None:
        self.impls = impls
        self.count = count
        self.cycles = cycles
        self.limit = limit
        self.messages: list[bytes] = []
        self.commits = 0

    def send(self, data: bytes, what: Any) -> bool:
        self.messages.append(data)
        return True

    def run(self, api: RunApi) -> None:
        outbox = Outbox(SENDER, api.bus_space.interests, self.send, self.limit)
        outbox.open(1, parse_query(f"SELECT kbus.Sensor FROM {BUS}"))
        source = api.get_source(BUS)
        source.add([self.impls.Counting(f"s{i}", i) for i in range(self.count)])
        for _ in range(self.cycles):
            api.drain_inputs()
            api.update()
            api.commit()
            self.commits += 1
        outbox.close_all()
        api.request_kernel_stop(0)


def commit_messages(impls: ModuleType, count: int, cycles: int, limit: int) -> list[bytes]:
    component = Committing(impls, count, cycles, limit)
    kernel = Kernel(load_config_text("kernel: {appName: batching}\n"), [("c", component, 1)])
    assert kernel.run(Duration.parse("20 s")) == 0
    assert component.commits == cycles
    return component.messages


def shape(frames: list[wire.Frame]) -> list[tuple[str, int]]:
    """Kind and object (by order of appearance: ids differ from run to run) of each frame:
    what must not depend on how messages are cut."""
    objects: dict[int, int] = {}
    shown = []
    for f in frames:
        assert isinstance(f, (wire.Added, wire.Changes, wire.Emitted, wire.Removed))
        for oid in f.oids if isinstance(f, wire.Changes | wire.Added) else (f.oid,):
            shown.append((type(f).__name__, objects.setdefault(oid, len(objects))))
    return shown


def states(frames: list[wire.Frame]) -> list[bytes]:
    return [state for f in frames if isinstance(f, wire.Changes) for state in f.states]


def test_each_commit_leaves_as_one_message_with_every_change_and_event_in_order(
    impls: ModuleType,
) -> None:
    messages = commit_messages(impls, count=20, cycles=5, limit=16 << 20)
    per_message = [frames_of(m) for m in messages]
    # The first commit publishes: the snapshots of all objects in one frame, then (the same
    # commit's) nothing else; every later commit: the changes of all objects in one frame, then
    # the three events of each.
    (published,) = per_message[0]
    assert isinstance(published, wire.Added) and len(published.oids) == 20
    assert len(messages) == 5
    oids = list(published.oids)
    for frames in per_message[1:]:
        changes = frames[0]
        assert isinstance(changes, wire.Changes) and list(changes.oids) == oids
        assert [type(f).__name__ for f in frames[1:]] == ["Emitted"] * 60
        times = {f.time for f in frames if isinstance(f, (wire.Changes, wire.Emitted))}
        assert len(times) == 1  # one commit's frames, one commit time


def test_a_commit_over_the_limit_is_cut_into_messages_within_it_in_the_same_order(
    impls: ModuleType,
) -> None:
    whole = [f for m in commit_messages(impls, 60, 4, 16 << 20) for f in frames_of(m)]
    limit = 2200  # a snapshot with its class's description fits, no commit does
    cut_messages = commit_messages(impls, 60, 4, limit)
    cut = [f for m in cut_messages for f in frames_of(m)]
    assert len(cut_messages) >= 2 * 4  # several messages per commit
    room = limit - wire.envelope(SENDER)  # what a step stamp may need besides
    assert max(len(m) for m in cut_messages) <= room + len(wire.Batch.header(SENDER))
    assert shape(cut) == shape(whole)
    codec = class_codec(impls.Counting.META)

    def count(frames: list[wire.Frame]) -> int:
        return sum(isinstance(f, wire.Changes) for f in frames)

    assert count(cut) > count(whole) == 3  # a commit's changes cut into several frames
    values = [codec.decode_properties(state) for state in states(cut)]
    assert values == [codec.decode_properties(state) for state in states(whole)]


def test_a_result_over_the_limit_fails_the_call_instead_of_vanishing(impls: ModuleType) -> None:
    sent: list[bytes] = []

    def send(data: bytes, what: Any) -> bool:
        sent.append(data)
        return True

    from sengen.runtime.kernel.publisher import Interests

    outbox = Outbox(SENDER, Interests(), send, 2000)
    outbox.reply(41, None, None, CallFailed("Verbose", "x" * 5000))
    outbox.reply(42, None, None, CallFailed("Short", "fits"))
    results = [f for m in sent for f in frames_of(m)]
    assert [(r.call_id, r.status, r.error_type) for r in results if isinstance(r, wire.Result)] == [
        (41, wire.FAILED, "MessageTooLarge"),
        (42, wire.FAILED, "Short"),
    ]
    assert all(len(m) <= 2000 for m in sent)


CARRIER_STL = """\
package carry;

sequence<u8, 8> Blob;

class Carrier
{
  var data : Blob;
  var note : string [confirmed];
}
"""

CARRIER_IMPLEMENTATIONS = """\
from {root}.carry import CarrierBase


class Carrying(CarrierBase):
    pass
"""


@pytest.fixture(scope="module")
def carriers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    folder = tmp_path_factory.mktemp("carriers")
    yield from make_package(folder, "carry_gen", "carry", CARRIER_STL, CARRIER_IMPLEMENTATIONS)


Writes = dict[int, tuple[str, Any]]  # by object: the property set and its value


class Writing(Component):
    """Self-driven: publishes ``count`` carriers, then commits once per entry of ``cycles``,
    which says what each object sets; with an outbox holding an interest in them. One more
    carrier, the last of the objects, is published on a bus that no interest holds."""

    def __init__(
        self,
        impls: ModuleType,
        count: int,
        cycles: list[Writes],
        where: str = "",
        limit: int = 16 << 20,
    ) -> None:
        self.impls = impls
        self.count = count
        self.cycles = cycles
        self.where = where
        self.limit = limit
        self.messages: list[bytes] = []

    def send(self, data: bytes, what: Any) -> bool:
        self.messages.append(data)
        return True

    def run(self, api: RunApi) -> None:
        outbox = Outbox(SENDER, api.bus_space.interests, self.send, self.limit)
        outbox.open(1, parse_query(f"SELECT carry.Carrier FROM {BUS} {self.where}"))
        carriers = [self.impls.Carrying(f"c{i}") for i in range(self.count + 1)]
        api.get_source(BUS).add(carriers[:-1])
        api.get_source("batching.unheld").add(carriers[-1])
        api.drain_inputs()
        api.commit()
        for writes in self.cycles:
            api.drain_inputs()
            for index, (name, value) in writes.items():
                getattr(carriers[index], f"set_next_{name}")(value)
            api.commit()
        outbox.close_all()
        api.request_kernel_stop(0)


def written(component: Writing) -> list[list[tuple[int, dict[str, Any]]]]:
    """Run ``component``; what each of its messages sent, decoded: the changes, each as the
    object (by order of publication) and its changed properties, in order."""
    kernel = Kernel(load_config_text("kernel: {appName: carrying}\n"), [("c", component, 1)])
    assert kernel.run(Duration.parse("20 s")) == 0
    frames = [frames_of(m) for m in component.messages]
    added = [o for f in itertools.chain(*frames) if isinstance(f, wire.Added) for o in f.oids]
    order = {oid: i for i, oid in enumerate(added)}
    codec = class_codec(component.impls.Carrying.META)
    return [
        [
            (order[oid], codec.decode_properties(state))
            for f in message
            if isinstance(f, wire.Changes)
            for oid, state in zip(f.oids, f.states, strict=True)
        ]
        for message in frames
    ]


def committed(
    carriers: ModuleType, cycles: list[Writes], where: str = ""
) -> list[dict[int, dict[str, Any]]]:
    """What each commit after the publication sent, decoded: by object (in the order of the
    publication), the changed properties."""
    first, *later = written(Writing(carriers, 4, cycles, where))
    assert first == []
    return [dict(changes) for changes in later]


def test_a_commit_that_changed_one_property_of_every_object_sends_each_change(
    carriers: ModuleType,
) -> None:
    """Such a commit is encoded without a Python step per object: it sends what a commit of
    different changes sends, each object's own value, in order, for a byte sequence and for
    any other type; a commit in which the objects changed different properties too."""
    cycles: list[Writes] = [
        {i: ("data", bytes([i]) * (i + 1)) for i in range(4)},
        {i: ("note", f"n{i}") for i in range(4)},
        {i: ("note", f"m{i}") for i in range(5)},  # with the carrier no interest holds
        {0: ("data", b"zero"), 1: ("note", "one"), 3: ("data", b"\x03" * 4)},
        {2: ("data", b"two")},
    ]
    assert committed(carriers, cycles) == [
        {i: {"data": bytes([i]) * (i + 1)} for i in range(4)},
        {i: {"note": f"n{i}"} for i in range(4)},
        {i: {"note": f"m{i}"} for i in range(4)},
        {0: {"data": b"zero"}, 1: {"note": "one"}},  # c3 set the value it had: no change
        {2: {"data": b"two"}},
    ]


def test_an_object_that_stopped_matching_is_left_out_of_the_next_commit_alike(
    carriers: ModuleType,
) -> None:
    """The objects of a commit that changed one property alike are found once while the same
    objects change again; one that an interest stops holding meanwhile is not sent."""
    cycles: list[Writes] = [
        {i: ("data", bytes([i]) * 2) for i in range(4)},
        {i: ("data", bytes([i]) * 3) for i in range(4)},
        {0: ("note", "out"), 1: ("data", b"mixed")},  # not alike: the objects above stay found
        {i: ("data", bytes([i]) * 4) for i in range(4)},
    ]
    assert committed(carriers, cycles, where="WHERE note != 'out'") == [
        {i: {"data": bytes([i]) * 2} for i in range(4)},
        {i: {"data": bytes([i]) * 3} for i in range(4)},
        {0: {"note": "out"}, 1: {"data": b"mixed"}},
        {i: {"data": bytes([i]) * 4} for i in range(1, 4)},
    ]


@pytest.mark.parametrize("sizes", ["one size", "different sizes"])
def test_a_commit_alike_over_a_message_is_cut_into_messages_in_order(
    carriers: ModuleType, sizes: str
) -> None:
    def payload(i: int, cycle: int) -> bytes:
        return bytes([cycle]) * (8 if sizes == "one size" else 1 + (i + cycle) % 8)

    count, limit = 120, 1500  # a message holds about 45 changes of 8 bytes
    cycles: list[Writes] = [{i: ("data", payload(i, c)) for i in range(count)} for c in (1, 2)]
    component = Writing(carriers, count, cycles, limit=limit)
    messages = written(component)
    room = limit - wire.envelope(SENDER)  # what a step stamp may need besides
    assert max(len(m) for m in component.messages) <= room + len(wire.Batch.header(SENDER))
    sent = [change for message in messages for change in message]
    assert sent == [(i, {"data": payload(i, c)}) for c in (1, 2) for i in range(count)]
    assert sum(1 for changes in messages if changes) >= 2 * 3  # three messages a commit at least


def test_with_checks_off_a_value_that_cannot_be_encoded_is_left_out_alone(
    carriers: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    too_long = b"123456789"  # the Blob holds at most 8
    cycles: list[Writes] = [
        {0: ("data", b"a"), 1: ("data", too_long), 2: ("data", b"c"), 3: ("data", b"d")},
        {0: ("note", "fine"), 1: ("note", "also"), 2: ("note", 7), 3: ("note", "ok")},
    ]
    set_checks(False)
    try:
        with caplog.at_level(logging.ERROR, "sengen.transport"):
            sent = committed(carriers, cycles)
    finally:
        set_checks(True)
    assert sent == [
        {0: {"data": b"a"}, 2: {"data": b"c"}, 3: {"data": b"d"}},
        {0: {"note": "fine"}, 1: {"note": "also"}, 3: {"note": "ok"}},
    ]
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 2, errors
    assert errors[0].startswith(f"set of {BUS}.c1 not sent: carry.Blob holds at most 8")
    assert errors[1].startswith(f"set of {BUS}.c2 not sent: expected string, got 7")


# -- the subscriber's side -----------------------------------------------------------------------


def counting_state(impls: ModuleType) -> dict[str, Any]:
    obj = impls.Counting("s", 1)
    return {p.meta.stl_name: p.get(obj) for p in obj._PROPS.values()}


def change(impls: ModuleType, **values: Any) -> bytes:
    return class_codec(impls.Counting.META).encode_properties(values)


def test_latest_decodes_only_the_newest_value_of_each_property(impls: ModuleType) -> None:
    codec = class_codec(impls.Counting.META)
    broken = change(impls, a=1)[:-2]  # a change of ``a`` alone, truncated
    values, errors = codec.latest(
        [change(impls, a=3), broken, change(impls, a=2, b=2), {"reading": 1.5}, change(impls, b=9)]
    )
    # ``broken`` is older than a valid ``a``: never decoded, so no error; ``b`` is the newer 2.
    assert values == {"a": 3, "b": 2, "reading": 1.5}
    assert errors == []
    values, errors = codec.latest([broken, change(impls, a=2)])
    assert values == {"a": 2}
    assert len(errors) == 1 and "truncated" in str(errors[0])


class Harness:
    """A transport (no session) with one peer holding one object, and a proxy of it."""

    def __init__(self, impls: ModuleType) -> None:
        self.transport = Transport()
        self.peer = self.transport._peers[SENDER] = Peer(SENDER, 0, label="producer/1")
        meta = impls.Counting.META
        _, proxy_class = registry.proxies(meta)
        self.handle = RemoteHandle(
            meta, proxy_class, SENDER, 9, "s", BUS, counting_state(impls), 0, lambda *a: None,
            self.peer.lock,
        )  # fmt: skip
        self.peer.handles[9] = self.handle
        self.context = Context("subscriber")
        self.context.thread = threading.get_ident()
        self.proxy: Any = self.handle.view_for(self.context)
        self.impls = impls

    def changed(self, time: int, **values: Any) -> bytes:
        return wire.Changes(SENDER, time, (9,), (change(self.impls, **values),)).item()

    def receive(self, *items: bytes) -> None:
        self.transport.handle_frame("", wire.Batch.header(SENDER) + b"".join(items))


def test_a_bad_frame_in_a_batch_is_dropped_alone(
    impls: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    harness = Harness(impls)
    short = b"\x02\x04\x00\x00\x00abcd"  # changes without room for their time and count
    with caplog.at_level(logging.WARNING, "sengen.transport"):
        harness.receive(harness.changed(5, a=1), short, harness.changed(6, b=2))
    harness.proxy._refresh_()
    assert (harness.proxy.a, harness.proxy.b, harness.proxy.last_commit_time) == (1, 2, 6)
    assert "dropped a malformed frame (4 bytes) of a batch: changes of 4 bytes" in caplog.text


def test_changes_of_objects_this_process_does_not_hold_are_skipped(impls: ModuleType) -> None:
    harness = Harness(impls)
    mine, other = change(impls, a=4), change(impls, a=5)
    harness.receive(wire.Changes(SENDER, 3, (77, 9, 78), (other, mine, other)).item())
    harness.proxy._refresh_()
    assert (harness.proxy.a, harness.proxy.last_commit_time) == (4, 3)


def test_one_commit_of_two_held_objects_reaches_each_its_own_change(impls: ModuleType) -> None:
    harness = Harness(impls)
    meta = impls.Counting.META
    _, proxy_class = registry.proxies(meta)
    second = RemoteHandle(
        meta, proxy_class, SENDER, 10, "t", BUS, counting_state(impls), 0, lambda *a: None,
        harness.peer.lock,
    )  # fmt: skip
    harness.peer.handles[10] = second
    other: Any = second.view_for(harness.context)
    ours = (change(impls, a=4), change(impls, b=6))
    harness.receive(wire.Changes(SENDER, 3, (10, 9), ours).item())
    harness.proxy._refresh_()
    other._refresh_()
    assert (harness.proxy.a, harness.proxy.b, harness.proxy.last_commit_time) == (0, 6, 3)
    assert (other.a, other.b, other.last_commit_time) == (4, 0, 3)
    assert not harness.peer.lock.locked()


def test_changes_wait_encoded_until_the_drain_and_apply_as_one_commit(
    impls: ModuleType, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxies, "_warned_at", [0.0])  # whatever warned just before
    harness = Harness(impls)
    seen: list[tuple[str, Any]] = []
    harness.proxy.on_a_changed(lambda v: seen.append(("a", v)))
    harness.proxy.on_b_changed(lambda v: seen.append(("b", v)))
    unknown = wire.Changes(SENDER, 8, (9,), (b"\x01\x00\x00\x00zzzz",)).item()
    with caplog.at_level(logging.WARNING, "sengen.transport"):
        harness.receive(
            harness.changed(5, b=7), harness.changed(6, a=1), harness.changed(7, a=2), unknown
        )
        assert harness.proxy.a == 0  # nothing applied before the drain
        harness.proxy._refresh_()
    # Declaration order (as a local proxy), the latest of each, the newest commit's time; the
    # change of an unknown property is dropped with a warning and the rest applies.
    assert seen == [("a", 2), ("b", 7)]
    assert harness.proxy.last_commit_time == 8
    assert "dropped 1 malformed change(s) of 'batching.b.s'" in caplog.text
    # The handle's own state (for proxies made later) holds the same.
    later: Any = harness.handle.view_for(Context("later"))
    assert (later.a, later.b) == (2, 7)


def test_a_handle_settles_its_encoded_changes_so_they_never_pile_up(impls: ModuleType) -> None:
    harness = Harness(impls)
    for time in range(1, 1001):
        harness.receive(harness.changed(time, a=time))
    assert len(harness.handle.unsettled) < 100
    harness.proxy._refresh_()
    assert harness.proxy.a == 1000
