"""Secure mode against raw zenoh-python peers, as an attacker on the network would act (issue 22,
part 4): the TLS and access-control settings sengen derives from a bench made by
``sengen security init`` are opened as bare Zenoh sessions, and the attacker tries what the
plain mode cannot stop. Checked against the installed Zenoh, not against its documentation.

No sleeps: a peer that cannot join is asked to fail its one connection attempt at once
(``connect/exit_on_failure``), and a forgery's absence is read after a later, allowed message on
the same link has arrived (Zenoh keeps the order of one session's messages to another).
"""

from __future__ import annotations

import contextlib
import json
import queue
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zenoh
from transport_support import free_port

from sengen.cli.security_bench import (
    init_bench,
    issue,
    make_authority,
    write_certificate,
    write_key,
)
from sengen.runtime.components.transport.security.access import zenoh_settings
from sengen.runtime.components.transport.security.certificates import load_credentials
from sengen.runtime.components.transport.security.permissions import load_permissions

P = "sengen/v2"
WAIT = 10.0  # s: the longest an allowed message may take to arrive on a loaded machine


def config(endpoints: dict[str, list[str]], settings: dict[str, Any]) -> zenoh.Config:
    cfg = zenoh.Config()
    cfg.insert_json5("mode", '"peer"')
    cfg.insert_json5("scouting/multicast/enabled", "false")
    cfg.insert_json5("listen/endpoints", json.dumps(endpoints.get("listen", [])))
    cfg.insert_json5("connect/endpoints", json.dumps(endpoints.get("connect", [])))
    # One attempt, failing open(): a refused peer is known at once, without waiting.
    cfg.insert_json5("connect/timeout_ms", "0")
    cfg.insert_json5("connect/exit_on_failure", "true")
    for path, value in settings.items():
        cfg.insert_json5(path, json.dumps(value))
    return cfg


def secure(folder: Path, identity: str) -> dict[str, Any]:
    credentials = load_credentials(folder, identity)
    permissions = load_permissions(folder / "permissions.yaml", credentials.members, identity)
    return zenoh_settings(credentials, permissions, P)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("zbench") / "certs"
    init_bench(folder, ["alice", "bob", "mallory"])
    return folder


@pytest.fixture
def system(bench: Path) -> Iterator[tuple[str, zenoh.Session, zenoh.Session]]:
    """alice listening on a free TLS port, bob connected to her: two honest processes. Zenoh
    peers do not forward each other's messages: an attacker must reach bob itself, which it
    does as sengen's processes do (gossip gives it bob's endpoint)."""
    endpoint = f"tls/127.0.0.1:{free_port()}"
    alice = zenoh.open(config({"listen": [endpoint]}, secure(bench, "alice")))
    try:
        listen = ["tls/127.0.0.1:0"]  # every peer listens: the others reach it by gossip
        bob = zenoh.open(config({"listen": listen, "connect": [endpoint]}, secure(bench, "bob")))
        try:
            yield endpoint, alice, bob
        finally:
            bob.close()  # type: ignore[no-untyped-call]
    finally:
        alice.close()  # type: ignore[no-untyped-call]


class Inbox:
    """What a subscriber received, by key, read with a deadline."""

    def __init__(self, session: zenoh.Session, key: str) -> None:
        self.samples: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.subscriber = session.declare_subscriber(key, self._on)

    def _on(self, sample: zenoh.Sample) -> None:
        self.samples.put((str(sample.key_expr), sample.payload.to_bytes()))

    def until(
        self, payload: bytes, resend: Callable[[], None] | None = None
    ) -> list[tuple[str, bytes]]:
        """Everything received up to ``payload``; ``resend`` is called while it has not come
        (a subscription takes a moment to reach the publisher)."""
        seen: list[tuple[str, bytes]] = []
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if resend is not None:
                resend()
            try:
                item = self.samples.get(timeout=0.05)
            except queue.Empty:
                continue
            seen.append(item)
            if item[1] == payload:
                return seen
        raise AssertionError(f"{payload!r} never arrived; got {seen}")


def marker() -> bytes:
    return f"marker {random.getrandbits(64):x}".encode()


def test_a_peer_without_a_certificate_cannot_join(bench: Path, system: Any) -> None:
    endpoint, alice, _ = system
    ca = {"transport/link/tls/root_ca_certificate": str(bench / "ca.crt")}
    with pytest.raises(zenoh.ZError):  # TLS, trusting the CA, but no certificate of its own
        zenoh.open(config({"connect": [endpoint]}, ca))
    with pytest.raises(zenoh.ZError):  # plain TCP to the TLS port
        zenoh.open(config({"connect": [endpoint.replace("tls/", "tcp/")]}, {}))
    # Control: the same attempt with a certificate of the CA joins.
    mallory = zenoh.open(config({"connect": [endpoint]}, secure(bench, "mallory")))
    try:
        assert str(alice.zid()) in {str(z) for z in mallory.info.peers_zid()}
    finally:
        mallory.close()  # type: ignore[no-untyped-call]


