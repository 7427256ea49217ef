"""Behaviour of generated object classes: the double buffer, commit, change notification, events,
statics and configuration (codegen.md §3.2-§3.6, §3.8; runtime.md §1.7, §3.3-§3.8, §3.11).

The classes come from ``tests/objects_stl`` (``objtest.Device``, ``objtest.Gauge``), generated once
for this module under the root package ``objgen_objects``. Components are driven by hand, one
:func:`objects_support.cycle` at a time, as the kernel will drive them.
"""

from __future__ import annotations

import itertools
import math
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from objects_support import Tree, Worker, cycle, imported_tree, in_cycle

from sengen.runtime import ConfigError
from sengen.runtime.objects import values
from sengen.runtime.objects.context import Context

ROOT = "objgen_objects"
BUS = "local.bus"
MS = 1_000_000  # one millisecond in ns


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("objects"), ROOT) as generated:
        yield generated


def new_gauge(tree: Tree, name: str = "g", serial: str = "S-1", gain: float = 0.5) -> Any:
    """An unregistered Gauge with its ``[static_no_config]`` properties set."""
    gauge = tree.devices.GaugeBase(name, serial=serial, gain=gain)
    gauge.set_tag_id(7)
    gauge.set_slot(3)
    return gauge


def registered_gauge(tree: Tree, context: Context, name: str = "g") -> Any:
    gauge = new_gauge(tree, name)
    gauge._bind_(context, BUS, 0)
    return gauge


def zero_state(tree: Tree, cls: Any, **overrides: Any) -> dict[str, Any]:
    """A publication's state for a remote proxy: every property by STL name at its zero value."""
    state = {p.stl_name: values.zero(p.type) for p in cls.META.all_properties}
    state.update(overrides)
    return state


