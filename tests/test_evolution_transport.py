"""Type evolution over the transport (evolution.md §1, §2; E4-E7, E14, E15 in two real
processes): a producer process runs version 2 of ``pct``, this test's kernel imports version 1.
The adapted ``pct.Counter`` is a typed proxy of the local class whose values, calls, setters and
events are converted; ``pct.Broken`` is refused with one line and nothing else stops; the
identical ``pct.Same`` is never checked (E18); a second producer of the local version shares the
typed subscription (E20); a query is the producer's (E22)."""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kernel_support import make_package
from transport_support import (
    Process,
    consume,
    free_port,
    session_name,
    transport_entry,
    wait_for_port,
)

import sengen
from sengen.runtime.errors import CallFailed
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.objects import evolution
from sengen.runtime.objects.evolution.adapted import AdaptedProxy

pytestmark = pytest.mark.slow

LOCAL = """\
package pct;

enum Mode : u8 { idle, run }

class Counter
{
  var count : i32;
  var mode  : Mode [writable];
  var label : string [writable, confirmed]; // only here: "" and MissingMember
  fn reset(to: i32) -> i32;
  fn gone();                        // only here: MissingMember
  event ticked(count: i32);
}

class Broken
{
  var count : i32;
}

class Same { var n : i32; }
"""

REMOTE = """\
package pct;

enum Mode : u8 { run, idle, paused }

struct Vec { x : f64 }

class Counter
{
  var mode  : Mode [writable];
  var count : i64;
  var extra : string [confirmed];   // only remote: never seen here
  fn reset(to: i64) -> i64;
  event ticked(at: u8, count: i64);
}

class Broken
{
  var count : Vec;
}

class Same { var n : i32; }
"""

REMOTE_IMPLEMENTATIONS = """\
from typing import Any

from evo_v2.pct import CounterBase


class Counting(CounterBase):
    def update(self, api: Any) -> None:
        count = self.count + 1
        self.set_next_count(count)
        self.events.ticked.emit(1, count)

    def reset_impl(self, to: int) -> int:
        return 2 * to
"""


LOCAL_IMPLEMENTATIONS = """\
from typing import Any

from evo_v1.pct import CounterBase


class Counting(CounterBase):
    def update(self, api: Any) -> None:
        self.set_next_count(self.count + 1)

    def reset_impl(self, to: int) -> int:
        return to

    def gone_impl(self) -> None:
        pass
"""


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    folder = tmp_path_factory.mktemp("evolution_local")
    yield from make_package(folder, "evo_v1", "pct", LOCAL, LOCAL_IMPLEMENTATIONS)


def _producer(folder: Path, port: int, session: str) -> Process:
    (folder / "stl" / "pct").mkdir(parents=True)
    (folder / "stl" / "pct" / "pct.stl").write_text(REMOTE)
    assert sengen.generate([folder / "stl"], output=folder / "evo_v2").ok
    (folder / "evo_v2_impls.py").write_text(REMOTE_IMPLEMENTATIONS)
    config = (
        "kernel: {appName: prod}\nload:\n" + transport_entry(port) + "build:\n"
        "  - name: producer\n    freqHz: 50\n    imports: [evo_v2.pct, evo_v2_impls]\n"
        "    objects:\n"
        f"      - {{name: c1, class: evo_v2_impls.Counting, bus: {session}.b}}\n"
        f"      - {{name: b1, class: pct.Broken, bus: {session}.b}}\n"
        f"      - {{name: b2, class: pct.Broken, bus: {session}.b}}\n"
        f"      - {{name: s1, class: pct.Same, bus: {session}.b}}\n"
    )
    return Process(folder, "producer", config)


