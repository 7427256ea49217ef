"""Objects across processes over Zenoh (runtime.md §8): a producer process run with
``sengen run``, a consumer kernel in the test's process, loopback only, a free port and a
session of each test's own."""

from __future__ import annotations

import logging
import random
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from kernel_support import Probe
from recording_support import read_recording
from transport_support import (
    Process,
    consume,
    free_port,
    make_project,
    producer_config,
    session_name,
    transport_entry,
)

from sengen.runtime import Duration
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.link import TransportConfig, open_session
from sengen.runtime.errors import CallFailed, LocalMethodError, ObjectGone
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "xtgen"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("transport")
    for _ in make_project(folder, ROOT):
        yield folder


@pytest.fixture(scope="module")
def shared(project: Path) -> Iterator[tuple[int, str]]:
    """One producer process for the tests that only read it: (port, session)."""
    port, session = free_port(), session_name("shared")
    objects = """\
        name: s1, class: xbus.Counting, serial: 7
        name: s2, class: xbus.Still, serial: 8
        name: s3, class: xbus.Still, serial: 9
    """
    process = Process(project, "shared", producer_config(ROOT, port, session, objects))
    try:
        yield port, session
    finally:
        process.stop()


def by_name(objects: list[Any]) -> dict[str, Any]:
    return {o.name: o for o in objects}


def raw_session(port: int) -> zenoh.Session:
    """A bare Zenoh peer on the test's rendezvous, configured as sengen configures its own: it
    listens on a rendezvous port, so the consumer connects to it directly. A connect-only peer
    is reached only once gossip makes it connect, and a put that leaves before is lost."""
    return open_session(TransportConfig(rendezvous=f"tcp/127.0.0.1:{port}"))


def count(proxy: Any) -> int:
    value: int = proxy.count
    return value


def test_properties_events_calls_and_setters_cross_processes(shared: tuple[int, str]) -> None:
    port, session = shared
    seen: dict[str, Any] = {"ticked": [], "noted": [], "serials": {}, "torn": 0, "labels": 0}

    def setup(api: RunApi) -> None:
        def added(objects: list[Any]) -> None:
            for proxy in objects:  # static values arrive with the object
                seen["serials"][proxy.name] = proxy.serial

        seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b", added)

    def connect(api: RunApi) -> bool:
        found = by_name(seen["sub"].objects)
        if not {"s1", "s2"} <= found.keys():
            return False
        s1, s2 = found["s1"], found["s2"]
        seen["s1"], seen["s2"] = s1, s2
        s1.events.ticked.connect(seen["ticked"].append)
        s1.events.noted.connect(seen["noted"].append)
        seen["calls"] = {
            "add": s1.add(2, 3),
            "peek": s1.peek(),
            "fail": s1.fail("boom"),
            "set": s2.set_next_setpoint(4.5),
        }
        try:
            s1.twice(2)
        except LocalMethodError as error:
            seen["local"] = error
        return True

    def observe(api: RunApi) -> bool:
        s1 = seen["s1"]
        if s1.count != s1.mirror or s1.reading != s1.count / 2:
            seen["torn"] += 1  # one remote commit must appear as a whole
        if s1.label != (None if s1.count % 2 else f"c{s1.count}"):
            seen["torn"] += 1
        seen["labels"] += s1.label is not None
        calls = seen["calls"]
        return (
            all(c.done() for c in calls.values())
            and seen["s2"].setpoint == 4.5
            and len(seen["ticked"]) >= 20
        )

    code, probe = consume(port, [connect, observe], setup)
    assert code == 0 and probe.done, "the consumer never saw everything"
    assert seen["serials"] == {"s1": 7, "s2": 8, "s3": 9}
    assert seen["torn"] == 0
    assert seen["labels"] > 0  # the optional property carried values and None alike
    calls = seen["calls"]
    assert calls["add"].result() == 5
    assert isinstance(calls["peek"].result(), int)
    with pytest.raises(CallFailed) as failed:
        calls["fail"].result()
    assert failed.value.type_name == "ValueError" and failed.value.message == "boom"
    assert calls["set"].result() is None
    assert isinstance(seen.get("local"), LocalMethodError)
    for name in ("ticked", "noted"):  # every event once, in order: consecutive counts
        numbers = seen[name]
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), name


