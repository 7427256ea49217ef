"""``Kernel.wait_for`` (issue 21 item 8): waiting until another process, one of its components
or an object it owns is seen, across two real processes, and the one-line error naming what was
not seen. Loopback only; the child process and the kernel are stopped in a ``finally``."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from transport_support import Process, free_port, make_project, producer_config, session_name

from sengen.runtime import NotSeen
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

ROOT = "xreadygen"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("readiness")
    for _ in make_project(folder, ROOT):
        yield folder


def test_wait_for_returns_the_process_once_its_component_and_object_are_seen(
    project: Path,
) -> None:
    port, session = free_port(), session_name("ready")
    name = f"r{random.randrange(1_000_000)}"
    kernel = Kernel(
        load_config_text(
            f"kernel: {{appName: watcher}}\nload:\n  - name: transport\n"
            f"    rendezvous: tcp/127.0.0.1:{port}\n"
        )
    )
    producer: Process | None = None
    try:
        assert kernel.start()
        # Started after this kernel: what wait_for returns can only come from the network.
        config = producer_config(ROOT, port, session, f"name: {name}, class: xbus.Still, serial: 1")
        producer = Process(project, "ready_producer", config)
        seen = kernel.wait_for("producer", "producer", f"{session}.b.{name}", timeout=20)
        assert (seen.app, seen.pid, seen.component) == ("producer", producer.popen.pid, "producer")
        by_pid = kernel.wait_for(process=f"producer/{producer.popen.pid}", timeout=5)
        assert "producer" in by_pid.components and "transport" in by_pid.components
        with pytest.raises(NotSeen) as missing:
            kernel.wait_for(process="producer", object=f"{session}.b.{name}x", timeout=0.3)
        text = str(missing.value)
        assert text.startswith(
            f"waited for process 'producer' object '{session}.b.{name}x': not within 0.3 s"
        ), text
        with pytest.raises(NotSeen, match=r"component 'nobody'.*seen: watcher/\d+ \["):
            kernel.wait_for(component="nobody", timeout=2)
    finally:
        kernel.shutdown()
        output = producer.stop() if producer is not None else ""
    assert "Traceback" not in output, output


def test_wait_for_without_a_transport_says_so() -> None:
    kernel = Kernel(load_config_text("kernel: {appName: alone}\n"))
    try:
        assert kernel.start()
        with pytest.raises(NotSeen, match=r"^waited for process 'x': .*\(no transport is loaded\)"):
            kernel.wait_for(process="x", timeout=0.1)
        with pytest.raises(ValueError, match="needs a process"):
            kernel.wait_for()
    finally:
        kernel.shutdown()
