"""Secure mode's start-time checks and ``sengen security init`` (issue 22, parts 2 and "bad
input"): certificates, the permissions file, the access-control table and the owner's checks,
without opening a Zenoh session (tests/test_security_zenoh.py attacks real sessions)."""

from __future__ import annotations

import datetime
import logging
import random
import shutil
import string
from pathlib import Path

import pytest
from pydantic import ValidationError

from sengen.cli.main import main
from sengen.cli.security_bench import (
    init_bench,
    issue,
    load_authority,
    make_authority,
    write_certificate,
    write_key,
)
from sengen.runtime.components.transport.faults import Faults
from sengen.runtime.components.transport.security.access import access_control
from sengen.runtime.components.transport.security.certificates import load_credentials
from sengen.runtime.components.transport.security.guard import REFUSED, Guard
from sengen.runtime.components.transport.security.permissions import load_permissions
from sengen.runtime.components.transport.security.settings import SecurityConfig

NAMES = ["producer", "consumer", "shell"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bench") / "certs"
    init_bench(folder, NAMES)
    return folder


def copy_of(bench: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "certs"
    shutil.copytree(bench, folder)
    return folder


def security(
    folder: Path, identity: str = "producer", permissions: Path | None = None
) -> dict[str, str]:
    chosen = permissions or folder / "permissions.yaml"
    return {"identity": identity, "certificates": str(folder), "permissions": str(chosen)}


def refusal(settings: dict[str, str]) -> tuple[str, str]:
    """The key and the message a refused ``security:`` section is reported with."""
    with pytest.raises(ValidationError) as caught:
        SecurityConfig.model_validate(settings)
    error = caught.value.errors()[0]
    return ".".join(map(str, error["loc"])), error["msg"]


def test_init_makes_a_bench_every_process_can_use(bench: Path) -> None:
    for name in NAMES:
        config = SecurityConfig.model_validate(security(bench, name))
        assert config.credentials.identity == name
        assert config.credentials.members == frozenset(NAMES)
        assert config.granted.allows(name, "call", "any.Class.member")
    assert (bench / "ca.key").stat().st_mode & 0o077 == 0  # private keys are the owner's only


def test_init_command_adds_to_a_bench_and_refuses_bad_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "certs"
    assert main(["security", "init", str(folder), "--process", "a1", "b2"]) == 0
    out = capsys.readouterr().out
    assert "a1.crt" in out and "permissions.yaml" in out and "security: {identity: NAME" in out
    assert main(["security", "init", str(folder), "--process", "c3"]) == 0
    assert "kept permissions.yaml" in capsys.readouterr().out
    assert load_credentials(folder, "c3").members == {"a1", "b2", "c3"}  # the same CA
    assert main(["security", "init", str(folder), "--process", "a1"]) == 1
    assert "exists already" in capsys.readouterr().err
    for bad in ("x/y", "*", "@all", "ca", "a" * 65):
        assert main(["security", "init", str(folder), "--process", bad]) == 1
        assert f"invalid identity '{bad}'" in capsys.readouterr().err


def test_missing_files_are_refused_with_the_file(bench: Path, tmp_path: Path) -> None:
    folder = copy_of(bench, tmp_path)
    assert refusal(security(tmp_path / "nowhere")) == (
        "certificates",
        f"'{tmp_path / 'nowhere'}' is not a folder",
    )
    (folder / "producer.key").unlink()
    assert refusal(security(folder)) == (
        "certificates",
        f"missing private key '{folder / 'producer.key'}'",
    )
    assert refusal(security(folder, "nobody")) == (
        "certificates",
        f"no certificate '{folder / 'nobody.crt'}' for identity 'nobody'",
    )
    (folder / "ca.crt").unlink()
    assert refusal(security(folder)) == (
        "certificates",
        f"missing certificate '{folder / 'ca.crt'}'",
    )
    assert refusal(security(folder, "bad id"))[0] == "identity"


def test_expired_and_foreign_certificates_are_refused(bench: Path, tmp_path: Path) -> None:
    folder = copy_of(bench, tmp_path)
    authority = load_authority(folder)
    now = datetime.datetime.now(datetime.UTC)
    days = random.randint(2, 300)
    ended = (now - datetime.timedelta(days=days)).replace(microsecond=0)
    certificate, key = issue(authority, "producer", ended - datetime.timedelta(days=30), ended)
    write_certificate(folder / "producer.crt", certificate)
    write_key(folder / "producer.key", key)
    key_path, message = refusal(security(folder))
    assert key_path == "certificates"
    assert message == f"certificate '{folder / 'producer.crt'}' expired on {ended.isoformat()}"

    folder = copy_of(bench, tmp_path / "other")
    intruder, intruder_key = issue(make_authority("another CA"), "consumer")
    write_certificate(folder / "consumer.crt", intruder)
    key_path, message = refusal(security(folder))  # another member's: refused all the same
    assert message == (
        f"certificate '{folder / 'consumer.crt'}' is not signed by the certificate authority"
        f" '{folder / 'ca.crt'}'"
    )
    write_key(folder / "consumer.key", intruder_key)
    assert "is not signed" in refusal(security(folder, "consumer"))[1]


def test_a_certificate_must_name_its_file_and_match_its_key(bench: Path, tmp_path: Path) -> None:
    folder = copy_of(bench, tmp_path)
    shutil.copy(folder / "consumer.crt", folder / "producer.crt")
    assert refusal(security(folder))[1].startswith(
        f"certificate '{folder / 'producer.crt'}' names 'consumer' as its subject's common name"
    )
    folder = copy_of(bench, tmp_path / "keys")
    shutil.copy(folder / "consumer.key", folder / "producer.key")
    assert refusal(security(folder)) == (
        "certificates",
        f"private key '{folder / 'producer.key'}' does not belong to '{folder / 'producer.crt'}'",
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "identities:\n  producer: {}\n  mallory: {}\n",
            "identities.mallory: unknown identity 'mallory'",
        ),
        (
            "identities:\n  producer: {pubish: ['*']}\n",
            "identities.producer.pubish: unknown key 'pubish' (did you mean 'publish'?)",
        ),
        ("identitys: {}\n", "identitys: unknown key 'identitys' (did you mean 'identities'?)"),
        (
            "identities:\n  producer: {call: 5}\n",
            "identities.producer.call: expected a list of patterns, got 5",
        ),
        (
            "identities:\n  consumer: {}\n",
            "identities: no entry for this process's identity 'producer'",
        ),
        ("identities: [producer]\n", 'identities: expected a map, got ["producer"]'),
        ("identities: {producer: {}\n", "not valid YAML"),
    ],
)
def test_a_bad_permissions_file_is_refused_with_file_and_key(
    bench: Path, tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "permissions.yaml"
    path.write_text(text)
    key_path, found = refusal(security(bench, permissions=path))
    assert key_path == "permissions"
    assert found.startswith(f"{path}: ") and message in found


def test_the_access_control_table_names_every_leaf_of_each_identity() -> None:
    identity = "".join(random.choices(string.ascii_lowercase, k=8))
    table = access_control([identity], "sengen/v2")
    assert table["default_permission"] == "deny"
    rules = {rule["id"]: rule for rule in table["rules"]}
    own = rules[f"{identity} own"]
    assert own["flows"] == ["ingress"] and "put" in own["messages"]
    assert f"sengen/v2/{identity}/@all" in own["key_exprs"]
    assert all(key.startswith(f"sengen/v2/{identity}/") for key in own["key_exprs"])
    reads = rules[f"{identity} reads"]
    assert reads["key_exprs"] == ["sengen/v2/*/@all", f"sengen/v2/*/@to/{identity}"]
    assert table["subjects"] == [{"id": identity, "cert_common_names": [identity]}]


def test_the_guard_refuses_outside_the_permissions_and_logs_once_per_interval(
    bench: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "permissions.yaml"
    path.write_text(
        "identities:\n  producer: {}\n"
        "  consumer: {sessions: [demo], publish: [demo.*], call: [x.Counter.add],"
        " write: [x.Counter.lim*]}\n"
    )
    permissions = load_permissions(path, NAMES, "producer")
    guard = Guard(permissions, Faults(interval=3600.0))
    assert guard.joins("consumer", "demo.bus") and not guard.joins("consumer", "other.bus")
    assert guard.publishes("consumer", "demo.x") and not guard.publishes("producer", "demo.x")
    assert guard.call_refusal("consumer", "x.Counter", "add", write=False) is None
    assert guard.call_refusal("consumer", "x.Counter", "limit", write=True) is None
    caplog.set_level(logging.WARNING, "sengen.transport")
    tries = random.randint(3, 9)
    for _ in range(tries):
        refused = guard.call_refusal("consumer", "x.Counter", "reset", write=False)
        assert refused is not None and refused.type_name == REFUSED
    lines = [r.getMessage() for r in caplog.records if "x.Counter.reset" in r.getMessage()]
    assert lines == [
        f"refused 'consumer': may not call 'x.Counter.reset' (permissions file '{path}')"
        " (1 of this kind since the last such warning)"
    ]
    assert not permissions.allows_all("consumer", "call")
    assert load_permissions(bench / "permissions.yaml", NAMES, "shell").allows_all("shell", "write")
    assert guard.admits("producer") and not guard.admits("shell") and not guard.admits("shell")
    assert sum("refused process 'shell'" in r.getMessage() for r in caplog.records) == 1


def test_the_access_control_covers_every_key_the_transport_uses() -> None:
    """The ACL names the layout's leaves one by one (Zenoh's wildcards skip ``@`` chunks): each
    key ``link`` builds for a process must fall under that process's own rule, and each
    subscription under what it may read or discover."""
    import zenoh

    from sengen.runtime.components.transport import link

    me, other = "alice", "bob"
    rules = {rule["id"]: rule for rule in access_control([me, other], link.PREFIX)["rules"]}

    def covered(rule: str, key: str) -> bool:
        return any(
            zenoh.KeyExpr(allowed).includes(zenoh.KeyExpr(key))
            for allowed in rules[rule]["key_exprs"]
        )

    for key in (
        link.alive_key(me, random.randint(1, 99999), "app"),
        link.all_key(me),
        link.to_key(me, other),
        link.info_key(me),
    ):
        assert covered(f"{me} own", key), key
        assert not covered(f"{other} own", key), key
    assert covered(f"{me} reads", link.ALL_ANY) and covered(f"{me} reads", link.to_me(me))
    assert not covered(f"{me} reads", link.to_me(other))
    assert covered(f"{me} discovers", link.ALIVE_ANY)
    assert covered(f"{me} discovers", link.INFO_ANY)
    assert covered(f"{other} receives", link.to_key(me, other))
    assert not covered(f"{other} receives", link.to_key(me, me))


def test_secure_mode_speaks_tls_only(bench: Path) -> None:
    from sengen.runtime.components.transport.link import TransportConfig

    secure = {"security": security(bench)}
    assert TransportConfig.model_validate(secure).rendezvous == "tls/127.0.0.1:7447"
    assert TransportConfig.model_validate({}).rendezvous == "tcp/127.0.0.1:7447"  # plain: as was
    port = random.randint(1024, 65535)
    for key, value in (("rendezvous", f"tcp/127.0.0.1:{port}"), ("listen", [f"udp/[::]:{port}"])):
        with pytest.raises(ValidationError) as caught:
            TransportConfig.model_validate({**secure, key: value})
        (error,) = caught.value.errors()
        assert error["loc"] == (key,)
        assert "secure mode connects over TLS only" in error["msg"]