class Endpoint:
    """A transport stand-in that records what a remote proxy sends."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], int]] = []
        self.subscribed: list[str] = []
        self.unsubscribed: list[str] = []

    def send_call(self, proxy: Any, member: Any, args: tuple[Any, ...], call_id: int) -> None:
        self.calls.append((member.stl_name, args, call_id))

    def subscribe_event(self, proxy: Any, event: Any) -> None:
        self.subscribed.append(event.stl_name)

    def unsubscribe_event(self, proxy: Any, event: Any) -> None:
        self.unsubscribed.append(event.stl_name)


# -- the double buffer -----------------------------------------------------------------------------


def test_current_is_read_until_commit_and_next_reads_the_pending_value(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    during: list[tuple[int, int]] = []

    def update() -> None:
        gauge.set_next_level(gauge.level + 5)
        during.append((gauge.level, gauge.get_next_level()))

    cycle(owner, 1 * MS, update=update)
    assert during == [(0, 5)]
    assert gauge.level == 5
    assert gauge.get_next_level() == 5  # nothing pending: get_next returns current
    cycle(owner, 2 * MS, update=update)
    assert during[-1] == (5, 10)
    assert gauge.level == 10


def test_the_last_write_in_a_cycle_wins(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    changes: list[int] = []
    in_cycle(owner, lambda: gauge.on_level_changed(changes.append))

    def update() -> None:
        for value in (1, 2, 3):
            gauge.set_next_level(value)

    cycle(owner, 1 * MS, update=update)
    cycle(owner, 2 * MS)
    assert gauge.level == 3
    assert changes == [3]


@pytest.mark.parametrize("writes", [(0,), (99, 0), (4, 99, 0)], ids=["equal", "back", "back2"])
def test_setting_back_to_the_current_value_commits_no_change(
    tree: Tree, writes: tuple[int, ...]
) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(0))
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    own: list[int] = []
    seen: list[int] = []
    in_cycle(owner, lambda: gauge.on_level_changed(own.append))
    proxy.on_level_changed(seen.append)
    last_commit = gauge.last_commit_time
    sequence = gauge._version_[0]

    def update() -> None:
        for value in writes:
            gauge.set_next_level(value)

    cycle(owner, 5 * MS, update=update)
    cycle(owner, 6 * MS)
    cycle(subscriber, 6 * MS)
    assert gauge.level == 0
    assert own == [] and seen == []
    assert gauge.last_commit_time == last_commit
    assert gauge._version_[0] == sequence  # nothing was published


def test_nothing_is_visible_before_the_commit_except_get_next_for_the_owner(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    endpoint = Endpoint()
    remote = tree.devices.GaugeRemoteProxy(
        endpoint, subscriber, "g", "s.b", zero_state(tree, tree.devices.Gauge), 0
    )
    owner.time = 1 * MS
    with owner.active():
        owner.drain()
        gauge.set_next_level(42)
        gauge.set_next_mode(tree.types.Mode.running)
        # the owner itself still reads the committed values
        assert gauge.level == 0
        assert gauge.mode is tree.types.Mode.idle
        assert gauge.get_next_level() == 42
        # another component draining in the middle of the owner's cycle sees nothing either
        cycle(subscriber, 1 * MS)
        assert proxy.level == 0
        assert proxy.mode is tree.types.Mode.idle
        owner.commit(1 * MS)
    assert gauge.level == 42
    assert proxy.level == 0  # the proxy changes only in its subscriber's drain
    cycle(subscriber, 2 * MS)
    assert proxy.level == 42
    assert proxy.mode is tree.types.Mode.running
    # get_next is the owner's only: no proxy has it
    for view in (proxy, remote):
        assert not hasattr(view, "get_next_level")
        assert not hasattr(view, "set_next_level")  # not writable: no setter on the interface


def test_pending_values_set_before_registration_are_current_at_registration(tree: Tree) -> None:
    owner = Context("owner")
    gauge = new_gauge(tree)
    gauge.set_next_level(8)
    assert gauge.level == 0
    gauge._bind_(owner, BUS, 3 * MS)
    assert gauge.level == 8
    assert gauge.last_commit_time == 3 * MS  # before any change: the registration time


def test_last_commit_time_is_the_time_of_the_last_commit_that_changed_something(
    tree: Tree,
) -> None:
    owner = Context("owner")
    gauge = new_gauge(tree)
    gauge._bind_(owner, BUS, 1 * MS)
    assert gauge.last_commit_time == 1 * MS
    cycle(owner, 2 * MS, update=lambda: gauge.set_next_level(1))
    assert gauge.last_commit_time == 2 * MS
    cycle(owner, 3 * MS)
    cycle(owner, 4 * MS, update=lambda: gauge.set_next_level(1))
    assert gauge.last_commit_time == 2 * MS


def test_properties_cannot_be_assigned_on_any_view(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    for view in (gauge, proxy):
        for name in ("level", "serial", "tag_id", "type_"):
            with pytest.raises(AttributeError, match=f"property '{name}' of 'objtest.Gauge'"):
                setattr(view, name, 1)
            with pytest.raises(AttributeError, match=f"property '{name}' cannot be deleted"):
                delattr(view, name)
    assert gauge.level == 0 and gauge.serial == "S-1"


def test_commit_is_atomic_per_object_for_a_reader_in_another_thread(tree: Tree) -> None:
    """Properties ``a`` and ``b`` are always set equal; a local proxy refreshed in another
    thread must never see them differ (runtime.md §3.6, acceptance O9)."""
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    counter = itertools.count(1)
    mixes: list[tuple[int, int]] = []
    reads: list[int] = []

    def owner_step() -> None:
        n = next(counter)

        def update() -> None:
            gauge.set_next_a(n)
            gauge.set_next_b(n)

        cycle(owner, n * MS, update=update)

    def reader_step() -> None:
        cycle(subscriber, 0)
        a, b = proxy.a, proxy.b
        if a != b:
            mixes.append((a, b))
        reads.append(a)

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    writer = Worker(owner_step, limit=3000)
    reader = Worker(reader_step, limit=200_000)
    try:
        reader.start()
        writer.start()
        writer.join(60)
    finally:
        writer.stop()
        reader.stop()
        sys.setswitchinterval(previous)
    assert writer.steps == 3000
    assert mixes == []
    assert reads == sorted(reads)  # never an older commit after a newer one
    cycle(subscriber, 0)
    assert (proxy.a, proxy.b) == (3000, 3000)


@pytest.mark.parametrize("kind", ["local", "remote"])
def test_a_proxy_change_callback_sees_the_whole_commit(tree: Tree, kind: str) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy: Any
    if kind == "local":
        proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    else:
        state = zero_state(tree, tree.devices.Gauge)
        proxy = tree.devices.GaugeRemoteProxy(Endpoint(), subscriber, "g", "s.b", state, 0)
    seen: list[tuple[int, int]] = []
    proxy.on_a_changed(lambda a: seen.append((a, proxy.b)))

    def update() -> None:
        gauge.set_next_a(1)
        gauge.set_next_b(1)

    cycle(owner, 1 * MS, update=update)
    if kind == "remote":
        proxy._receive_state_({"a": 1, "b": 1}, 1 * MS)
    cycle(subscriber, 1 * MS)
    assert seen == [(1, 1)]


# -- change notification ---------------------------------------------------------------------------


def test_the_owners_own_callback_runs_in_its_next_drain(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    phase = ["before"]
    calls: list[tuple[str, int, int]] = []
    in_cycle(
        owner, lambda: gauge.on_level_changed(lambda v: calls.append((phase[0], v, gauge.level)))
    )

    owner.time = 1 * MS
    with owner.active():
        owner.drain()
        gauge.set_next_level(4)
        phase[0] = "commit 1"
        owner.commit(1 * MS)
    assert calls == []  # queued at commit, not run there
    owner.time = 2 * MS
    with owner.active():
        phase[0] = "drain 2"
        owner.drain()
        phase[0] = "update 2"
        owner.commit(2 * MS)
    assert calls == [("drain 2", 4, 4)]
    cycle(owner, 3 * MS)
    assert len(calls) == 1  # once per change


def test_local_proxy_callbacks_run_at_the_subscribers_drain_only_when_the_value_differs(
    tree: Tree,
) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    seen: list[int] = []
    proxy.on_level_changed(seen.append)
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(1))
    assert seen == []
    cycle(subscriber, 1 * MS)
    assert seen == [1]
    # A -> B -> A between two drains of the subscriber: no callback
    cycle(owner, 2 * MS, update=lambda: gauge.set_next_level(2))
    cycle(owner, 3 * MS, update=lambda: gauge.set_next_level(1))
    cycle(subscriber, 2 * MS)
    assert seen == [1]
    assert proxy.level == 1
    # two changes between drains: one callback with the latest value
    cycle(owner, 4 * MS, update=lambda: gauge.set_next_level(5))
    cycle(owner, 5 * MS, update=lambda: gauge.set_next_level(6))
    cycle(subscriber, 3 * MS)
    assert seen == [1, 6]
    assert proxy.last_commit_time == 5 * MS
    cycle(subscriber, 4 * MS)
    assert seen == [1, 6]


def test_a_proxy_read_twice_in_one_cycle_gives_the_same_value(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    subscriber.time = 1 * MS
    with subscriber.active():
        subscriber.drain()
        first = proxy.level
        cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(9))
        assert proxy.level == first == 0
        subscriber.commit(1 * MS)
    cycle(subscriber, 2 * MS)
    assert proxy.level == 9


def test_remote_proxy_applies_updates_at_its_drain_all_of_one_commit_together(tree: Tree) -> None:
    subscriber = Context("subscriber")
    endpoint = Endpoint()
    state = zero_state(tree, tree.devices.Gauge, serial="R-1", gain=2.0, tagId=4, level=3)
    remote = tree.devices.GaugeRemoteProxy(endpoint, subscriber, "g", "s.b", state, 10 * MS)
    assert (remote.serial, remote.gain, remote.tag_id, remote.level) == ("R-1", 2.0, 4, 3)
    assert remote.last_commit_time == 10 * MS
    assert remote.local_name == "subscriber.s.b.g"
    seen: list[tuple[str, int]] = []
    remote.on_a_changed(lambda v: seen.append(("a", v)))
    remote.on_b_changed(lambda v: seen.append(("b", v)))
    remote.on_level_changed(lambda v: seen.append(("level", v)))
    remote._receive_state_({"a": 1, "b": 1}, 11 * MS)
    assert (remote.a, remote.b) == (0, 0)  # nothing before the drain
    cycle(subscriber, 1 * MS)
    assert (remote.a, remote.b) == (1, 1)
    assert sorted(seen) == [("a", 1), ("b", 1)]
    assert remote.last_commit_time == 11 * MS
    # A -> B -> A between two drains: no callback
    remote._receive_state_({"level": 4}, 12 * MS)
    remote._receive_state_({"level": 3}, 13 * MS)
    cycle(subscriber, 2 * MS)
    assert remote.level == 3
    assert ("level", 4) not in seen and ("level", 3) not in seen


def test_subscriptions_close_idempotently_and_as_context_managers(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    seen: list[int] = []
    subscription = proxy.on_level_changed(seen.append)
    with proxy.on_level_changed(lambda v: seen.append(-v)):
        cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(1))
        cycle(subscriber, 1 * MS)
    assert seen == [1, -1]
    subscription.close()
    subscription.close()
    assert subscription.closed
    cycle(owner, 2 * MS, update=lambda: gauge.set_next_level(2))
    cycle(subscriber, 2 * MS)
    assert seen == [1, -1]


def test_subscriptions_made_before_registration_run_in_the_owners_next_drain(
    tree: Tree,
) -> None:
    owner = Context("owner")
    gauge = new_gauge(tree)
    phase = ["init"]
    calls: list[tuple[str, str]] = []
    gauge.on_level_changed(lambda v: calls.append(("changed", phase[0])))
    gauge.events.pinged.connect(lambda: calls.append(("pinged", phase[0])))
    gauge._bind_(owner, BUS, 0)
    owner.time = 1 * MS
    with owner.active():
        owner.drain()
        gauge.set_next_level(1)
        gauge.events.pinged.emit()
        phase[0] = "commit 1"
        owner.commit(1 * MS)
    phase[0] = "cycle 2"
    cycle(owner, 2 * MS)
    assert calls == [("changed", "cycle 2"), ("pinged", "cycle 2")]


# -- events ----------------------------------------------------------------------------------------


def test_events_are_held_until_commit_and_delivered_once_in_emission_order(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    own: list[tuple[int, str]] = []
    remote_side: list[tuple[int, int, str]] = []
    in_cycle(owner, lambda: gauge.events.ticked.connect(lambda c, n: own.append((c, n))))
    in_cycle(
        subscriber,
        lambda: proxy.events.ticked.connect(
            lambda info, c, n: remote_side.append((info.creation_time, c, n)), with_info=True
        ),
    )
    pings: list[str] = []
    in_cycle(subscriber, lambda: proxy.events.pinged.connect(lambda: pings.append("ping")))

    owner.time = 7 * MS
    with owner.active():
        owner.drain()
        gauge.events.ticked.emit(1, "one")
        gauge.events.pinged.emit()
        gauge.events.ticked.emit(2, "two")
        cycle(subscriber, 7 * MS)  # the subscriber drains before the owner commits
        assert remote_side == [] and pings == []
        owner.commit(7 * MS)
    assert own == []  # the owner's own callback runs in its next drain, not at commit
    assert remote_side == []
    cycle(subscriber, 8 * MS)
    assert remote_side == [(7 * MS, 1, "one"), (7 * MS, 2, "two")]
    assert pings == ["ping"]
    cycle(owner, 8 * MS)
    assert own == [(1, "one"), (2, "two")]
    # no emission, no callback; nothing is delivered twice
    cycle(owner, 9 * MS)
    cycle(subscriber, 9 * MS)
    assert own == [(1, "one"), (2, "two")]
    assert len(remote_side) == 2 and pings == ["ping"]


def test_event_callbacks_see_the_committed_properties(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    seen: list[int] = []
    in_cycle(owner, lambda: gauge.events.pinged.connect(lambda: seen.append(gauge.level)))

    def update() -> None:
        gauge.set_next_level(12)
        gauge.events.pinged.emit()

    cycle(owner, 1 * MS, update=update)
    cycle(owner, 2 * MS)
    assert seen == [12]


def test_a_closed_event_subscription_gets_nothing(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    seen: list[int] = []
    subscription = in_cycle(
        subscriber, lambda: proxy.events.ticked.connect(lambda c, n: seen.append(c))
    )
    cycle(owner, 1 * MS, update=lambda: gauge.events.ticked.emit(1, ""))
    subscription.close()  # closed after the commit, before the subscriber's drain
    cycle(subscriber, 1 * MS)
    assert seen == []


def test_remote_events_are_dispatched_in_the_subscribers_drain(tree: Tree) -> None:
    subscriber = Context("subscriber")
    endpoint = Endpoint()
    remote = tree.devices.GaugeRemoteProxy(
        endpoint, subscriber, "g", "s.b", zero_state(tree, tree.devices.Gauge), 0
    )
    seen: list[tuple[int, int, str]] = []
    first = in_cycle(
        subscriber,
        lambda: remote.events.ticked.connect(
            lambda info, c, n: seen.append((info.creation_time, c, n)), with_info=True
        ),
    )
    second = in_cycle(subscriber, lambda: remote.events.ticked.connect(lambda c, n: None))
    assert endpoint.subscribed == ["ticked"]  # one subscription on the wire per event
    remote._receive_event_("ticked", (3, "x"), 5 * MS)
    remote._receive_event_("ticked", (4, "y"), 6 * MS)
    assert seen == []
    cycle(subscriber, 1 * MS)
    assert seen == [(5 * MS, 3, "x"), (6 * MS, 4, "y")]
    first.close()
    assert endpoint.unsubscribed == []
    second.close()
    second.close()
    assert endpoint.unsubscribed == ["ticked"]


# -- statics and configuration ---------------------------------------------------------------------


def test_from_config_requires_every_static_property(tree: Tree) -> None:
    gauge_base = tree.devices.GaugeBase
    with pytest.raises(ConfigError) as caught:
        gauge_base.from_config("o1", {})
    assert caught.value.problems == [
        "missing constructor argument 'serial' of type 'string' for creating object 'o1' of"
        " class 'objtest.Gauge'",
        "missing constructor argument 'gain' of type 'f32' for creating object 'o1' of class"
        " 'objtest.Gauge'",
    ]
    with pytest.raises(ConfigError) as caught:
        gauge_base.from_config("o2", {"serial": "s"})
    assert caught.value.problems == [
        "missing constructor argument 'gain' of type 'f32' for creating object 'o2' of class"
        " 'objtest.Gauge'"
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"nope": 1}, "did not find any property named 'nope' in class 'objtest.Gauge'"),
        ({"tag_id": 1}, "did not find any property named 'tag_id' in class 'objtest.Gauge'"),
        (
            {"tagId": 1},
            "property 'tagId' of class 'objtest.Gauge' cannot be set from the configuration",
        ),
        ({"level": "x"}, "invalid value for property 'level': expected i32, got 'x'"),
        ({"level": True}, "invalid value for property 'level': expected i32, got True"),
        ({"serial": 3}, "invalid value for property 'serial': expected string, got 3"),
    ],
)
def test_from_config_messages(tree: Tree, extra: dict[str, object], message: str) -> None:
    config: dict[str, object] = {"serial": "s", "gain": 1.0, **extra}
    with pytest.raises(ConfigError) as caught:
        tree.devices.GaugeBase.from_config("o", config)
    assert caught.value.problems == [message]


def test_from_config_collects_every_problem(tree: Tree) -> None:
    with pytest.raises(ConfigError) as caught:
        tree.devices.GaugeBase.from_config("o", {"serial": 3, "slot": 1, "bogus": 2})
    assert caught.value.problems == [
        "invalid value for property 'serial': expected string, got 3",
        "property 'slot' of class 'objtest.Gauge' cannot be set from the configuration",
        "did not find any property named 'bogus' in class 'objtest.Gauge'",
        "missing constructor argument 'gain' of type 'f32' for creating object 'o' of class"
        " 'objtest.Gauge'",
    ]


def test_from_config_statics_and_initial_dynamic_values_by_stl_name(tree: Tree) -> None:
    owner = Context("owner")
    gauge = tree.devices.GaugeBase.from_config(
        "o",
        {"serial": "X", "gain": 2, "level": 5, "mode": "running", "maybePoint": None, "type": "t"},
    )
    assert isinstance(gauge, tree.devices.GaugeBase)
    assert gauge.name == "o"
    assert (gauge.serial, gauge.gain, gauge.level) == ("X", 2.0, 5)
    assert type(gauge.gain) is float
    assert gauge.mode is tree.types.Mode.running
    assert gauge.type_ == "t"
    gauge.set_tag_id(1)
    gauge.set_slot(1)
    gauge._bind_(owner, BUS, 0)
    assert gauge.level == 5  # the configured value is the initial current value
    assert gauge.get_next_level() == 5


def test_static_no_config_is_set_only_before_registration(tree: Tree) -> None:
    owner = Context("owner")
    gauge = tree.devices.GaugeBase("g", serial="s", gain=1.0)
    gauge.set_slot(4)
    assert gauge.slot == 4  # immediate, no commit needed
    gauge.set_slot(5)
    gauge.set_tag_id(1)
    gauge._bind_(owner, BUS, 0)
    assert gauge.slot == 5
    with pytest.raises(RuntimeError) as caught:
        in_cycle(owner, lambda: gauge.set_slot(6))
    assert str(caught.value) == "static property 'slot' cannot change after registration"
    assert gauge.slot == 5


def test_static_no_config_message_names_the_stl_property(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    with pytest.raises(RuntimeError) as caught:
        gauge.set_tag_id(2)
    assert str(caught.value) == "static property 'tagId' cannot change after registration"


def test_an_unset_static_no_config_property_reads_its_zero_value(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = tree.devices.GaugeBase("g", serial="s", gain=1.0)
    gauge._bind_(owner, BUS, 0)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    assert (gauge.tag_id, gauge.slot) == (0, 0)
    assert (proxy.tag_id, proxy.slot) == (0, 0)


def test_static_properties_have_no_setter_and_are_read_through_proxies(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    for view in (gauge, proxy):
        assert not hasattr(view, "set_next_serial")
        assert not hasattr(view, "set_serial")
        assert not hasattr(view, "on_serial_changed")
        assert not hasattr(view, "on_tag_id_changed")
    assert not hasattr(proxy, "set_tag_id")
    assert (proxy.serial, proxy.gain, proxy.tag_id, proxy.slot) == ("S-1", 0.5, 7, 3)


def test_writes_from_a_foreign_thread_raise(tree: Tree) -> None:
    owner = Context("owner")
    gauge = registered_gauge(tree, owner)
    errors: list[BaseException] = []

    def foreign() -> None:
        writes: list[Callable[[], None]] = [
            lambda: gauge.set_next_level(1),
            lambda: gauge.set_next_mode(gauge.mode),
        ]
        for write in writes:
            try:
                write()
            except BaseException as error:
                errors.append(error)

    with owner.active():
        thread = threading.Thread(target=foreign)
        thread.start()
        thread.join(10)
    assert not thread.is_alive()
    assert [type(e) for e in errors] == [RuntimeError, RuntimeError]
    assert str(errors[0]) == "property 'level' of 'local.bus.g' written from a foreign thread"
    assert str(errors[1]) == "property 'mode' of 'local.bus.g' written from a foreign thread"
    cycle(owner, 1 * MS)
    assert gauge.level == 0


def test_an_abstract_class_refuses_instantiation_but_its_implementation_does_not(
    tree: Tree,
) -> None:
    device_base = tree.devices.DeviceBase
    assert tree.devices.Device.META.is_abstract
    assert not tree.devices.Device.META.instantiable
    assert tree.devices.Gauge.META.instantiable
    assert not tree.devices.Worker.META.instantiable
    with pytest.raises(TypeError) as caught:
        device_base("d", serial="s")
    assert str(caught.value) == "class 'objtest.Device' is abstract and cannot be instantiated"
    implementation = type("DeviceImpl", (device_base,), {"__module__": __name__})
    device = implementation("d", serial="s")
    assert device.serial == "s"
    assert isinstance(device, tree.devices.Device)


def test_views_share_the_interface_and_the_identity(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    remote = tree.devices.GaugeRemoteProxy(
        Endpoint(), subscriber, "g", BUS, zero_state(tree, tree.devices.Gauge), 0
    )
    for view in (gauge, proxy, remote):
        assert isinstance(view, tree.devices.Gauge)
        assert isinstance(view, tree.devices.Device)
        assert view.META is tree.devices.Gauge.META
        assert view.name == "g"
        assert view.id == gauge.id
    assert gauge.local_name == "owner.local.bus.g"
    assert proxy.local_name == "subscriber.local.bus.g"
    assert proxy.owner is gauge


def test_a_reserved_name_member_is_mangled_in_python_only(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    meta = tree.devices.Gauge.META.property("type")
    assert (meta.stl_name, meta.py_name) == ("type", "type_")
    seen: list[str] = []
    proxy.on_type_changed(seen.append)
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_type("fast"))
    cycle(subscriber, 1 * MS)
    assert gauge.type_ == proxy.type_ == "fast"
    assert gauge.get_next_type() == "fast"
    assert seen == ["fast"]
    shape = tree.types.Shape.META
    assert [(f.stl_name, f.py_name) for f in shape.fields if f.stl_name == "from"] == [
        ("from", "from_")
    ]


def test_update_wins_over_a_setter_call_received_in_the_same_cycle(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    call = in_cycle(subscriber, lambda: proxy.set_next_mode(tree.types.Mode.running))
    cycle(subscriber, 1 * MS)  # sent at the subscriber's commit
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_mode(tree.types.Mode.stopped))
    cycle(subscriber, 2 * MS)
    assert call.done() and call.result() is None
    assert gauge.mode is tree.types.Mode.stopped
    assert proxy.mode is tree.types.Mode.stopped


def test_nan_is_equal_to_nan_for_change_detection(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    seen: list[float] = []
    proxy.on_reading_changed(seen.append)
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_reading(math.nan))
    cycle(subscriber, 1 * MS)
    assert len(seen) == 1 and math.isnan(seen[0])
    committed = gauge.last_commit_time
    cycle(owner, 2 * MS, update=lambda: gauge.set_next_reading(float("nan")))
    cycle(subscriber, 2 * MS)
    assert gauge.last_commit_time == committed
    assert len(seen) == 1


def test_a_closed_proxy_and_a_stopped_context_receive_nothing(tree: Tree) -> None:
    owner, subscriber = Context("owner"), Context("subscriber")
    gauge = registered_gauge(tree, owner)
    proxy = tree.devices.GaugeLocalProxy(gauge, subscriber)
    proxy._close_()
    cycle(owner, 1 * MS, update=lambda: gauge.set_next_level(5))
    subscriber.drain()
    assert gauge.level == 5
    assert proxy.level == 0, "a closed proxy is no longer refreshed"
    ran: list[int] = []
    subscriber.stop()
    subscriber.post(ran.append, 1)
    subscriber.drain()
    assert ran == [], "work for a stopped context is dropped"