def test_a_filtered_interest_gets_exactly_the_removal_when_the_property_leaves_the_range(
    shared: tuple[int, str],
) -> None:
    port, session = shared
    log: dict[str, list[tuple[str, str]]] = {"filtered": [], "all": []}

    def recorder(record: list[tuple[str, str]], sign: str) -> Callable[[list[Any]], None]:
        return lambda objects: record.extend((sign, o.name) for o in objects)

    def setup(api: RunApi) -> None:
        for key, where in (("filtered", " WHERE setpoint < 10"), ("all", "")):
            query = f"SELECT xbus.Sensor FROM {session}.b{where}"
            api.select(query, recorder(log[key], "+"), recorder(log[key], "-"))

    holder: dict[str, Any] = {}

    def grab(api: RunApi) -> bool:
        if ("+", "s3") not in log["filtered"] or ("+", "s3") not in log["all"]:
            return False
        holder["s3"] = api.select(f"SELECT xbus.Sensor FROM {session}.b WHERE serial = 9")
        return True

    def set_far_away(api: RunApi) -> bool:
        found = holder["s3"].objects
        if not found:
            return False
        holder["call"] = found[0].set_next_setpoint(20.0)
        holder["at"] = time.monotonic()
        return True

    def settle(api: RunApi) -> bool:
        # Removal seen, then a little longer: nothing else may arrive.
        if ("-", "s3") not in log["filtered"]:
            return False
        return bool(time.monotonic() - holder["at"] > 0.3)

    code, probe = consume(port, [grab, set_far_away, settle], setup)
    assert code == 0 and probe.done
    assert [e for e in log["filtered"] if e[1] == "s3"] == [("+", "s3"), ("-", "s3")]
    assert [e for e in log["all"] if e[1] == "s3"] == [("+", "s3")]


def test_three_processes_see_each_others_objects(project: Path, shared: tuple[int, str]) -> None:
    port, session = shared
    second = Process(
        project,
        "second",
        producer_config(ROOT, port, session, "name: t1, class: xbus.Counting, serial: 1"),
    )
    seen: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def both(api: RunApi) -> bool:
            found = by_name(seen["sub"].objects)
            if not {"s1", "t1"} <= found.keys():
                return False
            seen["calls"] = [found["s1"].add(1, 1), found["t1"].add(2, 2)]
            return True

        def answered(api: RunApi) -> bool:
            return all(c.done() for c in seen["calls"])

        code, probe = consume(port, [both, answered], setup)
    finally:
        output = second.stop()
    assert code == 0 and probe.done, output
    assert [c.result() for c in seen["calls"]] == [2, 4]


def test_a_killed_peer_loses_its_objects_within_a_second_and_its_calls_fail(
    project: Path,
) -> None:
    port, session = free_port(), session_name("killed")
    victim = Process(
        project,
        "victim",
        producer_config(ROOT, port, session, "name: k1, class: xbus.Still, serial: 1"),
    )
    seen: dict[str, Any] = {"removed": []}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(
                f"SELECT xbus.Sensor FROM {session}.b",
                None,
                lambda objs: seen["removed"].extend((o.name, time.monotonic()) for o in objs),
            )

        def freeze_and_call(api: RunApi) -> bool:
            found = seen["sub"].objects
            if not found:
                return False
            victim.signal(signal.SIGSTOP)  # the call below can only stay pending
            seen["call"] = found[0].add(1, 2)
            seen["frozen"] = time.monotonic()
            return True

        def kill(api: RunApi) -> bool:
            if time.monotonic() - seen["frozen"] < 0.2:
                return False
            assert not seen["call"].done()
            victim.signal(signal.SIGKILL)
            seen["killed"] = time.monotonic()
            return True

        def removed(api: RunApi) -> bool:
            return bool(seen["removed"]) and seen["call"].done()

        code, probe = consume(port, [freeze_and_call, kill, removed], setup)
    finally:
        victim.stop()
    assert code == 0 and probe.done
    ((name, when),) = seen["removed"]
    assert name == "k1" and when - seen["killed"] < 1.0
    error = seen["call"].exception()
    assert isinstance(error, ObjectGone) and "lost" in str(error)


