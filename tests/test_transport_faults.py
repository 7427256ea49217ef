"""The transport's receive path reports a failure by its cause: a malformed
message is one rate-limited warning with a count; a bug while handling a well-formed message is
one ERROR with its traceback per place, and the process goes on serving its other peers.
Loopback only, a free port and a session of each test's own."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from transport_support import (
    Process,
    consume,
    free_port,
    make_project,
    producer_config,
    session_name,
)

from sengen.runtime import RunApi
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.handles import RemoteHandle
from sengen.runtime.components.transport.link import TransportConfig, open_session
from sengen.runtime.components.transport.transport import Transport

ROOT = "xfgen"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("transport_faults")
    for _ in make_project(folder, ROOT):
        yield folder


def by_name(objects: list[Any]) -> dict[str, Any]:
    return {o.name: o for o in objects}


def transport_records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sengen.transport" and r.levelno == level]


def injected_handler_bug() -> None:
    """The test double's fault: what a bug in a handler of the receive path raises."""
    raise RuntimeError("injected handler bug")


def test_a_handler_bug_is_logged_once_with_its_traceback_and_other_peers_are_still_served(
    project: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    port, session = free_port(), session_name("handler_bug")
    # Two producer processes; every event of the first one's object fails in this process.
    first = Process(
        project,
        "first",
        producer_config(ROOT, port, session, "name: s1, class: xbus.Counting, serial: 1"),
    )
    second = Process(
        project,
        "second",
        producer_config(ROOT, port, session, "name: s2, class: xbus.Counting, serial: 2"),
    )
    failures = [0]
    emitted = RemoteHandle.emitted

    def buggy(self: RemoteHandle, name: str, args: tuple[Any, ...], time: int) -> None:
        if self.name == "s1":
            failures[0] += 1
            injected_handler_bug()
        emitted(self, name, args, time)

    monkeypatch.setattr(RemoteHandle, "emitted", buggy)
    seen: dict[str, Any] = {"ticked": []}
    try:

        def setup(api: RunApi) -> None:
            seen["sub"] = api.select(f"SELECT xbus.Sensor FROM {session}.b")

        def failed(api: RunApi) -> bool:
            found = by_name(seen["sub"].objects)
            if not {"s1", "s2"} <= found.keys() or not transport_records(caplog, logging.ERROR):
                return False
            seen["s1"], seen["s2"] = found["s1"], found["s2"]
            seen["s2"].events.ticked.connect(seen["ticked"].append)
            seen["from"] = (seen["s1"].count, seen["s2"].count, failures[0])
            return True

        def still_served(api: RunApi) -> bool:
            s1_from, s2_from, failures_from = seen["from"]
            return (
                seen["s2"].count >= s2_from + 10  # the other peer's updates
                and len(seen["ticked"]) >= 10  # and its events
                and seen["s1"].count >= s1_from + 10  # the failing peer's other frames too
                and failures[0] >= failures_from + 10  # while the bug goes on failing
            )

        with caplog.at_level(logging.WARNING, logger="sengen.transport"):
            code, probe = consume(port, [failed, still_served], setup)
    finally:
        output = first.stop() + second.stop()
    assert code == 0 and probe.done, output
    errors = transport_records(caplog, logging.ERROR)
    assert len(errors) == 1, [r.getMessage() for r in errors]  # once for its place
    (error,) = errors
    message = error.getMessage()
    assert message.startswith("failed to handle an Emitted frame from process producer/"), message
    assert "RuntimeError: injected handler bug" in message
    assert error.exc_info is not None and error.exc_info[0] is RuntimeError
    traceback = logging.Formatter().formatException(error.exc_info)
    assert "in injected_handler_bug" in traceback and "in buggy" in traceback
    assert not transport_records(caplog, logging.WARNING)  # nothing was malformed


def test_a_malformed_message_is_one_warning_with_a_count_and_no_error(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()
    sender = "f" * 32
    # A sengen header naming its sender, then bytes no frame has; then bytes of no format.
    named = wire.Bye(sender).encode() + b"junk"
    garbage = [named, b"garbage", b"\x00" * 3, bytes(range(256))]
    arrived: list[bytes] = []
    transports: list[Transport] = []
    handle_frame = Transport.handle_frame

    def counted(self: Transport, frame_sender: str, data: bytes) -> None:
        handle_frame(self, frame_sender, data)
        transports.append(self)
        arrived.append(data)  # after handling: a warning of it is logged by now

    monkeypatch.setattr(Transport, "handle_frame", counted)
    seen: dict[str, Any] = {"tokens": []}

    def connect(api: RunApi) -> bool:
        # This kernel's transport listens on the port: a bare Zenoh peer joins it.
        seen["raw"] = raw = open_session(TransportConfig(connect=[f"tcp/127.0.0.1:{port}"]))
        seen["watch"] = raw.liveliness().declare_subscriber(
            "sengen/v2/*/@alive/*/*", lambda s: seen["tokens"].append(str(s.key_expr)), history=True
        )
        return True

    def attack(api: RunApi) -> bool:
        if not seen["tokens"]:  # the consumer is not reachable yet
            return False
        for payload in garbage:
            seen["raw"].put(f"sengen/v2/{sender}/@to/*", payload)
        return True

    def counted_again(api: RunApi) -> bool:
        if len(arrived) < len(garbage):
            return False
        # Every one arrived within the interval of the first warning: one more, once the
        # interval is over, reports how many were dropped since.
        transports[0].faults.interval = 0.0
        seen["raw"].put(f"sengen/v2/{sender}/@to/*", b"garbage again")
        return True

    def reported(api: RunApi) -> bool:
        return len(arrived) > len(garbage)

    try:
        with caplog.at_level(logging.WARNING, logger="sengen.transport"):
            code, probe = consume(port, [connect, attack, counted_again, reported], freq_hz=100)
    finally:
        if "watch" in seen:
            seen["watch"].undeclare()
        if "raw" in seen:
            raw: zenoh.Session = seen["raw"]
            raw.close()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs
    assert code == 0 and probe.done
    warnings = [r.getMessage() for r in transport_records(caplog, logging.WARNING)]
    assert warnings == [
        f"dropped a malformed message from process {sender} ({len(named)} bytes): "
        "4 unexpected bytes at the end (1 of this kind since the last such warning)",
        f"dropped a malformed message from process {sender} (13 bytes): not a sengen frame "
        f"({len(garbage)} of this kind since the last such warning)",
    ]
    assert not transport_records(caplog, logging.ERROR)
    assert all(r.exc_info is None for r in caplog.records)
