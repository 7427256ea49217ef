"""Costs that follow change (issue 28, docs/scale.md): a local proxy is refreshed only after its
owner committed a change of it, a remote proxy only after something arrived for it, in creation
order whatever the order the owners committed in; a publishing component tracks changes only
while something reads them."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
from objects_support import Tree, cycle, imported_tree

from sengen.runtime.components.transport.handles import RemoteHandle, deliver_changes
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.objects import values
from sengen.runtime.objects.codec import class_codec
from sengen.runtime.objects.context import Context
from sengen.testing import TestKernel

ROOT = "objgen_scale"
BUS = "local.bus"
PERIOD = 10_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("scale"), ROOT) as generated:
        yield generated


def gauge(tree: Tree, context: Context, name: str) -> Any:
    obj = tree.devices.GaugeBase(name, serial=f"S-{name}", gain=0.5)
    obj.set_tag_id(1)
    obj.set_slot(1)
    obj._bind_(context, BUS, 0)
    return obj


def test_only_the_proxies_of_changed_objects_are_refreshed(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauges = [gauge(tree, owner, f"g{i}") for i in range(20)]
    proxies = [tree.devices.GaugeLocalProxy(g, subscriber) for g in gauges]
    changing = random.sample(range(20), 5)
    readings = {i: random.uniform(1.0, 100.0) for i in changing}

    def update() -> None:
        for i, value in readings.items():
            gauges[i].set_next_reading(value)

    cycle(owner, PERIOD, update=update)
    assert {proxies.index(p) for p in subscriber.queued} == set(changing)
    cycle(subscriber, PERIOD)
    assert [p.reading for p in proxies] == [readings.get(i, 0.0) for i in range(20)]
    assert not subscriber.stale and not subscriber.queued
    cycle(owner, 2 * PERIOD, update=update)  # the same values again: nothing changed
    assert not subscriber.stale


def test_refresh_runs_in_proxy_creation_order_whatever_the_commit_order(tree: Tree) -> None:
    first, second, subscriber = Context("first"), Context("second"), Context("subscriber")
    owners = [gauge(tree, random.choice((first, second)), f"g{i}") for i in range(12)]
    order = list(range(12))
    random.shuffle(order)
    proxies = [tree.devices.GaugeLocalProxy(owners[i], subscriber) for i in order]
    seen: list[str] = []
    for proxy in proxies:
        proxy.on_reading_changed(lambda _value, name=proxy.name: seen.append(name))

    def update() -> None:
        for obj in owners:
            obj.set_next_reading(random.uniform(1.0, 2.0))

    with second.active(), first.active():
        update()
    second.commit(PERIOD)  # the second owner commits first
    first.commit(PERIOD)
    cycle(subscriber, PERIOD)
    assert seen == [p.name for p in proxies]


def test_a_closed_proxy_is_no_longer_watched(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    obj = gauge(tree, owner, "g")
    proxy = tree.devices.GaugeLocalProxy(obj, subscriber)
    other = tree.devices.GaugeLocalProxy(obj, subscriber)
    assert [p for _, p in owner.watchers[obj]] == [proxy, other]
    proxy._close_()
    assert [p for _, p in owner.watchers[obj]] == [other]
    value = random.uniform(1.0, 2.0)
    cycle(owner, PERIOD, update=lambda: obj.set_next_reading(value))
    assert list(subscriber.stale) == [other]
    cycle(subscriber, PERIOD)
    assert (proxy.reading, other.reading) == (0.0, value)
    other._close_()
    assert obj not in owner.watchers


def remote_handles(tree: Tree, count: int, lock: threading.Lock) -> list[RemoteHandle]:
    """``count`` remote objects of a process, as the transport holds them, without one."""
    meta = tree.devices.Gauge.META
    state = {p.stl_name: values.zero(p.type) for p in meta.all_properties}
    proxy_class = tree.devices.GaugeRemoteProxy
    send = lambda *_: None  # noqa: E731  (no calls here)
    return [
        RemoteHandle(meta, proxy_class, "zid", i, f"g{i}", BUS, dict(state), 0, send, lock)
        for i in range(count)
    ]


def test_only_the_remote_proxies_something_arrived_for_are_refreshed(tree: Tree) -> None:
    subscriber, lock = Context("subscriber"), threading.Lock()
    handles = remote_handles(tree, 20, lock)
    proxies: list[Any] = [h.view_for(subscriber) for h in handles]
    seen: list[str] = []
    for proxy in proxies:
        proxy.on_reading_changed(lambda _value, name=proxy.name: seen.append(name))
    fed = random.sample(range(20), 6)
    readings = {i: random.uniform(1.0, 100.0) for i in fed}
    codec = class_codec(tree.devices.Gauge.META)
    deliver_changes(  # one commit, in an order that is not the proxies' creation order
        lock,
        [handles[i] for i in fed],
        [codec.encode_properties({"reading": readings[i]}) for i in fed],
        PERIOD,
    )
    assert {proxies.index(p) for p in subscriber.queued} == set(fed)
    cycle(subscriber, PERIOD)
    assert [p.reading for p in proxies] == [readings.get(i, 0.0) for i in range(20)]
    assert seen == [f"g{i}" for i in sorted(fed)]
    assert not subscriber.stale and not subscriber.queued
    event = random.choice(proxies)
    event._receive_event_("ticked", (random.randint(1, 9), "x"), 2 * PERIOD)
    assert list(subscriber.stale) == [event]
    event._close_()
    cycle(subscriber, 2 * PERIOD)  # a closed proxy is not refreshed (and not kept queued)
    assert len(event._arrived_[4]) == 1 and not subscriber.queued


def test_no_arrival_is_left_unread_while_the_drain_races_the_transport(tree: Tree) -> None:
    """The transport's thread appends then touches; the drain unqueues then reads: whatever the
    interleaving, a drain after the last arrival shows it."""
    subscriber, lock = Context("subscriber"), threading.Lock()
    handle = remote_handles(tree, 1, lock)[0]
    proxy = cast(Any, handle.view_for(subscriber))
    codec = class_codec(tree.devices.Gauge.META)
    count = random.randint(3000, 4000)
    changes = [codec.encode_properties({"reading": float(k)}) for k in range(1, count + 1)]

    draining = threading.Event()

    def feed() -> None:
        draining.wait(10)  # the drains run while it feeds, however loaded the machine
        for k, change in enumerate(changes, 1):
            deliver_changes(lock, [handle], [change], k)
            if k % 64 == 0:
                time.sleep(0)  # lets a drain in between arrivals

    feeder = threading.Thread(target=feed, name="feeder")
    feeder.start()
    drains = 0
    while True:
        cycle(subscriber, PERIOD)
        drains += 1
        draining.set()
        if not feeder.is_alive():
            break
    feeder.join()
    cycle(subscriber, PERIOD)
    assert proxy.reading == float(count) and drains > 1


class Publishing(Component):
    def __init__(self, tree: Tree, count: int) -> None:
        self.tree, self.count = tree, count
        self.context: Context | None = None

    def run(self, api: RunApi) -> None:
        self.context = api._runner.context
        source = api.get_source(BUS)
        for i in range(self.count):
            obj = self.tree.devices.GaugeBase(f"g{i}", serial=f"S{i}", gain=0.5)
            obj.set_tag_id(1)
            obj.set_slot(1)
            source.add(obj)
        api.exec_loop(PERIOD, lambda: None)


class Selecting(Component):
    def __init__(self, query: str) -> None:
        self.query = query
        self.subscription: Any = None

    def run(self, api: RunApi) -> None:
        self.subscription = api.select(self.query)
        api.exec_loop(PERIOD, lambda: None)


@pytest.mark.parametrize(
    ("where", "tracked"),
    [("", False), (" WHERE reading < 0.5", True), (" WHERE serial = 'S1'", False)],
)
def test_changes_are_tracked_only_while_a_condition_reads_them(
    tree: Tree, where: str, tracked: bool
) -> None:
    count = random.randint(3, 8)
    publishing = Publishing(tree, count)
    selecting = Selecting(f"SELECT objtest.Gauge FROM {BUS}{where}")
    with TestKernel([("pub", publishing), ("sub", selecting)]) as tk:
        tk.step(3)
        assert publishing.context is not None
        assert len(selecting.subscription) == (1 if "serial" in where else count)
        assert publishing.context.track_changes is tracked
        selecting.subscription.close()
        tk.step(2)
        assert publishing.context.track_changes is False
