"""``sengen shell --connect`` / ``--attach`` joining a system that runs in another process, the
process list (``ps``) and the owner ``info`` names (issue 27, items 1 and 2).

Loopback only, with a free port and a session of each test's own; every process a test starts
is stopped in a ``finally``; every wait is bounded.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zenoh
from kernel_support import make_package
from transport_support import (
    IMPLEMENTATIONS,
    STL,
    Process,
    free_port,
    producer_config,
    wait_for_port,
)

ROOT = "xattachgen"
TIMEOUT = 30  # s, for any one process


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("attach")
    for _ in make_package(folder, ROOT, "xbus", STL, IMPLEMENTATIONS):
        yield folder


def shell(folder: Path, *args: str) -> tuple[int, str, str, int]:
    """Run ``sengen shell ARGS``: exit status, stdout, stderr and the shell's pid."""
    popen = subprocess.Popen(
        [sys.executable, "-m", "sengen", "shell", *args],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = popen.communicate(timeout=TIMEOUT)
    finally:
        if popen.poll() is None:
            popen.kill()
            popen.communicate()
    assert "Traceback" not in out + err
    return popen.returncode, out, err, popen.pid


OBJECTS = "name: s0, class: xbus.Counting, serial: 1"


def row(out: str, app: str) -> list[str]:
    """The ``ps`` row of ``app``, split on the column gaps."""
    found = [line for line in out.splitlines() if line.startswith(app + " ")]
    assert len(found) == 1, out
    return re.split(r"\s{2,}", found[0])


def test_connect_lists_processes_and_names_the_owner(project: Path) -> None:
    port, session = free_port(), f"t{os.getpid()}_connect"
    producer = Process(project, "connect", producer_config(ROOT, port, session, OBJECTS))
    try:
        wait_for_port(port)
        endpoint = f"tcp/127.0.0.1:{port}"
        code, out, err, pid = shell(
            project, "--connect", endpoint, "--session", session, "-c", "s0.serial; ps; info s0"
        )
    finally:
        producer.stop()
    assert code == 0, out + err
    assert f"joined rendezvous {endpoint}, session {session}" in err
    assert "warning" not in err
    host = socket.gethostname()
    # Objects: s0, and each kernel's api object on local.kernel.
    producing = ["producer", str(producer.popen.pid), host, "realTime", "2", "alive"]
    assert row(out, "producer") == [*producing, "transport, producer, kernel"]
    # The shell's own process: only the kernel, its transport and the shell were started.
    mine = ["sengen", str(pid), host, "realTime", "1", "alive (this shell)"]
    assert row(out, "sengen") == [*mine, "transport, shell, kernel"]
    owner = f"owner        producer in producer (pid {producer.popen.pid} on {host}) (remote)"
    assert owner in out.splitlines(), out


def test_attach_reads_only_the_transport_settings(project: Path) -> None:
    port, session = free_port(), f"t{os.getpid()}_attach"
    producer = Process(project, "attach", producer_config(ROOT, port, session, OBJECTS))
    try:
        wait_for_port(port)
        # The producer's own file: were its components started, s0's name would clash.
        code, out, err, _ = shell(
            project, "--attach", "attach.yaml", "--session", session, "-c", "s0.serial; ps"
        )
    finally:
        producer.stop()
    assert code == 0, out + err
    assert "1" in out.splitlines()  # s0's serial
    assert f"joined rendezvous tcp/127.0.0.1:{port}" in err
    assert row(out, "producer")[1] == str(producer.popen.pid)
    assert row(out, "sengen")[-1] == "transport, shell, kernel"


def test_connect_passes_a_hung_holder_of_the_first_rendezvous_port(project: Path) -> None:
    """A port that accepts connections and never answers (a hung holder): the shell joins
    through the next rendezvous port, as the system's processes do (link.rendezvous_endpoints)."""
    port, session = free_port(), f"t{os.getpid()}_hung"
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", port))
        hung.listen(8)
        producer = Process(project, "hung", producer_config(ROOT, port, session, OBJECTS))
        try:
            wait_for_port(port + 1)  # the producer took the next port
            code, out, err, _ = shell(
                project, "--connect", f"tcp/127.0.0.1:{port}", "--session", session, "-c", "ps"
            )
        finally:
            producer.stop()
    assert code == 0, out + err
    assert row(out, "producer")[1] == str(producer.popen.pid)


def test_an_endpoint_that_does_not_answer_is_one_line_and_exit_1(project: Path) -> None:
    endpoint = f"tcp/127.0.0.1:{free_port()}"
    start = time.monotonic()
    code, out, err, _ = shell(project, "--connect", endpoint, "-c", "ps")
    assert code == 1
    assert time.monotonic() - start < 15
    assert out == ""
    assert err.splitlines() == [
        f"sengen: error: nothing answers at {endpoint} (waited 3 s): is the system running,"
        " and is this its rendezvous?"
    ]


def test_a_rendezvous_without_processes_is_warned_about(project: Path) -> None:
    """A Zenoh peer answers at the endpoint, but no sengen process is there."""
    port = free_port()
    config = zenoh.Config()
    config.insert_json5("listen/endpoints", f'["tcp/127.0.0.1:{port}"]')
    config.insert_json5("scouting/multicast/enabled", "false")
    bare = zenoh.open(config)
    try:
        code, _, err, _ = shell(project, "--connect", f"tcp/127.0.0.1:{port}", "-c", "sleep 4s")
    finally:
        bare.close()  # type: ignore[no-untyped-call]
    assert code == 0, err
    assert f"warning: no other process found at tcp/127.0.0.1:{port} within 3 s" in err


def test_usage_errors(project: Path) -> None:
    both = shell(project, "--connect", "tcp/127.0.0.1:1", "--attach", "x.yaml", "-c", "ps")
    assert both[0] == 2 and "give --connect or --attach, not both" in both[2]
    with_config = shell(project, "attach.yaml", "--connect", "tcp/127.0.0.1:1", "-c", "ps")
    assert with_config[0] == 2 and "give no CONFIG" in with_config[2]
