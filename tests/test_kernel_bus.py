"""Objects on buses between components of one kernel: discovery, queries, proxies, calls, events
(runtime.md §3, §4; acceptance O, Q and L of §11, in-process topologies).

Each test runs a real kernel on the wall clock with a probe component (tests/kernel_support.py)
whose steps run in its cycle and stop the kernel when they are done; every run is bounded by
``until`` and the tests assert outcomes and orderings, never timings.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from kernel_support import Probe, make_package, producer, run_kernel, values_of

from sengen.runtime import CallFailed, LocalProxy, NativeObject, ObjectGone
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_bus")


def sensors(impls: ModuleType) -> str:
    return "build:\n" + producer(
        impls,
        "{name: s1, class: kbus.Counting, bus: local.b, serial: 15}\n"
        "{name: s2, class: kbus.Still, bus: local.b, serial: 7, reading: 5.0}",
    )


def test_queries_discover_other_components_objects_as_local_proxies(impls: ModuleType) -> None:
    seen: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        seen["all"] = api.select_all_from("kbus.Sensor", "local.b")
        seen["named"] = api.select_from("kbus.Sensor", "local.b", 'name = "s2"')
        seen["static"] = api.select("SELECT kbus.Sensor FROM local.b WHERE serial = 15")
        seen["none"] = api.select("SELECT kbus.Probe FROM local.b")
        seen["star"] = api.select("SELECT * FROM local.b")

    def check(api: RunApi) -> bool:
        if len(seen["all"]) < 2 or len(seen["named"]) < 1 or len(seen["static"]) < 1:
            return False
        seen["found"] = {key: sub.objects for key, sub in seen.items() if key != "found"}
        return True

    _, code = run_kernel(sensors(impls), [("probe", Probe([check], setup), 1)])
    assert code == 0
    found = seen["found"]
    assert values_of(found["named"]) == ["s2"]
    assert values_of(found["static"]) == ["s1"]
    assert found["none"] == [] and values_of(found["star"]) == ["s1", "s2"]
    assert all(isinstance(o, LocalProxy) for o in found["all"])
    # One proxy per (component, object), shared by the component's subscriptions.
    by_name = {o.name: o for o in found["all"]}
    assert found["named"][0] is by_name["s2"]
    assert len(seen["all"]) == 0  # the subscriptions closed when the probe stopped


def test_own_objects_arrive_as_the_native_instance_at_commit(impls: ModuleType) -> None:
    Still = impls.Still
    mine = Still("mine", serial=1)
    phases: list[bool] = []
    found: list[Any] = []

    def setup(api: RunApi) -> None:
        api.get_source("local.own").add(mine)

        def added(objects: list[Any]) -> None:
            phases.append(probe.in_update)
            found.extend(objects)

        api.select("SELECT * FROM local.own", added)

    probe = Probe([lambda api: bool(found)], setup)
    _, code = run_kernel("", [("probe", probe, 1)])
    assert code == 0
    assert found == [mine] and found[0] is mine and isinstance(found[0], NativeObject)
    assert phases == [False]  # discovery callbacks never run inside update()


def test_a_filter_drops_and_readds_an_object_as_its_property_changes(impls: ModuleType) -> None:
    Still = impls.Still
    sensor = Still("moving", serial=3)
    sensor.set_next_reading(5.0)  # pending before registration: the initial value
    events: list[tuple[str, str, list[str]]] = []
    subs: dict[str, Any] = {}

    def publish(api: RunApi) -> None:
        api.get_source("local.f").add(sensor)

    def watch(api: RunApi) -> None:
        for key, where in (("filtered", "reading < 10"), ("all", None)):
            query = "SELECT kbus.Sensor FROM local.f" + (f" WHERE {where}" if where else "")
            subs[key] = api.select(query, note(key, "added"), note(key, "removed"))

    def note(key: str, kind: str) -> Callable[[list[Any]], None]:
        return lambda objs: events.append((key, kind, values_of(objs)))

    def seen(key: str, kind: str, count: int) -> Any:
        return lambda api: sum(1 for e in events if e[:2] == (key, kind)) >= count

    def write(value: float) -> Any:
        def step(api: RunApi) -> bool:
            sensor.set_next_reading(value)
            return True

        return step

    owner = Probe(
        [
            seen("filtered", "added", 1),
            write(100.0),
            seen("filtered", "removed", 1),
            write(5.0),
            seen("filtered", "added", 2),
        ],
        publish,
        stop_when_done=False,
    )
    # The owner writes; the watcher's probe ends the run once it saw the re-addition.
    watcher = Probe([seen("filtered", "added", 2)], watch)
    _, code = run_kernel("", [("owner", owner, 1), ("watcher", watcher, 1)])
    assert code == 0
    assert [e for e in events if e[0] == "filtered"] == [
        ("filtered", "added", ["moving"]),
        ("filtered", "removed", ["moving"]),
        ("filtered", "added", ["moving"]),
    ]
    assert [e for e in events if e[0] == "all"] == [("all", "added", ["moving"])]


def test_on_added_installed_later_reports_the_matches_at_the_next_drain(impls: ModuleType) -> None:
    reports: list[list[str]] = []
    holder: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select("SELECT * FROM local.b")

    def install(api: RunApi) -> bool:
        if len(holder["sub"]) < 2:
            return False
        holder["sub"].on_added(lambda objs: reports.append(values_of(objs)))
        return True

    _, code = run_kernel(
        sensors(impls), [("probe", Probe([install, lambda api: bool(reports)], setup), 1)]
    )
    assert code == 0
    assert reports == [["s1", "s2"]]


def test_calls_through_a_proxy_deliver_results_errors_and_refuse_local_methods(
    impls: ModuleType,
) -> None:
    results: dict[str, Any] = {}
    holder: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select_from("kbus.Sensor", "local.b", 'name = "s1"')

    def call(api: RunApi) -> bool:
        if not len(holder["sub"]):
            return False
        proxy = holder["sub"].objects[0]
        proxy.add(2, 40, on_result=lambda c: results.__setitem__("add", c))
        proxy.fail("bad input", on_result=lambda c: results.__setitem__("fail", c))
        proxy.peek(on_result=lambda c: results.__setitem__("peek", c))
        results["wrong"] = proxy.add("2", 40)
        with pytest.raises(Exception, match="calling local methods is not permitted"):
            proxy.twice(3)
        return True

    def answered(api: RunApi) -> bool:
        return {"add", "fail", "peek"} <= results.keys() and results["wrong"].done()

    _, code = run_kernel(sensors(impls), [("probe", Probe([call, answered], setup), 1)])
    assert code == 0
    assert results["add"].result() == 42
    error = results["fail"].exception()
    assert isinstance(error, CallFailed) and "bad input" in str(error)
    assert isinstance(results["peek"].result(), float)
    wrong = results["wrong"].exception()
    assert isinstance(wrong, ValueError) and "add.x" in str(wrong)


def test_confirmed_events_arrive_once_each_in_order(impls: ModuleType) -> None:
    counts: list[int] = []
    holder: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        def added(objects: list[Any]) -> None:
            for obj in objects:
                if obj.name == "s1":
                    obj.events.ticked.connect(counts.append)

        holder["sub"] = api.select("SELECT * FROM local.b", added)

    _, code = run_kernel(
        sensors(impls), [("probe", Probe([lambda api: len(counts) >= 10], setup), 1)]
    )
    assert code == 0
    assert counts == list(range(counts[0], counts[0] + len(counts)))  # none lost, in order


def test_a_writable_property_set_through_a_proxy_is_applied_by_the_owner(impls: ModuleType) -> None:
    holder: dict[str, Any] = {}
    observed: list[float] = []

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select_from("kbus.Sensor", "local.b", 'name = "s2"')

    def write(api: RunApi) -> bool:
        if not len(holder["sub"]):
            return False
        proxy = holder["sub"].objects[0]
        proxy.on_setpoint_changed(observed.append)
        holder["call"] = proxy.set_next_setpoint(12.5)
        assert proxy.setpoint == 0.0  # the proxy's own value never changes at the call
        with pytest.raises(AttributeError):
            proxy.set_next_reading(1.0)
        return True

    _, code = run_kernel(
        sensors(impls), [("probe", Probe([write, lambda api: bool(observed)], setup), 1)]
    )
    assert code == 0
    assert observed == [12.5] and holder["call"].exception() is None


def test_proxies_are_frozen_during_the_subscribers_cycle(impls: ModuleType) -> None:
    holder: dict[str, Any] = {}
    pairs: list[tuple[float, float]] = []
    fast = "build:\n" + producer(
        impls, "{name: s1, class: kbus.Counting, bus: local.b, serial: 1}", 1000
    )

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select("SELECT * FROM local.b")

    def read(api: RunApi) -> bool:
        for proxy in holder["sub"]:
            first = proxy.reading
            for _ in range(2000):  # let the 1 kHz owner commit meanwhile
                pass
            pairs.append((first, proxy.reading))
            assert proxy.a == proxy.b  # one commit's values, never a mix
        return len(pairs) >= 20

    _, code = run_kernel(fast, [("probe", Probe([read], setup, freq_hz=100), 1)])
    assert code == 0
    assert all(a == b for a, b in pairs)
    assert pairs[-1][0] > pairs[0][0]  # and it did refresh between cycles


def test_a_stopping_owner_removes_its_objects_and_fails_calls_to_them(impls: ModuleType) -> None:
    removed: list[list[str]] = []
    holder: dict[str, Any] = {}
    text = "build:\n" + producer(
        impls, "{name: s1, class: kbus.Counting, bus: local.b, serial: 1}", name="owner", group=2
    )

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select(
            "SELECT * FROM local.b", None, lambda objs: removed.append(values_of(objs))
        )

    def hold(api: RunApi) -> bool:
        if not len(holder["sub"]):
            return False
        holder["proxy"] = holder["sub"].objects[0]
        return True

    kernel_holder: dict[str, Any] = {}

    def stop_owner(api: RunApi) -> bool:
        kernel = kernel_holder["kernel"]
        kernel.runner("owner").stop.set()
        return True

    def call_after(api: RunApi) -> bool:
        if not removed:
            return False
        holder["late"] = holder["proxy"].add(1, 2)
        return True

    probe = Probe([hold, stop_owner, call_after, lambda api: holder["late"].done()], setup)
    from sengen.runtime import Duration
    from sengen.runtime.kernel.config import load_config_text
    from sengen.runtime.kernel.kernel import Kernel

    kernel = Kernel(load_config_text(text), [("probe", probe, 1)])
    kernel_holder["kernel"] = kernel
    code = kernel.run(Duration.parse("10 s"))
    assert code == 0
    assert removed == [["s1"]]
    assert isinstance(holder["late"].exception(), ObjectGone)
    assert "no longer exists" in str(holder["late"].exception())


def test_events_of_one_component_are_dispatched_in_emission_order_across_objects(
    impls: ModuleType,
) -> None:
    from sengen.runtime.objects.context import Context

    owner, subscriber = Context("owner"), Context("subscriber")
    first, second = impls.Still("first", serial=1), impls.Still("second", serial=2)
    with owner.active():
        for obj in (first, second):
            obj._bind_(owner, "local.order", 0)
    heard: list[tuple[str, int]] = []
    ticked = first.META.event("ticked")
    assert ticked is not None

    def listener(name: str) -> Callable[[int], None]:
        return lambda count: heard.append((name, count))

    with subscriber.active():
        for obj in (first, second):
            obj._connect_event_from_(subscriber, ticked, listener(obj.name), False)
    with owner.active():
        first.events.ticked.emit(1)
        second.events.ticked.emit(2)
        first.events.ticked.emit(3)
        owner.commit(10)
    subscriber.drain()
    assert heard == [("first", 1), ("second", 2), ("first", 3)]


def test_events_of_every_qos_arrive_exactly_in_order(impls: ModuleType) -> None:
    heard: dict[str, list[int]] = {"ticked": [], "noted": [], "pinged": []}

    def setup(api: RunApi) -> None:
        def added(objects: list[Any]) -> None:
            for obj in objects:
                if obj.name == "s1":
                    obj.events.ticked.connect(heard["ticked"].append)
                    obj.events.noted.connect(lambda text: heard["noted"].append(int(text)))
                    obj.events.pinged.connect(heard["pinged"].append)

        api.select("SELECT * FROM local.b", added)

    def enough(api: RunApi) -> bool:
        return all(len(values) >= 10 for values in heard.values())

    _, code = run_kernel(sensors(impls), [("probe", Probe([enough], setup), 1)])
    assert code == 0
    for values in heard.values():
        assert values == list(range(values[0], values[0] + len(values)))
    # one emission each per cycle: the three streams start together
    assert heard["ticked"][0] == heard["noted"][0] == heard["pinged"][0]


def test_setters_from_two_listeners_reach_their_objects_exactly(impls: ModuleType) -> None:
    seen: dict[str, dict[str, float]] = {"one": {}, "two": {}}

    def listener(name: str, target: str, value: float) -> Probe:
        holder: dict[str, Any] = {}

        def setup(api: RunApi) -> None:
            holder["sub"] = api.select("SELECT * FROM local.b")

        def write(api: RunApi) -> bool:
            proxies = {o.name: o for o in holder["sub"]}
            if target not in proxies:
                return False
            proxies[target].set_next_setpoint(value)
            return True

        def observe(api: RunApi) -> bool:
            for proxy in holder["sub"]:
                seen[name][proxy.name] = proxy.setpoint
            return all(seen[name].get(t) == v for t, v in (("s1", 1.5), ("s2", 2.5)))

        return Probe([write, observe], setup, stop_when_done=False)

    def both_done(api: RunApi) -> bool:
        if all(p.done for p in parts):
            api.request_kernel_stop(0)
            return True
        return False

    parts = [listener("one", "s1", 1.5), listener("two", "s2", 2.5)]
    components = [("one", parts[0], 1), ("two", parts[1], 1), ("end", Probe([both_done]), 1)]
    _, code = run_kernel(sensors(impls), components)
    assert code == 0
    assert seen == {"one": {"s1": 1.5, "s2": 2.5}, "two": {"s1": 1.5, "s2": 2.5}}


def test_the_owners_update_wins_over_a_setter_call_of_the_same_cycle(impls: ModuleType) -> None:
    text = "build:\n" + producer(impls, "{name: st, class: kbus.Stubborn, bus: local.b, serial: 1}")
    holder: dict[str, Any] = {"values": []}

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select("SELECT * FROM local.b")

    def write(api: RunApi) -> bool:
        if not len(holder["sub"]):
            return False
        holder["call"] = holder["sub"].objects[0].set_next_setpoint(5.0)
        return True

    def watch(api: RunApi) -> bool:
        holder["values"].append(holder["sub"].objects[0].setpoint)
        return holder["call"].done() and len(holder["values"]) >= 20

    _, code = run_kernel(text, [("probe", Probe([write, watch], setup), 1)])
    assert code == 0
    assert holder["call"].exception() is None  # accepted, applied in drain, then overwritten
    assert set(holder["values"]) == {-1.0}


def test_a_name_is_used_once_per_bus_across_components(impls: ModuleType) -> None:
    from sengen.runtime.kernel.buses import DuplicateObjectName

    outcome: dict[str, str] = {}

    def first(api: RunApi) -> None:
        api.get_source("local.d").add(impls.Still("x", serial=1))

    def second(api: RunApi) -> bool:
        if not api.get_source("local.d").space.objects("local.d"):
            return False
        try:
            api.get_source("local.d").add(impls.Still("x", serial=2))
        except DuplicateObjectName as error:
            outcome["error"] = str(error)
        api.get_source("local.other").add(impls.Still("x", serial=3))
        outcome["other"] = "ok"
        return True

    parts = [("a", Probe([], first, stop_when_done=False), 1), ("b", Probe([second]), 1)]
    _, code = run_kernel("", parts)
    assert code == 0
    assert outcome == {
        "error": "object name 'x' is already used on bus 'local.d' by component 'a'",
        "other": "ok",
    }


def test_every_listener_gets_the_removal_when_the_owner_stops(impls: ModuleType) -> None:
    added: dict[str, list[str]] = {"l1": [], "l2": []}
    removed: dict[str, list[str]] = {"l1": [], "l2": []}
    text = "build:\n" + producer(
        impls, "{name: s1, class: kbus.Counting, bus: local.b, serial: 15}", name="owner", group=2
    )
    kernel_holder: dict[str, Any] = {}

    def listener(name: str) -> Probe:
        def setup(api: RunApi) -> None:
            api.select(
                "SELECT kbus.Sensor FROM local.b WHERE serial = 15",
                lambda objs: added[name].extend(o.name for o in objs),
                lambda objs: removed[name].extend(o.name for o in objs),
            )

        return Probe([lambda api: bool(removed[name])], setup, stop_when_done=False)

    def stop_owner(api: RunApi) -> bool:
        # Only once every listener has the object: one that never saw it has nothing to remove.
        if added["l1"] and added["l2"]:
            kernel_holder["kernel"].runner("owner").stop.set()
            return True
        return False

    def finish(api: RunApi) -> bool:
        if removed["l1"] and removed["l2"]:
            api.request_kernel_stop(0)
            return True
        return False

    from sengen.runtime import Duration
    from sengen.runtime.kernel.config import load_config_text
    from sengen.runtime.kernel.kernel import Kernel

    parts = [
        ("l1", listener("l1"), 1),
        ("l2", listener("l2"), 1),
        ("end", Probe([stop_owner, finish]), 1),
    ]
    kernel = Kernel(load_config_text(text), parts)
    kernel_holder["kernel"] = kernel
    assert kernel.run(Duration.parse("10 s")) == 0
    assert added == {"l1": ["s1"], "l2": ["s1"]}
    assert removed == {"l1": ["s1"], "l2": ["s1"]}


def test_a_subscription_is_awaited_from_an_asyncio_loop_in_another_thread(
    impls: ModuleType,
) -> None:
    """runtime.md §10.2: ``wait_for`` resolves once enough objects match, ``first`` gives the
    first match, and a count never reached times out."""
    made = threading.Event()
    seen: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        seen["sub"] = api.select("SELECT kbus.Sensor FROM local.b")
        made.set()

    async def main() -> None:
        subscription = seen["sub"]
        seen["two"] = await subscription.wait_for(2, timeout=10)
        seen["first"] = await subscription.first(timeout=1)
        with pytest.raises(asyncio.TimeoutError):
            await subscription.wait_for(3, timeout=0.2)
        seen["waiters"] = len(subscription._waiters)

    probe = Probe([lambda api: "waiters" in seen], setup)
    kernel = Kernel(load_config_text(sensors(impls)), [("probe", probe, 1)])
    try:
        assert kernel.start()
        assert made.wait(10)
        asyncio.run(main())
    finally:
        kernel.shutdown()
    assert values_of(seen["two"]) == ["s1", "s2"]
    assert seen["first"] is seen["two"][0]
    assert seen["waiters"] == 0  # the timed-out wait left nothing behind
