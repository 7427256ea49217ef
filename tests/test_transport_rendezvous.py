"""The rendezvous holder hung (SIGSTOP) and replaced, then restarted (issue 21 item 5): every
live process stays connected to every other. Loopback only; every process the test starts is
stopped (woken and ended) in a ``finally``."""

from __future__ import annotations

import random
import re
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from transport_support import Process, free_port, make_project, producer_config, session_name

from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "xrendezvousgen"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("rendezvous")
    for _ in make_project(folder, ROOT):
        yield folder


def _process(project: Path, app: str, port: int, session: str, serial: int) -> Process:
    objects = f"name: {app}, class: xbus.Still, serial: {serial}"
    config = producer_config(ROOT, port, session, objects, freq_hz=20)
    return Process(project, app, config.replace("appName: producer", f"appName: {app}"))


def _bound(port: int, timeout: float = 20.0) -> bool:
    """Whether someone listens on ``port`` within ``timeout`` (the port is the signal)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.05)
    return False


def test_a_hung_rendezvous_holder_replaced_and_restarted_splits_nobody(project: Path) -> None:
    port, session = free_port(), session_name("hung")
    kernel = Kernel(
        load_config_text(
            "kernel: {appName: watcher}\nload:\n  - name: transport\n"
            f"    rendezvous: tcp/127.0.0.1:{port}\n    leaseMs: 1000\n"
        )
    )
    holder = _process(project, "holder", port, session, random.randrange(1, 1000))
    started = [holder]
    try:
        assert _bound(port), "the holder never listened on the rendezvous"
        assert kernel.start()
        kernel.wait_for("holder", "producer", f"{session}.b.holder", timeout=20)
        holder.signal(signal.SIGSTOP)  # hung: its port still bound, nothing answered on it
        newcomer = _process(project, "newcomer", port, session, random.randrange(1, 1000))
        started.append(newcomer)
        kernel.wait_for("newcomer", "producer", f"{session}.b.newcomer", timeout=20)
        holder.signal(signal.SIGKILL)
        holder.popen.wait(10)
        restarted = _process(project, "restarted", port, session, random.randrange(1, 1000))
        started.append(restarted)
        kernel.wait_for("restarted", "producer", f"{session}.b.restarted", timeout=20)
    finally:
        kernel.shutdown()
        outputs = [p.stop() for p in started]
    assert not [o for o in outputs if "Traceback" in o], outputs
    # And the newcomer and the restarted holder saw each other and the watcher.
    _, newcomer_log, restarted_log = outputs
    for log, other in ((newcomer_log, "restarted"), (restarted_log, "newcomer")):
        for app in ("watcher", other):
            assert re.search(rf"INFO sengen.transport: process {app}/\d+ \(\w+\) joined", log), log