def test_a_stopped_peer_is_lost_after_its_lease_and_comes_back_with_a_fresh_snapshot(
    project: Path,
) -> None:
    port, session = free_port(), session_name("stopped")
    config = producer_config(
        ROOT, port, session, "name: z1, class: xbus.Counting, serial: 1", leaseMs=1000
    )
    sleeper = Process(project, "sleeper", config)
    events: list[tuple[str, float, int]] = []
    seen: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(
                f"SELECT xbus.Sensor FROM {session}.b",
                lambda objs: events.extend(("+", time.monotonic(), count(o)) for o in objs),
                lambda objs: events.extend(("-", time.monotonic(), count(o)) for o in objs),
            )

        def stop(api: RunApi) -> bool:
            if not events:
                return False
            sleeper.signal(signal.SIGSTOP)
            seen["stopped"] = time.monotonic()
            return True

        def lost(api: RunApi) -> bool:
            if len(events) < 2:
                return False
            sleeper.signal(signal.SIGCONT)
            return True

        def back(api: RunApi) -> bool:
            return len(events) >= 3

        code, probe = consume(port, [stop, lost, back], setup, until="30 s", leaseMs=1000)
    finally:
        sleeper.stop()
    assert code == 0 and probe.done, events
    (added, _, first), (removed, gone_at, last), (again, _, fresh) = events[:3]
    assert (added, removed, again) == ("+", "-", "+"), events
    # Not before most of the lease (1 s: a stopped peer sends nothing, not even a goodbye), and
    # within the lease plus the grace and slack for a loaded machine: far below Zenoh's default
    # 10 s lease, so the configured one is what declared the loss.
    assert 0.5 < gone_at - seen["stopped"] < 1.0 + 2.0, (gone_at - seen["stopped"], events)
    assert fresh > last >= first, events  # a new snapshot, not the stale state


def test_ten_thousand_confirmed_events_arrive_in_order_and_the_final_value_is_right(
    project: Path,
) -> None:
    port, session = free_port(), session_name("burst")
    burst = Process(
        project,
        "burst",
        producer_config(ROOT, port, session, "name: b1, class: xbus.Burst, serial: 1"),
    )
    numbers: list[int] = []
    seen: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def listen(api: RunApi) -> bool:
            found = seen["sub"].objects
            if not found:
                return False
            seen["b1"] = found[0]
            seen["start"] = found[0].count
            found[0].events.ticked.connect(numbers.append)
            return True

        def complete(api: RunApi) -> bool:
            return seen["b1"].count == 10_000 and (not numbers or numbers[-1] == 10_000)

        code, probe = consume(port, [listen, complete], setup, until="30 s")
    finally:
        burst.stop()
    assert code == 0 and probe.done
    assert numbers == list(range(numbers[0], 10_001))
    assert numbers[0] <= seen["start"] + 1 + 500  # nothing lost after the connection