def test_a_certificate_of_another_ca_cannot_join(bench: Path, system: Any, tmp_path: Path) -> None:
    endpoint = system[0]
    certificate, key = issue(make_authority("evil CA"), "alice")  # even claiming alice's name
    write_certificate(tmp_path / "alice.crt", certificate)
    write_key(tmp_path / "alice.key", key)
    settings = secure(bench, "mallory")
    for side in ("listen", "connect"):
        settings[f"transport/link/tls/{side}_certificate"] = str(tmp_path / "alice.crt")
        settings[f"transport/link/tls/{side}_private_key"] = str(tmp_path / "alice.key")
    with pytest.raises(zenoh.ZError):
        zenoh.open(config({"connect": [endpoint]}, settings))


def test_a_peer_cannot_put_on_another_identitys_keys(bench: Path, system: Any) -> None:
    endpoint, alice, bob = system
    heard = Inbox(bob, f"{P}/*/@all")
    direct = Inbox(bob, f"{P}/*/@to/bob")
    mallory = zenoh.open(config({"connect": [endpoint]}, secure(bench, "mallory")))
    try:
        first = marker()
        heard.until(first, lambda: mallory.put(f"{P}/mallory/@all", first))
        forged = b"Bye from alice " + marker()
        mallory.put(f"{P}/alice/@all", forged)
        mallory.put(f"{P}/alice/@to/bob", forged)
        mallory.put(f"{P}/bob/@all", forged)
        last = marker()
        mallory.put(f"{P}/mallory/@to/bob", last)
        mallory.put(f"{P}/mallory/@all", last)
        assert all(payload != forged for _, payload in heard.until(last))
        assert all(payload != forged for _, payload in direct.until(last))
        # Control: alice may put on her own prefix.
        honest = marker()
        assert (f"{P}/alice/@all", honest) in heard.until(
            honest, lambda: alice.put(f"{P}/alice/@all", honest)
        )
    finally:
        mallory.close()  # type: ignore[no-untyped-call]


def test_a_peer_cannot_read_another_identitys_inbox(bench: Path, system: Any) -> None:
    endpoint, alice, bob = system
    legit = Inbox(bob, f"{P}/*/@to/bob")
    mallory = zenoh.open(config({"connect": [endpoint]}, secure(bench, "mallory")))
    try:
        stolen = Inbox(mallory, f"{P}/*/@to/bob")
        wide = Inbox(mallory, f"{P}/**")
        public = Inbox(mallory, f"{P}/*/@all")  # declared last: once it works, so would the rest
        first = marker()
        public.until(first, lambda: alice.put(f"{P}/alice/@all", first))
        secret = b"for bob only " + marker()
        alice.put(f"{P}/alice/@to/bob", secret)
        last = marker()
        alice.put(f"{P}/alice/@all", last)
        public.until(last)
        assert (f"{P}/alice/@to/bob", secret) in legit.until(secret)
        assert stolen.samples.empty() and wide.samples.empty()
    finally:
        mallory.close()  # type: ignore[no-untyped-call]


def test_a_peer_cannot_show_a_token_or_answer_in_another_identitys_name(
    bench: Path, system: Any
) -> None:
    endpoint, alice, bob = system
    tokens: queue.Queue[str] = queue.Queue()
    watcher = bob.liveliness().declare_subscriber(
        f"{P}/*/@alive/**", lambda sample: tokens.put(str(sample.key_expr))
    )
    answering = alice.declare_queryable(
        f"{P}/alice/@info", lambda query: query.reply(f"{P}/alice/@info", b"alice")
    )
    mallory = zenoh.open(config({"connect": [endpoint]}, secure(bench, "mallory")))
    try:
        impostor = mallory.declare_queryable(
            f"{P}/alice/@info", lambda query: query.reply(f"{P}/alice/@info", b"mallory")
        )
        forged = mallory.liveliness().declare_token(f"{P}/alice/@alive/1/forged")
        own = f"{P}/mallory/@alive/{random.randint(1, 99999)}/own"
        mine = mallory.liveliness().declare_token(own)
        seen = []
        deadline = time.monotonic() + WAIT
        while own not in seen and time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                seen.append(tokens.get(timeout=0.05))
        assert own in seen  # control: its own token shows
        assert f"{P}/alice/@alive/1/forged" not in seen
        answers = [r.ok.payload.to_bytes() for r in bob.get(f"{P}/alice/@info") if r.ok]
        assert answers == [b"alice"]
        for entity in (impostor, forged, mine):
            entity.undeclare()  # type: ignore[no-untyped-call]
    finally:
        mallory.close()  # type: ignore[no-untyped-call]
        answering.undeclare()
        watcher.undeclare()
