"""A commit that changed the same one fixed-size property of many objects travels as one
``wire.Column`` (issue 28): the values packed in one C call at the owner, unpacked in one at the
subscriber, each proxy keeping the latest value of each property. In process, without Zenoh:
the outbox's messages, decoded, and the subscriber's side fed with them."""

from __future__ import annotations

import logging
import random
import struct
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any, cast

import pytest
from kernel_support import make_package

from sengen.runtime import Duration
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.handles import RemoteHandle
from sengen.runtime.components.transport.outbox import Outbox
from sengen.runtime.components.transport.transport import Peer, Transport
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.kernel.query import parse_query
from sengen.runtime.objects import proxies
from sengen.runtime.objects.codec import class_codec, member_id
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.registry import registry

SENDER = "c" * 32
BUS = "columns.b"

STL = """\
package gauge;

enum Level : u8 { low, mid, high }

quantity<f64, deg> Angle [min: -180, max: 180];

class Gauge
{
  var reading : f64;
  var ratio   : f32;
  var count   : i32;
  var small   : u8;
  var on      : bool;
  var level   : Level;
  var age     : Duration;
  var angle   : Angle;
  var label   : string [confirmed];
}
"""

IMPLEMENTATIONS = """\
from {root}.gauge import GaugeBase, Level


class Gauging(GaugeBase):
    pass
"""

# Each fixed-size property and a random value of it (seeded: the same values every run).
_random = random.Random(28)


def _value(impls: ModuleType, name: str) -> Any:
    if name == "reading":
        return _random.uniform(-1e9, 1e9)
    if name == "ratio":  # what an f32 holds exactly
        return struct.unpack("<f", struct.pack("<f", _random.uniform(-1e3, 1e3)))[0]
    if name == "count":
        return _random.randint(-(2**31), 2**31 - 1)
    if name == "small":
        return _random.randint(0, 255)
    if name == "on":
        return _random.random() < 0.5
    if name == "level":
        return _random.choice(list(impls.Level))
    if name == "age":
        return Duration(_random.randint(-(2**62), 2**62))
    assert name == "angle"
    return _random.uniform(-180, 180)


FIXED = ["reading", "ratio", "count", "small", "on", "level", "age", "angle"]


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    folder = tmp_path_factory.mktemp("columns")
    yield from make_package(folder, "columns_gen", "gauge", STL, IMPLEMENTATIONS)


Writes = list[dict[int, tuple[str, Any]]]  # per commit, by object: the property and its value


class Writing(Component):
    """Self-driven: publishes ``count`` gauges, then commits once per entry of ``cycles``; an
    outbox holding an interest in them keeps the messages it sends."""

    def __init__(
        self, impls: ModuleType, count: int, cycles: Writes, limit: int, where: str = ""
    ) -> None:
        self.impls, self.count, self.cycles, self.limit = impls, count, cycles, limit
        self.where = where
        self.messages: list[bytes] = []

    def send(self, data: bytes, what: Any) -> bool:
        self.messages.append(data)
        return True

    def run(self, api: RunApi) -> None:
        outbox = Outbox(SENDER, api.bus_space.interests, self.send, self.limit)
        outbox.open(1, parse_query(f"SELECT gauge.Gauge FROM {BUS} {self.where}"))
        gauges = [self.impls.Gauging(f"g{i}") for i in range(self.count)]
        api.get_source(BUS).add(gauges)
        api.drain_inputs()
        api.commit()
        for writes in self.cycles:
            api.drain_inputs()
            for index, (name, value) in writes.items():
                getattr(gauges[index], f"set_next_{name}")(value)
            api.commit()
        outbox.close_all()
        api.request_kernel_stop(0)


def messages_of(
    impls: ModuleType, count: int, cycles: Writes, limit: int = 16 << 20, where: str = ""
) -> list[bytes]:
    component = Writing(impls, count, cycles, limit, where)
    kernel = Kernel(load_config_text("kernel: {appName: columns}\n"), [("c", component, 1)])
    assert kernel.run(Duration.parse("20 s")) == 0
    return component.messages


def frames_of(message: bytes) -> list[wire.Frame]:
    batch = wire.decode(message)
    assert isinstance(batch, wire.Batch | wire.Part)
    return [wire.read_item(batch.sender, k, batch.data[s:e]) for k, s, e in batch.items()]


