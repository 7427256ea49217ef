"""Secure mode end to end (issue 22): the ``examples/producer_consumer`` system run as two
``sengen run`` processes with its secure configurations, certificates made by
``sengen security init``; a stranger holding a certificate of the CA but no permissions; and
the configuration refused at start for bad certificates or permissions (exit 1, one line with
the file, the key path and the value).

Each run has a free loopback port and a session of its own; every process started is stopped.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zenoh
from transport_support import free_port

import sengen
from sengen.cli.main import main
from sengen.cli.security_bench import issue, load_authority, write_certificate, write_key

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "producer_consumer"
FILES = ("producer.yaml", "consumer.yaml", "producer-secure.yaml", "consumer-secure.yaml",
         "permissions.yaml", "pc_impl.py")  # fmt: skip
SHELL = """\
load:
  - name: transport
    rendezvous: tls/127.0.0.1:@env(SENGEN_PORT, 7447)
    security: {identity: shell, certificates: certs, permissions: permissions.yaml}
"""
START_TIMEOUT_S = 30.0
RUN_TIMEOUT_S = 60.0
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("secure_pc")
    for name in FILES:
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    # As the example's README says, plus a stranger: a certificate of the CA, no permissions.
    assert main(["security", "init", str(folder / "certs"), "--process", "producer",
                 "consumer", "eve", "shell"]) == 0  # fmt: skip
    return folder


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def start(
    folder: Path, config: str, until: str, env: dict[str, str], started: list[subprocess.Popen[str]]
) -> tuple[subprocess.Popen[str], Path]:
    log = folder / f"{config}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sengen", "run", config, "--until", until],
            cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=out, text=True,
        )  # fmt: skip
    started.append(process)
    return process, log


def wait_for(log: Path, text: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        if text in log.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not in the log within {START_TIMEOUT_S} s:\n{log.read_text()}")


def stranger(folder: Path, endpoint: str) -> zenoh.Session:
    """``eve``: a raw Zenoh peer with its own valid certificate, showing a process token."""
    cfg = zenoh.Config()
    tls = "transport/link/tls"
    for path, value in {
        "mode": "peer",
        "scouting/multicast/enabled": False,
        "listen/endpoints": [],
        "connect/endpoints": [endpoint],
        f"{tls}/root_ca_certificate": str(folder / "certs/ca.crt"),
        f"{tls}/connect_certificate": str(folder / "certs/eve.crt"),
        f"{tls}/connect_private_key": str(folder / "certs/eve.key"),
        f"{tls}/enable_mtls": True,
        f"{tls}/verify_name_on_connect": False,
    }.items():
        cfg.insert_json5(path, json.dumps(value))
    return zenoh.open(cfg)


def test_two_secure_processes_exchange_objects_within_their_permissions(
    example: Path, tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    folder = tmp_path / "run"
    shutil.copytree(example, folder)
    # The consumer may call scaled() but neither write step nor publish its watcher.
    permissions = folder / "permissions.yaml"
    text = permissions.read_text().replace("write: [pc.Counter.step]", "write: []")
    text = text.replace('publish: ["*.line"]           # the watcher', "publish: []")
    permissions.write_text(text + '  shell: {sessions: ["*"], call: ["*"]}\n')
    (folder / "shell.yaml").write_text(SHELL)
    port = free_port()
    env = {**os.environ, "SENGEN_PORT": str(port), "SENGEN_SESSION": f"sec{os.getpid()}"}
    bus = f"{env['SENGEN_SESSION']}.line"
    # Both run until told to stop, once what is checked has happened: never a race with a
    # fixed run time on a loaded machine.
    producer, produced = start(folder, "producer-secure.yaml", "60s", env, processes)
    wait_for(produced, "INFO sengen.kernel: started", producer)
    eve = stranger(folder, f"tls/127.0.0.1:{port}")
    try:
        token = eve.liveliness().declare_token("sengen/v2/eve/@alive/1/eve")
        consumer, consumed = start(folder, "consumer-secure.yaml", "60s", env, processes)
        wait_for(consumed, "counter fast: scaled(3) = ", consumer)
        wait_for(produced, "refused 'consumer': may not write 'pc.Counter.step'", producer)
        wait_for(produced, "refused process 'eve'", producer)
        # An operator's shell joins with an identity of its own: it may call, not write.
        commands = f"open {bus}; fast.label; fast.step = 5"
        shell = subprocess.run(
            [sys.executable, "-m", "sengen", "shell", "--attach", "shell.yaml", "-c", commands],
            cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
        )  # fmt: skip
        token.undeclare()  # type: ignore[no-untyped-call]
    finally:
        eve.close()  # type: ignore[no-untyped-call]
    for process in (consumer, producer):  # Ctrl-C: an orderly stop, status 130
        process.send_signal(signal.SIGINT)
        assert process.wait(RUN_TIMEOUT_S) == 130
    theirs, ours = produced.read_text(), consumed.read_text()
    for text in (theirs, ours):
        assert "Traceback" not in text and "ERROR" not in text, text
        assert "transport secure: identity '" in text and "transport open" not in text
    assert "process consumer/" in theirs and "(consumer) joined" in theirs
    assert "discovered counter fast on " in ours and "discovered counter slow on " in ours
    assert "counter fast: scaled(3) = " in ours  # an allowed call
    assert '"fast counter"' in shell.stdout, shell.stdout + shell.stderr
    assert "PermissionDenied: 'shell' may not write pc.Counter.step" in shell.stderr + shell.stdout
    assert shell.returncode == 1  # its one refused command
    assert f"refused 'consumer': may not publish on bus '{bus}'" in theirs
    assert "watcher joined" not in theirs  # its watcher reached no one at the producer
    # The refused write: logged at the owner with the identity, and never applied.
    refused = "WARNING sengen.transport: refused 'consumer': may not write 'pc.Counter.step'"
    assert refused in theirs
    assert "step changed" not in theirs and "summary: count" in theirs
    # The stranger was seen, refused and named once.
    assert theirs.count("refused process 'eve'") == 1, theirs
    assert ours.count("'eve'") == ours.count("refused process 'eve'") <= 1


def check(folder: Path, config: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        code = main(["run", config, "--check"])
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().err


def test_bad_certificates_and_permissions_are_refused_at_start(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "bad"
    shutil.copytree(example, folder)
    assert check(folder, "producer-secure.yaml", capsys)[0] == 0
    (folder / "permissions.yaml").write_text("identities:\n  consumer: {}\n  mallory: {}\n")
    code, err = check(folder, "consumer-secure.yaml", capsys)
    assert code == 1
    assert err.strip().startswith(
        "consumer-secure.yaml: load[0].security.permissions: permissions.yaml:"
        " identities.mallory: unknown identity 'mallory'"
    )
    shutil.copy(EXAMPLE / "permissions.yaml", folder / "permissions.yaml")
    config = folder / "consumer-secure.yaml"
    config.write_text(config.read_text().replace("tls/127", "tcp/127"))
    code, err = check(folder, "consumer-secure.yaml", capsys)
    assert code == 1 and "load[0].rendezvous: secure mode connects over TLS only" in err
    config.write_text(config.read_text().replace("tcp/127", "tls/127"))
    # Every member's certificate is checked: the consumer refuses the producer's expired one.
    ended = datetime.datetime.now(datetime.UTC).replace(microsecond=0) - datetime.timedelta(days=3)
    certificate, key = issue(
        load_authority(folder / "certs"), "producer", ended - datetime.timedelta(days=9), ended
    )
    write_certificate(folder / "certs/producer.crt", certificate)
    write_key(folder / "certs/producer.key", key)
    code, err = check(folder, "consumer-secure.yaml", capsys)
    assert code == 1
    assert err.strip() == (
        "consumer-secure.yaml: load[0].security.certificates: certificate"
        f" 'certs/producer.crt' expired on {ended.isoformat()}"
    )
    assert "Traceback" not in err