def _junk(rng: random.Random, session: str) -> list[bytes]:
    """Random payloads, frames with random bodies, and valid frames cut short or flipped."""
    cls = "xbus.Sensor"
    valid = [
        wire.Added(
            "f" * 32, 999, 0, f"{session}.b", cls, 1, b"{}", (1,), ("fuzz",), (b"\x00" * 12,)
        ).encode(),
        wire.Column("f" * 32, 5, 7, 8, (1, 2), b"\x07" * 16).encode(),
        wire.Changes("f" * 32, 5, (1, 2), (b"\x01\x00\x00\x00" + b"\x07" * 12, b"")).encode(),
        wire.Emitted("f" * 32, 1, 5, b"\xff" * 9).encode(),
        wire.Removed("f" * 32, 1, 1).encode(),
        wire.Invoke("f" * 32, 3, 1, False, b"\x00" * 8).encode(),
        wire.Result("f" * 32, 3, wire.FAILED, "X", "y", b"").encode(),
    ]
    batched = [
        wire.Changes("f" * 32, 5, (1,), (b"\x01\x00\x00\x00" + b"\x07" * 12,)),
        wire.Emitted("f" * 32, 1, 5, b"\xff" * 9),
        wire.Removed("f" * 32, 1, 1),
    ]
    valid.append(wire.Batch.header("f" * 32) + b"".join(f.item() for f in batched))
    payloads = [rng.randbytes(rng.randrange(0, 200)) for _ in range(100)]
    for frame in valid:
        payloads += [frame[: rng.randrange(len(frame))] for _ in range(20)]
        for _ in range(20):
            flipped = bytearray(frame)
            flipped[rng.randrange(len(frame))] ^= 1 << rng.randrange(8)
            payloads.append(bytes(flipped))
        payloads.append(wire.MAGIC + bytes([wire.VERSION, frame[3]]) + rng.randbytes(64))
    return payloads


def test_random_and_truncated_payloads_leave_the_kernels_running_and_correct(
    shared: tuple[int, str],
) -> None:
    port, session = shared
    fuzzer = raw_session(port)
    rng = random.Random(20261202)
    tokens = [
        fuzzer.liveliness().declare_token(key)
        for key in ("sengen/v2/fz/@alive/1/x", "sengen/v2/fz/@alive/notanumber", "sengen/v2/@x")
    ]
    announcements = [
        wire.Interest("fz", 1, True, -1, "SELECT garbage").encode(),
        wire.Interest("fz", 2, True, -1, f"SELECT * FROM {session}.b WHERE " + "(" * 2000).encode(),
        wire.Interest("fz", 3, False, -1, "").encode(),
        wire.Names("f" * 32, f"{session}.b", (("s1", -(2**63)),), ()).encode(),  # forged
        b"SG" + bytes([wire.VERSION, wire.Interest.KIND]) + b"\x02\x00\x00\x00fz" + b"\xff" * 9,
    ]
    seen: dict[str, Any] = {"bad": 0, "updates": 0}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(
                f"SELECT xbus.Sensor FROM {session}.b",
                lambda objs: seen.setdefault("names", []).extend(o.name for o in objs),
            )

        def attack(api: RunApi) -> bool:
            if "s3" not in by_name(seen["sub"].objects):
                return False
            for payload in announcements:
                fuzzer.put("sengen/v2/fz/@all", payload)
            for payload in _junk(rng, session):
                fuzzer.put("sengen/v2/ffffffffffffffffffffffffffffffff/@to/*", payload)
                fuzzer.put("sengen/v2/fz/@to/*", payload)
                fuzzer.put("sengen/v2/fz/@all", payload)
            seen["last"] = by_name(seen["sub"].objects)["s1"].count
            return True

        def still_correct(api: RunApi) -> bool:
            s1 = by_name(seen["sub"].objects)["s1"]
            seen["bad"] += s1.count != s1.mirror
            return bool(s1.count > seen["last"] + 20)

        code, probe = consume(port, [attack, still_correct], setup)
    finally:
        for token in tokens:
            token.undeclare()  # type: ignore[no-untyped-call]
        fuzzer.close()  # type: ignore[no-untyped-call]
    assert code == 0 and probe.done
    assert seen["bad"] == 0
    assert sorted(seen["names"]) == ["s1", "s2", "s3"]  # the junk invented nothing

    def alive(api: RunApi) -> bool:  # the producer survived it too
        return bool(seen["again"].objects) and seen["again"].objects[0].count > 0

    def again(api: RunApi) -> None:
        seen["again"] = api.select(f"SELECT xbus.Sensor FROM {session}.b WHERE serial = 7")

    code, probe = consume(port, [alive], again)
    assert code == 0 and probe.done