class Subscriber:
    """A transport without a session, fed the messages; a proxy of each object it publishes."""

    def __init__(self, impls: ModuleType) -> None:
        self.transport = Transport()
        self.peer = self.transport._peers[SENDER] = Peer(SENDER, 0, label="producer/1")
        self.meta = impls.Gauging.META
        self.context = Context("subscriber")
        self.context.thread = threading.get_ident()
        self.proxies: list[Any] = []

    def hold(self, oid: int, name: str, state: dict[str, Any]) -> Any:
        _, proxy_class = registry.proxies(self.meta)
        handle = RemoteHandle(
            self.meta, proxy_class, SENDER, oid, name, BUS, dict(state), 0, lambda *a: None,
            self.peer.lock,
        )  # fmt: skip
        self.peer.handles[oid] = handle
        proxy = handle.view_for(self.context)
        self.proxies.append(proxy)
        return proxy

    def receive(self, messages: list[bytes]) -> None:
        for message in messages:
            frames = frames_of(message)
            for frame in frames:
                if isinstance(frame, wire.Added):
                    for oid, name, state in zip(frame.oids, frame.names, frame.states, strict=True):
                        self.hold(oid, name, class_codec(self.meta).decode_properties(state))
            items = [f.item() for f in frames if not isinstance(f, wire.Added)]
            if items:
                self.transport.handle_frame("", wire.Batch.header(SENDER) + b"".join(items))

    def drain(self) -> None:
        self.context.refresh()


@pytest.mark.parametrize("name", FIXED)
def test_a_commit_alike_of_a_fixed_size_property_is_one_column_and_arrives_whole(
    impls: ModuleType, name: str
) -> None:
    count = 50
    cycles: Writes = []
    last = {i: getattr(impls.Gauging("zero"), name) for i in range(count)}
    for _ in range(3):  # every object changes at every commit
        for i in range(count):
            value = _value(impls, name)
            while value == last[i]:
                value = _value(impls, name)
            last[i] = value
        cycles.append({i: (name, last[i]) for i in range(count)})
    messages = messages_of(impls, count, cycles)
    columns = [f for m in messages for f in frames_of(m) if isinstance(f, wire.Column)]
    assert len(columns) == 3 and not any(
        isinstance(f, wire.Changes) for m in messages for f in frames_of(m)
    )
    codec = class_codec(impls.Gauging.META)
    for column, writes in zip(columns, cycles, strict=True):
        assert column.member == member_id(name) and len(column.oids) == count
        stl_name, values, errors = codec.decode_column(column.member, column.size, column.values)
        assert (stl_name, errors) == (name, [])
        assert list(values) == [writes[i][1] for i in range(count)]
    # The subscriber shows the last commit's values, at its time.
    subscriber = Subscriber(impls)
    subscriber.receive(messages)
    subscriber.drain()
    last = cycles[-1]
    assert [getattr(p, name) for p in subscriber.proxies] == [last[i][1] for i in range(count)]
    assert {p.last_commit_time for p in subscriber.proxies} == {columns[-1].time}


def test_a_column_over_a_message_is_cut_into_columns_in_order(impls: ModuleType) -> None:
    count, limit = 400, 2000  # a message holds about 100 values of 8 bytes with their ids
    cycles: Writes = [{i: ("reading", _value(impls, "reading")) for i in range(count)}]
    messages = messages_of(impls, count, cycles, limit)
    columns = [f for m in messages for f in frames_of(m) if isinstance(f, wire.Column)]
    assert len(columns) >= 4
    assert max(len(m) for m in messages) <= limit
    codec = class_codec(impls.Gauging.META)
    sent = [v for c in columns for v in codec.decode_column(c.member, c.size, c.values)[1]]
    assert sent == [cycles[0][i][1] for i in range(count)]
    subscriber = Subscriber(impls)
    subscriber.receive(messages)
    subscriber.drain()
    assert [p.reading for p in subscriber.proxies] == sent


def test_a_filter_keeps_a_column_to_the_matching_objects_as_they_come_and_go(
    impls: ModuleType,
) -> None:
    count = 12
    inside = {1, 4, 5, 9}

    def readings() -> dict[int, tuple[str, Any]]:
        return {i: ("reading", _value(impls, "reading")) for i in range(count)}

    first, second, third = readings(), readings(), readings()
    cycles: Writes = [
        {i: ("label", "in") for i in inside},  # they start matching
        first,
        {7: ("label", "in"), 4: ("label", "out")},  # 7 comes, 4 goes
        second,
        third,
    ]
    messages = messages_of(impls, count, cycles, where="WHERE label = 'in'")
    frames = [f for m in messages for f in frames_of(m)]
    index: dict[int, int] = {}  # object id -> gauge index, from the additions' names
    for f in frames:
        if isinstance(f, wire.Added):
            index.update({o: int(n[1:]) for o, n in zip(f.oids, f.names, strict=True)})
    assert set(index.values()) == inside | {7}
    codec = class_codec(impls.Gauging.META)
    columns = [f for f in frames if isinstance(f, wire.Column)]
    assert len(columns) == 3
    decoded = [codec.decode_column(c.member, c.size, c.values)[1] for c in columns]
    sent = [
        {index[o]: v for o, v in zip(c.oids, values, strict=True)}
        for c, values in zip(columns, decoded, strict=True)
    ]
    assert sent == [
        {i: first[i][1] for i in sorted(inside)},
        {i: second[i][1] for i in sorted(inside - {4} | {7})},
        {i: third[i][1] for i in sorted(inside - {4} | {7})},
    ]