def test_an_older_consumer_adapts_a_newer_producer_and_refuses_a_conflict(
    local: ModuleType, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    v1 = importlib.import_module("evo_v1.pct")

    evolution.reset()
    port, session = free_port(), session_name("evolution")
    producer = _producer(tmp_path, port, session)
    # E20: a second producer, of the consumer's own version: one typed subscription holds both.
    folder = Path(str(local.__file__)).parent
    same_version = (
        "kernel: {appName: prod1}\nload:\n" + transport_entry(port) + "build:\n"
        "  - name: producer\n    freqHz: 50\n    imports: [evo_v1.pct, evo_v1_impls]\n"
        f"    objects:\n      - {{name: c0, class: evo_v1_impls.Counting, bus: {session}.b}}\n"
    )
    older = Process(folder, "producer1", same_version)
    seen: dict[str, Any] = {"heard": []}

    def setup(api: RunApi) -> None:
        seen["counters"] = api.select(f"SELECT pct.Counter FROM {session}.b")
        seen["broken"] = api.select(f"SELECT pct.Broken FROM {session}.b")
        seen["same"] = api.select(f"SELECT pct.Same FROM {session}.b")
        # E22: the producer evaluates queries on its own version, which has no 'label'.
        seen["where"] = api.select(f'SELECT pct.Counter FROM {session}.b WHERE label = ""')

    def discovered(api: RunApi) -> bool:
        objects = {o.name: o for o in seen["counters"].objects}
        if "c0" not in objects or "c1" not in objects or not seen["same"].objects:
            return False
        if objects["c1"].count < 3:
            return False
        counter = seen["c1"] = objects["c1"]
        seen["c0_class"] = type(objects["c0"])
        assert isinstance(objects["c0"], v1.Counter)
        seen["same_class"] = type(seen["same"].objects[0])
        assert isinstance(counter, v1.Counter)
        # The producer's zero value is its first enumerator, "run": by name, not by key.
        assert counter.label == "" and counter.mode is v1.Mode.run
        counter.events.ticked.connect(seen["heard"].append)
        seen["reset"] = counter.reset(1_000)
        seen["gone"] = counter.gone()
        seen["label"] = counter.set_next_label("x")
        seen["mode"] = counter.set_next_mode(v1.Mode.idle)
        return True

    def answered(api: RunApi) -> bool:
        calls = [seen[k] for k in ("reset", "gone", "label", "mode")]
        if not all(c.done() for c in calls) or not seen["heard"] or not seen["where"].objects:
            return False
        seen["where_names"] = [o.name for o in seen["where"].objects]
        counter = seen["c1"]
        return bool(counter.mode is v1.Mode.idle)

    with caplog.at_level(logging.INFO, logger="sengen.transport"):
        try:
            code, probe = consume(port, [discovered, answered], setup)
        finally:
            output = producer.stop() + older.stop()
    assert code == 0 and probe.done, output
    assert not issubclass(seen["c0_class"], AdaptedProxy)
    assert seen["reset"].result() == 2_000
    for key, member in (("gone", "method 'gone'"), ("label", "property 'label'")):
        error = seen[key].exception()
        assert isinstance(error, CallFailed) and error.type_name == "MissingMember"
        assert error.message.startswith(f"{member} is not defined by the remote implementation")
    assert all(isinstance(n, int) for n in seen["heard"])
    assert not seen["broken"].objects
    assert seen["where_names"] == ["c0"]  # c1's producer has no 'label': never matches
    lines = [r.getMessage() for r in caplog.records]
    adapted = [line for line in lines if "its objects are adapted" in line]
    assert len(adapted) == 1 and adapted[0].startswith("type 'pct.Counter' of process prod/")
    refused = [line for line in lines if "incompatible remote implementation" in line]
    assert len(refused) == 1  # once per process, with two objects
    assert refused[0].startswith("type 'pct.Broken' has an incompatible remote implementation")
    assert refused[0].endswith(": property 'count': local i32, remote pct.Vec (struct)")
    assert evolution.builds() == 2  # E18: the identical pct.Same is never checked
    assert not any("pct.Same" in line for line in lines)
    assert not issubclass(seen["same_class"], AdaptedProxy)  # the class's own proxy


def test_e21_a_process_without_the_class_sees_the_producers_members(tmp_path: Path) -> None:
    """E21: a process that imports no version of ``pct`` (a shell) sees the producer's objects
    through dynamic proxies with the producer's own members; nothing is adapted."""
    port, session = free_port(), session_name("evolution_e21")
    producer = _producer(tmp_path, port, session)
    try:
        wait_for_port(port)  # the shell probes the rendezvous for 3 s only
        command = ["shell", "--connect", f"tcp/127.0.0.1:{port}", "--session", session]
        shell = subprocess.run(
            [sys.executable, "-m", "sengen", *command, "--wait", "15s", "-c", "c1.extra; info c1"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        output = producer.stop()
    assert shell.returncode == 0 and "Traceback" not in output, shell.stdout + shell.stderr
    lines = [line.split() for line in shell.stdout.splitlines()]
    # The producer's members (v2), as it types them: 'extra' (read as ""), an i64 count, its
    # two-argument event; not v1's 'label' nor 'gone'.
    assert ['""'] in lines and ["extra", '""', "string", "dynamic"] in lines, shell.stdout
    count = next(x for x in lines if x[:1] == ["count"])
    assert count[2:] == ["i64", "dynamic"] and int(count[1]) > 0, shell.stdout
    assert ["ticked(at:", "u8,", "count:", "i64)"] in lines, shell.stdout
    assert "label" not in shell.stdout and "gone" not in shell.stdout
    assert "adapted" not in shell.stdout + shell.stderr