# Two versions whose ``count`` disagree on what it is (a number here, a struct there): refused
# (evolution.md §4.7; a compatible difference would be adapted instead).
INCOMPATIBLE = """\
package xbus;

struct Pair { a : i32 }

class Sensor
{
  var serial : u32 [static];
  var count  : Pair;
}
"""


def test_an_incompatible_definition_is_refused_with_one_log_line(
    tmp_path: Path, shared: tuple[int, str], caplog: pytest.LogCaptureFixture
) -> None:
    port, session = shared
    (tmp_path / "stl" / "xbus").mkdir(parents=True)
    (tmp_path / "stl" / "xbus" / "xbus.stl").write_text(INCOMPATIBLE)
    import sengen

    assert sengen.generate([tmp_path / "stl"], output=tmp_path / "othergen").ok
    config = producer_config(ROOT, port, session, "name: odd, class: xbus.Sensor, serial: 5")
    config = config.replace(f"[{ROOT}.xbus, {ROOT}_impls]", "[othergen.xbus]")
    # This process holds the local build under a second scope too, as it does whenever other
    # tests imported theirs: still one local version (evolution.md §1.2), whatever ran before.
    for _ in make_project(tmp_path / "copy", "xtcopy"):
        pass
    other = Process(tmp_path, "other", config)
    seen: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def refused(api: RunApi) -> bool:
            return any("incompatible remote implementation" in r.message for r in caplog.records)

        def still_working(api: RunApi) -> bool:
            return "s1" in by_name(seen["sub"].objects)

        with caplog.at_level(logging.WARNING, logger="sengen.transport"):
            code, probe = consume(port, [refused, still_working], setup)
    finally:
        output = other.stop()
    assert code == 0 and probe.done, output
    lines = [r.message for r in caplog.records if "incompatible" in r.message]
    assert len(lines) == 1
    assert lines[0].startswith("type 'xbus.Sensor' has an incompatible remote implementation")
    assert "(process producer/" in lines[0]
    assert lines[0].endswith(": property 'count': local i64, remote xbus.Pair (struct)")
    assert "odd" not in by_name(seen["sub"].objects)


def test_a_call_over_the_message_size_limit_fails_and_nothing_is_truncated(
    shared: tuple[int, str],
) -> None:
    port, session = shared
    seen: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b WHERE serial = 7")

    def call(api: RunApi) -> bool:
        if not seen["sub"].objects:
            return False
        s1 = seen["sub"].objects[0]
        seen["big"], seen["small"] = s1.fail("x" * 5000), s1.fail("ok")
        return True

    def done(api: RunApi) -> bool:
        return bool(seen["big"].done() and seen["small"].done())

    code, probe = consume(port, [call, done], setup, maxMessageBytes=2000)
    assert code == 0 and probe.done
    big, small = seen["big"].exception(), seen["small"].exception()
    assert isinstance(big, CallFailed) and big.type_name == "MessageTooLarge"
    assert "maxMessageBytes (2000)" in big.message
    assert isinstance(small, CallFailed) and small.message == "ok"  # the small one went through