def test_columns_and_encoded_changes_apply_in_arrival_order(impls: ModuleType) -> None:
    """The latest value of each property wins, whichever way it travelled; callbacks see the
    latest once, in declaration order."""
    subscriber = Subscriber(impls)
    proxy = subscriber.hold(
        9, "g", {"label": "x", **{n: getattr(impls.Gauging("z"), n) for n in FIXED}}
    )
    seen: list[tuple[str, Any]] = []
    proxy.on_reading_changed(lambda v: seen.append(("reading", v)))
    proxy.on_count_changed(lambda v: seen.append(("count", v)))
    codec = class_codec(subscriber.meta)
    r1, r2, r3 = (_value(impls, "reading") for _ in range(3))
    c1, c2 = (_value(impls, "count") for _ in range(2))

    def column(time: int, name: str, value: Any) -> bytes:
        write, member, width = codec.column_writers[name]
        holder = impls.Gauging("h")
        holder._init_static(name, value)
        return wire.Column(SENDER, time, member, width, (9,), write([holder])).item()

    def changes(time: int, **values: Any) -> bytes:
        return wire.Changes(SENDER, time, (9,), (codec.encode_properties(values),)).item()

    batches = [
        [changes(1, reading=r1, count=c1), column(2, "reading", r2)],  # column newest
        [column(3, "count", c2), changes(4, reading=r3)],  # encoded newest
        [changes(5, label="y"), column(6, "count", c1), column(7, "reading", r1)],
    ]
    expected = [((r2, c1), 2), ((r3, c2), 4), ((r1, c1), 7)]
    before = (proxy.reading, proxy.count)
    for items, (values, time) in zip(batches, expected, strict=True):
        seen.clear()
        subscriber.transport.handle_frame("", wire.Batch.header(SENDER) + b"".join(items))
        assert (proxy.reading, proxy.count) == before  # nothing shows before the drain
        subscriber.drain()
        assert ((proxy.reading, proxy.count), proxy.last_commit_time) == (values, time)
        differ = [
            (n, v) for n, v, b in zip(("reading", "count"), values, before, strict=True) if v != b
        ]
        assert seen == differ  # once each, the latest, in declaration order
        before = values
    assert proxy.label == "y"
    # The handle's state (for proxies made later) is the same.
    later: Any = subscriber.peer.handles[9].view_for(Context("later"))
    assert (later.reading, later.count, later.label) == (r1, c1, "y")


@pytest.mark.parametrize(
    ("column", "problem"),
    [
        (("label", 8, b"\x00" * 8), "no fixed-size property of id"),  # a string
        (("reading", 4, b"\x00" * 4), "values of 4 bytes for property 'reading' of 8"),
    ],
)
def test_a_column_the_class_cannot_read_is_dropped(
    impls: ModuleType,
    caplog: pytest.LogCaptureFixture,
    column: tuple[str, int, bytes],
    problem: str,
) -> None:
    subscriber = Subscriber(impls)
    start = {"label": "x", **{n: getattr(impls.Gauging("z"), n) for n in FIXED}}
    proxy = subscriber.hold(1, "g1", start)
    name, width, values = column
    bad = wire.Column(SENDER, 5, member_id(name), width, (1,), values).item()
    good = wire.Column(SENDER, 6, member_id("count"), 4, (1,), struct.pack("<i", -77)).item()
    with caplog.at_level(logging.WARNING, "sengen.transport"):
        subscriber.transport.handle_frame("", wire.Batch.header(SENDER) + bad + good)
    subscriber.drain()
    assert (getattr(proxy, name), proxy.count, proxy.last_commit_time) == (start[name], -77, 6)
    assert problem in caplog.text


