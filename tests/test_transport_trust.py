"""The transport's v2 key layout under faults and forgeries (issues 21 and 22, plain mode):
remote commits applied whole, the last commit before the goodbye, identity from the key,
tables keyed by remote input bounded, and the rendezvous holder's loss."""

from __future__ import annotations

import logging
import random
import re
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from kernel_support import Probe
from transport_support import (
    Process,
    consume,
    free_port,
    make_project,
    producer_config,
    session_name,
)

from sengen.runtime import Duration
from sengen.runtime.components.transport import transport as transport_module
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.link import TransportConfig, open_session
from sengen.runtime.components.transport.transport import Transport
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "xtrustgen"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("transport_trust")
    for _ in make_project(folder, ROOT):
        yield folder


def counters(count: int, first: int = 0) -> str:
    return "\n".join(
        f"name: c{i}, class: xbus.Counting, serial: {i}" for i in range(first, first + count)
    )


def transport_of(kernel: Kernel) -> Transport:
    for runner in kernel.runners:
        if isinstance(runner.component, Transport):
            return runner.component
    raise AssertionError("the kernel has no transport")


class Background:
    """A kernel on a thread of its own, stopped by :meth:`stop`."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.thread = threading.Thread(target=kernel.run, args=(Duration.parse("30 s"),))
        self.thread.start()

    def stop(self) -> None:
        self.kernel.request_stop(0)
        self.thread.join(15)
        assert not self.thread.is_alive()


def test_a_remote_commit_is_seen_whole_and_a_filter_never_holds_what_it_excludes(
    project: Path,
) -> None:
    """200 objects change in each commit of the producer: every cycle of the consumer sees
    them all at one count, and subscriptions filtered on the count never hold an object past
    its bound (each bound is crossed by all 200 objects in one commit)."""
    port, session = free_port(), session_name("whole")
    producer = Process(project, "whole", producer_config(ROOT, port, session, counters(200)))
    bounds = random.Random().sample(range(20, 120), 8)
    seen: dict[str, Any] = {"torn": [], "leaks": [], "cycles": 0}
    try:

        def setup(api: RunApi) -> None:
            seen["all"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")
            seen["below"] = {
                k: api.select(f"SELECT xbus.Sensor FROM {session}.b WHERE count < {k}")
                for k in bounds
            }

        def watch(api: RunApi) -> bool:
            objects = seen["all"].objects
            if len(objects) == 200:
                counts = {o.count for o in objects}
                if len(counts) > 1:
                    seen["torn"].append(sorted(counts))
                seen["cycles"] += 1
            for bound, subscription in seen["below"].items():
                leaks = [o.count for o in subscription.objects if o.count >= bound]
                if leaks:
                    seen["leaks"].append((bound, leaks[:3]))
            return bool(seen["cycles"] > 0 and min(o.count for o in objects) > max(bounds) + 10)

        code, probe = consume(port, [watch], setup, until="40 s")
    finally:
        output = producer.stop()
    assert code == 0 and probe.done, output
    assert seen["torn"] == []
    assert seen["leaks"] == []
    assert seen["cycles"] > 50


def test_the_last_commit_of_a_leaving_process_is_seen_before_its_objects_go(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port, session = free_port(), session_name("last")
    text = producer_config(ROOT, port, session, counters(5), freq_hz=random.choice([40, 60]))
    producer = Background(Kernel(load_config_text(text), []))
    last: dict[str, int] = {}
    seen: dict[str, Any] = {}
    stopped = False
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def counting(api: RunApi) -> bool:
            objects = seen["sub"].objects
            last.update((o.name, o.count) for o in objects)
            if len(objects) < 5 or min(last.values()) < random.randrange(10, 30):
                return False
            seen["owned"] = [o for r in producer.kernel.runners for o in r.context.objects]
            return True

        def leave(api: RunApi) -> bool:
            nonlocal stopped
            last.update((o.name, o.count) for o in seen["sub"].objects)
            if not stopped:
                stopped = True
                threading.Thread(target=producer.stop).start()
            return not seen["sub"].objects

        with caplog.at_level(logging.INFO, logger="sengen.transport"):
            code, probe = consume(port, [counting, leave], setup, until="30 s")
    finally:
        if not stopped:
            producer.stop()
    producer.thread.join(15)
    assert code == 0 and probe.done
    final = {obj.name: obj.count for obj in seen["owned"] if hasattr(obj, "count")}
    assert len(final) == 5
    assert last == final
    # The consumer's lines about the producer: it left, once, after its objects were removed.
    lines = [r.getMessage() for r in caplog.records if "object(s) removed" in r.getMessage()]
    assert len(lines) == 1 and re.fullmatch(r"process producer/\d+ left: \d object\(s\) removed",
                                            lines[0]), lines  # fmt: skip


def a_transport(port: int) -> Transport:
    return Transport(TransportConfig(rendezvous=f"tcp/127.0.0.1:{port}"))


def consume_with(transport: Transport, steps: list[Any], setup: Any) -> tuple[int, Probe]:
    """:func:`consume` with the transport at hand, to look into it."""
    probe = Probe(steps, setup=setup, freq_hz=100)
    text = "kernel: {appName: consumer}\n"
    kernel = Kernel(load_config_text(text), [("transport", transport, 1), ("probe", probe, 2)])
    return kernel.run(Duration.parse("30 s")), probe


def _attacker(port: int) -> zenoh.Session:
    return open_session(TransportConfig(connect=[f"tcp/127.0.0.1:{port}"]))


def test_frames_claiming_another_identity_have_no_effect_and_are_counted(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An attacker forges a goodbye, a removal, changes and names in the producer's name on
    its own keys, declares and drops the producer's liveliness token, and answers the calls it
    eavesdrops with results of its own: the consumer's view and its calls' results hold."""
    port, session = free_port(), session_name("forged")
    producer = Process(project, "forged", producer_config(ROOT, port, session, counters(1)))
    attacker = "a" * 32
    transport = a_transport(port)
    seen: dict[str, Any] = {"transport": transport, "forged_results": 0}
    raw: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")
            raw["session"] = session_ = _attacker(port)
            raw["token"] = session_.liveliness().declare_token(
                f"sengen/v2/{attacker}/@alive/1/attacker"
            )

            def answer(sample: zenoh.Sample) -> None:  # eavesdrops every call
                frame = wire.decode(sample.payload.to_bytes())
                if isinstance(frame, wire.Invoke):
                    receiver = str(sample.key_expr).rpartition("/")[2]
                    reply = wire.Result(attacker, frame.call_id, wire.OK, "", "", b"\x9a\x02\0\0")
                    session_.put(f"sengen/v2/{attacker}/@to/{frame.sender}", reply.encode())
                    forged = wire.Result(receiver, frame.call_id, wire.OK, "", "", b"\x9a\x02\0\0")
                    session_.put(f"sengen/v2/{attacker}/@to/{frame.sender}", forged.encode())
                    seen["forged_results"] += 2

            raw["eavesdrop"] = session_.declare_subscriber("sengen/v2/*/@to/*", answer)

        def forge(api: RunApi) -> bool:
            objects = seen["sub"].objects
            if not objects or objects[0].count < 5:
                return False
            victim = objects[0]._endpoint_.zid
            consumer = seen["transport"].zid
            oid = objects[0]._endpoint_.oid
            put = raw["session"].put
            mine = f"sengen/v2/{attacker}/@to/{consumer}"
            put(mine, wire.Removed(victim, 1, oid).encode())
            put(
                mine,
                wire.Changes(victim, 1, (oid,), (b"\x01\x00\x00\x00" + b"\x07" * 12,)).encode(),
            )
            put(
                f"sengen/v2/{attacker}/@all",
                wire.Names(victim, f"{session}.b", (), ("c0",)).encode(),
            )
            put(mine, wire.Bye(victim).encode())
            seen["victim"] = victim
            return True

        def forge_token(api: RunApi) -> bool:
            # Once the frames are counted, so that the first (rate-limited) warning is theirs.
            if seen["transport"].forged < 3:
                return False
            victim = seen["victim"]
            token = raw["session"].liveliness().declare_token(f"sengen/v2/{victim}/@alive/1/x")
            token.undeclare()
            seen["forged_at"] = time.monotonic()
            seen["calls"] = [seen["sub"].objects[0].add(7, 5) for _ in range(20)]
            return True

        def held(api: RunApi) -> bool:
            objects = seen["sub"].objects
            assert len(objects) == 1, "a forgery removed the object"
            assert objects[0].count >= 0
            return time.monotonic() - seen["forged_at"] > 1.5 and all(
                c.done() for c in seen["calls"]
            )

        with caplog.at_level(logging.WARNING, logger="sengen.transport"):
            code, probe = consume_with(transport, [forge, forge_token, held], setup)
    finally:
        for name in ("eavesdrop", "token"):
            if name in raw:
                raw[name].undeclare()
        if "session" in raw:
            raw["session"].close()
        output = producer.stop()
    assert code == 0 and probe.done, output
    assert [c.result() for c in seen["calls"]] == [12] * 20
    assert seen["forged_results"] >= 40  # the attacker did answer
    warnings = [r.getMessage() for r in caplog.records if "claiming to come from" in r.getMessage()]
    assert warnings and f"sengen/v2/{attacker}/" in warnings[0]
    assert transport.forged >= 3
    assert "left" not in caplog.text and "lost" not in caplog.text