def test_only_sessions_other_than_local_are_announced(shared: tuple[int, str]) -> None:
    port, session = shared
    watcher = raw_session(port)
    texts: list[str] = []

    def heard(sample: zenoh.Sample) -> None:
        frame = wire.decode(sample.payload.to_bytes())
        found: list[wire.Frame] = [frame] if isinstance(frame, wire.Interest) else []
        if isinstance(frame, wire.Batch):
            found = [wire.read_item(frame.sender, k, frame.data[b:e]) for k, b, e in frame.items()]
        texts.extend(f.text for f in found if isinstance(f, wire.Interest))

    listener = watcher.declare_subscriber("sengen/v2/*/@all", heard)
    # Processes announce their interests again to a process that joins: as one, it hears them
    # whenever it is reached.
    token = watcher.liveliness().declare_token("sengen/v2/watcher/@alive/1/watcher")

    def setup(api: RunApi) -> None:
        api.select("SELECT * FROM local.b")
        api.select(f"SELECT * FROM {session}.b")

    def announced(api: RunApi) -> bool:
        return any(f"FROM {session}.b" in text for text in texts)

    try:
        code, probe = consume(port, [announced], setup)
    finally:
        token.undeclare()  # type: ignore[no-untyped-call]
        listener.undeclare()  # type: ignore[no-untyped-call]
        watcher.close()  # type: ignore[no-untyped-call]
    assert code == 0 and probe.done
    assert not any("local." in text for text in texts), texts


FOREIGN_STL = """\
package ybus;

enum Colour : u8 { red, green, blue }

struct Point
{
  x : f64,
  y : f64
}

struct Tagged
{
  label : string,
  at    : Point
}

variant Shape
{
  Point,
  Tagged
}

optional<string> MaybeNote;
sequence<i32, 8> Small;

class Gadget
{
  var serial : u32 [static];
  var colour : Colour [writable];
  var where  : Point;
  var shape  : Shape [confirmed];
  var note   : MaybeNote [confirmed];
  var counts : Small [confirmed];

  event moved(to: Point) [confirmed];

  fn scale(by: f64) -> Point;
  fn label(prefix: string) -> string [const];
}
"""

FOREIGN_IMPL = """\
from typing import Any

from ygen.ybus import GadgetBase, Point, Shape, Tagged


class Moving(GadgetBase):
    def update(self, api: Any) -> None:
        where = Point(self.where.x + 1.0, 2.0)
        self.set_next_where(where)
        self.set_next_shape(Shape("Tagged", Tagged(f"t{int(where.x)}", where)))
        self.set_next_note(None if int(where.x) % 2 else "even")
        self.set_next_counts((1, 2, int(where.x)))
        self.events.moved.emit(where)

    def scale_impl(self, by: float) -> Point:
        return Point(self.where.x * by, self.where.y * by)

    def label_impl(self, prefix: str) -> str:
        return f"{prefix}-{self.colour.name}"
"""