def test_a_value_that_does_not_decode_leaves_its_object_out(
    impls: ModuleType, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxies, "_warned_at", [0.0])
    subscriber = Subscriber(impls)
    start = {"label": "x", **{n: getattr(impls.Gauging("z"), n) for n in FIXED}}
    first, second = subscriber.hold(1, "g1", start), subscriber.hold(2, "g2", start)
    column = wire.Column(SENDER, 6, member_id("level"), 1, (1, 2), bytes([7, 2])).item()
    with caplog.at_level(logging.WARNING, "sengen.transport"):
        subscriber.transport.handle_frame("", wire.Batch.header(SENDER) + column)
    subscriber.drain()
    assert (first.level, first.last_commit_time) == (start["level"], 0)  # no enumerator 7
    assert (second.level, second.last_commit_time) == (impls.Level.high, 6)
    assert f"dropped 1 malformed change(s) of '{BUS}.g1': 7 is not a key" in caplog.text


def test_a_value_the_column_cannot_pack_is_sent_alone_as_before(
    impls: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """With checks off, a value that does not fit fails the column: the objects go one by
    one, the failing one named and left out."""
    from sengen.runtime import set_checks

    cycles: Writes = [{0: ("count", 1), 1: ("count", 2**40), 2: ("count", 3)}]
    set_checks(False)
    try:
        with caplog.at_level(logging.ERROR, "sengen.transport"):
            messages = messages_of(impls, 3, cycles)
    finally:
        set_checks(True)
    frames = [f for m in messages for f in frames_of(m)]
    assert not any(isinstance(f, wire.Column) for f in frames)
    changes = [f for f in frames if isinstance(f, wire.Changes)]
    codec = class_codec(impls.Gauging.META)
    assert [codec.decode_properties(s) for f in changes for s in f.states] == [
        {"count": 1},
        {"count": 3},
    ]
    assert f"set of {BUS}.g1 not sent" in caplog.text


def test_a_column_reaches_objects_held_under_other_classes_by_their_own_codecs(
    impls: ModuleType,
) -> None:
    """An object whose class this process read from its description (a dynamic proxy) and one
    of the generated class, in one column: each decodes its value with its own class."""
    from sengen.runtime.objects import describe

    subscriber = Subscriber(impls)
    start = {"label": "x", **{n: getattr(impls.Gauging("z"), n) for n in FIXED}}
    generated = subscriber.hold(1, "g1", start)
    dynamic_meta = describe.read(describe.describe(subscriber.meta))
    assert dynamic_meta is not subscriber.meta
    handle = RemoteHandle(
        dynamic_meta, describe.dynamic_proxy(dynamic_meta), SENDER, 2, "g2", BUS, dict(start),
        0, lambda *a: None, subscriber.peer.lock,
    )  # fmt: skip
    subscriber.peer.handles[2] = handle
    dynamic: Any = handle.view_for(subscriber.context)
    first, second = _value(impls, "count"), _value(impls, "count")
    column = wire.Column(
        SENDER, 9, member_id("count"), 4, (1, 2), struct.pack("<2i", first, second)
    ).item()
    subscriber.transport.handle_frame("", wire.Batch.header(SENDER) + column)
    subscriber.drain()
    assert (generated.count, dynamic.count) == (first, second)
    assert generated.last_commit_time == dynamic.last_commit_time == 9


def test_a_peer_announcing_more_objects_than_allowed_gets_what_the_bound_allows(
    impls: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 28's bad input: a publication of 20,000 objects from a process allowed 50 takes
    in 50, and the rest is refused with one warning, whatever the frame claims."""
    from sengen.runtime.components.transport.link import TransportConfig

    transport = Transport(TransportConfig(maxObjectsPerPeer=50))
    peer = transport._peers[SENDER] = Peer(SENDER, 0, label="producer/1")
    transport._by_iid[1] = cast(Any, object())  # an open interest (no subscription behind it)
    meta = impls.Gauging.META
    codec = class_codec(meta)
    state = codec.encode_state(
        {p.stl_name: getattr(impls.Gauging("z"), p.py_name) for p in meta.all_properties}
    )
    count = 20_000
    added = wire.Added(
        SENDER, 1, 7, BUS, meta.qualified_name, meta.type_hash, b"",
        tuple(range(1, count + 1)), tuple(f"g{i}" for i in range(count)), (state,) * count,
    )  # fmt: skip
    with caplog.at_level(logging.WARNING, "sengen.transport"):
        transport.handle_frame("", wire.Batch.header(SENDER) + added.item())
    assert len(peer.handles) == 50 and sorted(peer.handles) == list(range(1, 51))
    refusals = [r for r in caplog.records if "over maxObjectsPerPeer (50)" in r.getMessage()]
    assert len(refusals) == 1, caplog.text
