"""An adapted class under stepped virtual time and in a recorder (evolution.md §7; E24): a
producer process of version 2 of ``pct`` and a consumer process of version 1, which records the
producer's ``pct.Counter``, are stepped by this test's master kernel (three kernels, as in
tests/test_transport_stepping.py: data between the two others races the master's steps). Two
runs give identical recordings, and the recording holds the adapted object as version 1 has it:
its values, under its names."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from recording_support import read_recording
from test_evolution_transport import LOCAL, LOCAL_IMPLEMENTATIONS, REMOTE, REMOTE_IMPLEMENTATIONS
from transport_support import Process, free_port, session_name

import sengen
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

pytestmark = pytest.mark.slow

STEPS = 60


def tree(folder: Path, root: str, stl: str, implementations: str) -> None:
    """One version generated into ``folder/<root>``, its implementations beside it; never
    imported here (this process holding a version would refuse the other, §1.2)."""
    (folder / "stl" / "pct").mkdir(parents=True)
    (folder / "stl" / "pct" / "pct.stl").write_text(stl)
    assert sengen.generate([folder / "stl"], output=folder / root).ok
    (folder / f"{root}_impls.py").write_text(implementations)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("evolution_stepped")
    tree(folder / "v1", "evo_v1", LOCAL, LOCAL_IMPLEMENTATIONS)
    tree(folder / "v2", "evo_v2", REMOTE, REMOTE_IMPLEMENTATIONS)
    return folder


def clock(session: str, name: str, master: bool) -> str:
    return (
        f"kernel:\n  appName: {name}\n  runMode: virtualTime\n  clockBus: {session}.clocks\n"
        f"  clockName: clock_{name}\n  clockMaster: {'true' if master else 'false'}\n"
    )


def kernel(session: str, port: int, name: str, version: str, objects: str) -> str:
    """A stepped kernel with the transport and one component of ``version`` at 50 Hz."""
    return (
        clock(session, name, False)
        + f"load:\n  - name: transport\n    rendezvous: tcp/127.0.0.1:{port}\n"
        + f"build:\n  - name: {name}\n    freqHz: 50\n"
        + f"    imports: [{version}.pct, {version}_impls]\n    objects:\n{objects}"
    )


def run(folder: Path, tag: str) -> Path:
    """One stepped run of ``STEPS`` steps: this process is the master (it imports neither
    version), a v2 producer and a v1 consumer recording the producer's object; the
    consumer's recording."""
    port, session = free_port(), session_name("evostep")
    recording = folder / f"adapted_{tag}.mcap"
    produced = f"      - {{name: c1, class: evo_v2_impls.Counting, bus: {session}.b}}\n"
    own = f"      - {{name: mine, class: evo_v1_impls.Counting, bus: {session}.own}}\n"
    records = (
        "  - name: recorder\n    recordings:\n"
        f"      - {{name: r, file: {recording},"
        f" selections: ['SELECT pct.Counter FROM {session}.b']}}\n"
    )
    consumer = kernel(session, port, "cons", "evo_v1", own).replace("build:", records + "build:")
    others = [
        Process(
            folder / "v2",
            f"producer_{tag}",
            kernel(session, port, "prod", "evo_v2", produced),
            until=None,
        ),
        Process(folder / "v1", f"consumer_{tag}", consumer, until=None),
    ]  # both stepped by the master here, until stopped
    config = (
        clock(session, "a", True)
        + f"load:\n  - name: transport\n    rendezvous: tcp/127.0.0.1:{port}\n"
    )
    master = Kernel(load_config_text(config))
    outputs: list[str] = []
    try:
        assert master.start()
        deadline = time.monotonic() + 20
        while len(master.master_clocks()) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)  # discovery over the network: no step to wait on yet
        assert len(master.master_clocks()) == 3, "the master never found the other clocks"
        time.sleep(0.5)  # their components enter their loops just after they publish clocks
        master.wait_ready()
        stepper = master.stepper()
        for _ in range(STEPS):
            stepper.step()
    finally:
        master.shutdown()
        outputs = [other.stop() for other in others]
    for output in outputs:
        assert "Traceback" not in output, output
    assert "its objects are adapted" in outputs[1], outputs[1]
    return recording


def test_stepped_runs_with_an_adapted_class_record_identically_in_the_local_version(
    trees: Path,
) -> None:
    one, two = run(trees, "one"), run(trees, "two")
    compare = subprocess.run(
        [sys.executable, "-m", "sengen", "record", "compare", str(one), str(two)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert compare.returncode == 0, compare.stdout + compare.stderr
    _, records = read_recording(one)
    mine = [r for r in records if r["object"] == "c1"]
    kinds = [r["kind"] for r in mine]
    assert kinds[0] == "add" and "set" in kinds and "event" in kinds, kinds
    # Version 1's members only: 'label' at its zero value, no 'extra'; the producer's first
    # enumerator is "run" (by name); events with version 1's one argument.
    added = mine[0]["state"]
    assert set(added) == {"count", "mode", "label"} and added["label"] == "", added
    assert added["mode"] == "run"
    sets = [r for r in mine if r["kind"] == "set"]
    # The producer's count at 50 Hz from 1, as an i32, every commit in its step.
    assert len(sets) > 10 and all(r["values"] == {"count": r["t"] // 20_000_000 + 1} for r in sets)
    events = [r["args"] for r in mine if r["kind"] == "event"]
    assert all(set(e) == {"count"} and isinstance(e["count"], int) for e in events), events