def test_an_object_of_a_class_not_imported_here_is_used_through_a_dynamic_proxy(
    tmp_path: Path,
) -> None:
    """The producer's package is generated in its own folder and never imported here."""
    import sengen

    (tmp_path / "stl" / "ybus").mkdir(parents=True)
    (tmp_path / "stl" / "ybus" / "ybus.stl").write_text(FOREIGN_STL)
    assert sengen.generate([tmp_path / "stl"], output=tmp_path / "ygen").ok
    (tmp_path / "ygen_impls.py").write_text(FOREIGN_IMPL)
    port, session = free_port(), session_name("dynamic")
    config = producer_config(ROOT, port, session, "name: g1, class: ybus.Moving, serial: 42")
    config = config.replace(f"[{ROOT}.xbus, {ROOT}_impls]", "[ygen.ybus, ygen_impls]")
    producer = Process(tmp_path, "foreign", config)
    seen: dict[str, Any] = {"moved": []}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT * FROM {session}.b")

        def use(api: RunApi) -> bool:
            if not seen["sub"].objects:
                return False
            gadget = seen["g1"] = seen["sub"].objects[0]
            gadget.events.moved.connect(seen["moved"].append)
            blue = type(gadget.colour)["blue"]
            seen["calls"] = [
                gadget.call("scale", 2.0),
                gadget.set_next("colour", blue),
            ]
            return True

        def answered(api: RunApi) -> bool:
            if not all(c.done() for c in seen["calls"]) or len(seen["moved"]) < 3:
                return False
            if "label" not in seen:
                seen["label"] = seen["g1"].call("label", "p")
            return bool(seen["label"].done())

        code, probe = consume(port, [use, answered], setup)
    finally:
        output = producer.stop()
    assert code == 0 and probe.done, output
    gadget = seen["g1"]
    assert type(gadget).__name__ == "GadgetDynamicProxy"
    assert gadget.META.qualified_name == "ybus.Gadget"
    assert gadget.serial == 42 and gadget.get("serial") == 42
    assert gadget.colour.name == "blue"  # the setter went through and came back
    where = gadget.where
    assert where.y == 2.0 and where.x >= 1.0
    shape = gadget.shape
    assert shape.tag == "Tagged" and shape.value.at == where
    assert shape.value.label == f"t{int(where.x)}"
    assert gadget.note == (None if int(where.x) % 2 else "even")
    assert gadget.counts == (1, 2, int(where.x))
    scaled = seen["calls"][0].result()
    assert scaled.y == 4.0 and scaled.x >= 2.0
    assert seen["label"].result() == "p-blue"
    xs = [p.x for p in seen["moved"]]
    assert xs == [xs[0] + i for i in range(len(xs))]  # events in order, none lost


def test_the_recorder_records_remote_objects(shared: tuple[int, str], tmp_path: Path) -> None:
    port, session = shared
    path = tmp_path / "remote.mcap"
    selection = f"SELECT xbus.Sensor FROM {session}.b WHERE serial = 7"
    text = (
        "kernel: {appName: recording}\nload:\n" + transport_entry(port) + "  - name: recorder\n"
        "    freqHz: 10\n    recordings:\n"
        f"      - {{name: r, file: {path}, selections: ['{selection}']}}\n"
    )
    seen: dict[str, Any] = {}

    def setup(api: RunApi) -> None:
        seen["sub"] = api.select(selection)

    def started(api: RunApi) -> bool:
        if seen["sub"].objects:
            seen["from"] = count(seen["sub"].objects[0])
        return "from" in seen

    def counted(api: RunApi) -> bool:  # the recorder saw as many commits, give or take a few
        return bool(count(seen["sub"].objects[0]) >= seen["from"] + 40)

    probe = Probe([started, counted], setup)  # stops the kernel when done, not a fixed time
    kernel = Kernel(load_config_text(text), [("probe", probe, 2)])
    assert kernel.run(Duration.parse("30 s")) == 0
    assert probe.done
    _, records = read_recording(path)
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "add" and {r["object"] for r in records} == {"s1"}
    assert records[0]["class"] == "xbus.Sensor" and records[0]["state"]["serial"] == 7
    counts = [r["values"]["count"] for r in records if r["kind"] == "set"]
    assert len(counts) > 20 and counts == list(range(counts[0], counts[0] + len(counts)))
    ticks = [r["args"]["count"] for r in records if r["kind"] == "event" and r["event"] == "ticked"]
    assert ticks[-5:] == counts[-5:]  # each commit's event beside its values


def test_sessions_report_the_buses_other_processes_publish_on(shared: tuple[int, str]) -> None:
    port, session = shared
    seen: dict[str, Any] = {"detected": []}

    def setup(api: RunApi) -> None:
        seen["sessions"] = sessions = api.sessions()
        sessions.on_detected(seen["detected"].extend)

    def found(api: RunApi) -> bool:
        return f"{session}.b" in seen["detected"]

    code, probe = consume(port, [found], setup)
    assert code == 0 and probe.done
    sessions = seen["sessions"]
    assert session in sessions.names and f"{session}.b" in sessions.buses(session)
    assert sessions.buses(session) == [f"{session}.b"]  # nothing of other sessions