def test_tables_keyed_by_what_strangers_send_stay_bounded(
    project: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interests from 300 invented processes, one 2,000 levels deep: a few are kept for a while,
    the deep one is refused with one warning, nothing fails."""
    monkeypatch.setattr(transport_module, "UNCONFIRMED_GRACE", 0.5)
    port, session = free_port(), session_name("bounded")
    producer = Process(project, "bounded", producer_config(ROOT, port, session, counters(1)))
    seen: dict[str, Any] = {"peak": 0, "transport": a_transport(port)}
    raw: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")
            raw["session"] = _attacker(port)

        def flood(api: RunApi) -> bool:
            if not seen["sub"].objects:
                return False
            deep = f"SELECT * FROM {session}.b WHERE " + "(" * 2000 + "count > 1" + ")" * 2000
            raw["session"].put(
                "sengen/v2/deep/@all", wire.Interest("deep", 1, True, -1, deep).encode()
            )
            rng = random.Random()
            for _ in range(300):
                zid = f"{rng.getrandbits(128):032x}"
                text = f"SELECT * FROM {session}.b"
                raw["session"].put(
                    f"sengen/v2/{zid}/@all", wire.Interest(zid, 1, True, -1, text).encode()
                )
            seen["flooded_at"] = time.monotonic()
            return True

        def bounded(api: RunApi) -> bool:
            transport = seen["transport"]
            with transport._lock:
                strangers = sum(1 for p in transport._peers.values() if not p.alive)
            seen["peak"] = max(seen["peak"], strangers)
            return time.monotonic() - seen["flooded_at"] > 2.0 and strangers == 0

        with caplog.at_level(logging.WARNING, logger="sengen.transport"):
            code, probe = consume_with(seen["transport"], [flood, bounded], setup)
    finally:
        if "session" in raw:
            raw["session"].close()
        output = producer.stop()
    assert code == 0 and probe.done, output
    assert 0 < seen["peak"] <= transport_module.MAX_UNCONFIRMED
    assert "ignoring an invalid interest of process deep" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_losing_the_rendezvous_holder_leaves_the_others_connected(project: Path) -> None:
    port, session = free_port(), session_name("holder")
    holder = Process(project, "holder", producer_config(ROOT, port, session, counters(1)))
    other = Process(project, "other", producer_config(ROOT, port, session, counters(1, 1)))
    seen: dict[str, Any] = {}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def both(api: RunApi) -> bool:
            return {o.name for o in seen["sub"].objects} == {"c0", "c1"}

        def kill(api: RunApi) -> bool:
            holder.signal(signal.SIGKILL)
            return True

        def only_other(api: RunApi) -> bool:
            names = {o.name: o for o in seen["sub"].objects}
            if set(names) != {"c1"}:
                return False
            seen["after"] = names["c1"].count
            return True

        def still_counting(api: RunApi) -> bool:
            return bool(seen["sub"].objects) and seen["sub"].objects[0].count > seen["after"] + 50

        code, probe = consume(port, [both, kill, only_other, still_counting], setup)
    finally:
        holder.stop()
        output = other.stop()
    assert code == 0 and probe.done, output


class _Recorded:
    """A Zenoh session that keeps what is put on it."""

    def __init__(self) -> None:
        self.puts: list[tuple[str, bytes]] = []

    def put(self, key: str, data: bytes) -> None:
        self.puts.append((key, data))


def test_a_call_that_will_not_be_served_is_answered_with_an_error() -> None:
    """From a process thought gone, and to an object nobody holds here: answered, not dropped."""
    transport = Transport()
    session = _Recorded()
    transport._session = session  # type: ignore[assignment]
    transport.zid = "me"
    call_id = random.randrange(1, 1 << 40)
    transport._gone["gone"] = None
    transport.handle_frame("gone", wire.Invoke("gone", call_id, 5, False, b"").encode())
    ((key, data),) = session.puts
    answer = wire.decode(data)
    assert key == "sengen/v2/me/@to/gone"
    assert isinstance(answer, wire.Result) and answer.call_id == call_id
    assert (answer.status, answer.error_type) == (wire.GONE, "ObjectGone")
    sent: list[bytes] = []

    def put(peer: Any, data: bytes, what: Any, stamp: bool = True) -> bool:
        sent.append(data)
        return True

    transport._put = put  # type: ignore[method-assign]
    transport.handle_frame("known", wire.Invoke("known", call_id + 1, 5, True, b"").encode())
    (reply,) = map(wire.decode, sent)
    assert isinstance(reply, wire.Result) and reply.call_id == call_id + 1
    assert reply.status == wire.GONE
