"""Determinism under virtual time (runtime.md §6.9; acceptance VT8 of §11).

Eight components at 100, 100, 30, 30, 10, 10, 7 and 7 Hz, each owning one ``det.Node`` on
``local.nodes``, find each other by subscription and, every cycle, call a method on one peer
through its proxy (the result goes into a property), read two peers' properties into their own,
write a writable property of a peer (the two components of a rate write the same one, so two
setter calls reach one object in the same step), and emit a confirmed event that another peer
hears by writing properties. Every few cycles each creates a ``det.Spawn`` on ``local.spawns``
and removes its oldest one; what every node sees of the spawns goes into a property too. One
recorder records both buses.

The system runs twice for 1,000 master steps: once quietly and once perturbed, with random short
sleeps in every update, event callback and method implementation and a CPU burner thread that
yields every millisecond. Neither the sleeps nor their random source feed the model, so the two
recordings must be byte-identical. A third run with one configured parameter changed must
differ: the comparison can fail.
"""

from __future__ import annotations

import contextlib
import io
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from kernel_support import make_package
from recording_support import read_recording

from sengen.cli.main import main
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component
from sengen.runtime.kernel.config import load_config_text
from sengen.testing import TestKernel

ROOT = "det_determinism"
STEPS = 1000
RATES_HZ = (100, 100, 30, 30, 10, 10, 7, 7)
NODES = "local.nodes"
SPAWNS = "local.spawns"

STL = """\
package det;

class Node
{
  var index  : u32 [static];
  var count  : u32;
  var mixed  : i64;
  var seen   : f64;
  var heard  : u32;
  var spawns : u32;
  var gain   : i32 [writable];
  var label  : string [confirmed];

  event pulsed(count: u32, origin: string) [confirmed];

  fn mix(x: i32, y: i32) -> i64;
}

class Spawn
{
  var serial : u32 [static];
  var age    : u32;
}
"""

IMPLEMENTATIONS = """\
from collections.abc import Callable
from typing import Any

from {root}.det import NodeBase, SpawnBase

#: Set by the test: called in every update and method implementation (perturbation only).
JITTER: Callable[[], None] | None = None


def _jitter() -> None:
    if JITTER is not None:
        JITTER()


class NodeImpl(NodeBase):
    '''Its method mixes the arguments with its committed gain and count.'''

    def update(self, api: Any) -> None:
        _jitter()

    def mix_impl(self, x: int, y: int) -> int:
        _jitter()
        return x * (self.gain + 1) + y - self.count


class SpawnImpl(SpawnBase):
    '''Ages by one every cycle of its owner.'''

    def update(self, api: Any) -> None:
        _jitter()
        self.set_next_age(self.get_next_age() + 1)
"""


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("det"), ROOT, "det", STL, IMPLEMENTATIONS)


# -- perturbation: never feeds the model ------------------------------------------------------


class Jitter:
    """Random short sleeps from a random source of its own (seeded, but drawn by racing
    threads, so which thread sleeps how long differs from run to run)."""

    def __init__(self, seed: int, most_s: float = 0.0005) -> None:
        self.random = random.Random(seed)
        self.most_s = most_s
        self.sleeps = 0
        self.lock = threading.Lock()

    def __call__(self) -> None:
        with self.lock:
            pause = self.random.uniform(0.0, self.most_s)
            self.sleeps += 1
        time.sleep(pause)


class Burner:
    """A thread that burns CPU and yields every millisecond."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.bursts = 0
        self.thread = threading.Thread(target=self._burn, name="burner", daemon=True)

    def _burn(self) -> None:
        while not self.stop.is_set():
            end = time.perf_counter_ns() + 1_000_000
            while time.perf_counter_ns() < end:
                pass
            self.bursts += 1
            time.sleep(0.0002)

    def __enter__(self) -> Burner:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


# -- the model ----------------------------------------------------------------------------------


def node_name(index: int) -> str:
    return f"n{index}"


@dataclass(frozen=True)
class Plan:
    """Whom a member calls, reads, hears and writes to (by index), and how often it spawns."""

    index: int
    period_ns: int
    spawn_every: int
    calls: int
    reads: tuple[int, int]
    hears: int
    writes: int


def plans(spawn_every: tuple[int, ...]) -> list[Plan]:
    n = len(RATES_HZ)
    return [
        Plan(
            index=i,
            period_ns=round(1e9 / hz),
            spawn_every=spawn_every[i],
            calls=(i + 1) % n,
            reads=((i + 2) % n, (i + 5) % n),
            hears=(i + 3) % n,
            writes=(i // 2 * 2 + 4) % n,  # both members of a rate write the same peer's gain
        )
        for i, hz in enumerate(RATES_HZ)
    ]


class Member(Component):
    """Owns one node and its spawns; everything it does depends on get_time() and inputs."""

    def __init__(self, impls: ModuleType, plan: Plan, jitter: Jitter | None) -> None:
        self.impls = impls
        self.plan = plan
        self.jitter = jitter
        self.name = node_name(plan.index)
        self.peers: dict[str, Any] = {}
        self.cycles = 0
        self.heard = 0
        self.calls_made = 0
        self.results = 0
        self.spawned: list[Any] = []
        self.pending: Any = None
        self.node: Any = None
        self.spawns: Any = None
        self.api: RunApi | None = None

    def _jitter(self) -> None:
        if self.jitter is not None:
            self.jitter()

    def run(self, api: RunApi) -> None:
        self.api = api
        self.node = self.impls.NodeImpl(self.name, index=self.plan.index)
        api.get_source(NODES).add(self.node)
        api.select(f"SELECT det.Node FROM {NODES}", self._nodes_added, self._nodes_removed)
        self.spawns = api.select(f"SELECT det.Spawn FROM {SPAWNS}")
        api.exec_loop(self.plan.period_ns, self._work)

    def _nodes_added(self, views: list[Any]) -> None:
        for view in views:
            self.peers[view.name] = view
            if view.name == node_name(self.plan.hears):
                view.events.pulsed.connect(self._heard)

    def _nodes_removed(self, views: list[Any]) -> None:
        for view in views:
            self.peers.pop(view.name, None)

    def _heard(self, count: int, origin: str) -> None:
        """An event handler that writes properties (runs in drain)."""
        self._jitter()
        self.heard += 1
        self.node.set_next_heard(self.heard)
        self.node.set_next_label(f"{origin}:{count}@{self.cycles}")

    def _peer(self, index: int) -> Any:
        return self.peers.get(node_name(index))

    def _work(self) -> None:
        self._jitter()
        api = self.api
        assert api is not None
        plan, node = self.plan, self.node
        self.cycles += 1
        now = api.get_time().ns
        node.set_next_count(self.cycles)
        # A method on another component's object, through its proxy; the result in a property.
        if self.pending is not None and self.pending.done():
            node.set_next_mixed(self.pending.result())
            self.pending = None
            self.results += 1
        callee = self._peer(plan.calls)
        if self.pending is None and callee is not None:
            self.pending = callee.mix(self.cycles, (now // 1_000_000) % 1000)
            self.calls_made += 1
        # Other objects' committed properties into its own.
        seen = 0.0
        for index in plan.reads:
            peer = self._peer(index)
            if peer is not None:
                seen += peer.count * 1000 + peer.mixed % 997 + peer.heard + peer.gain / 8
        node.set_next_seen(seen)
        # A writable property of a peer, through its proxy (a setter call).
        target = self._peer(plan.writes)
        if target is not None:
            target.set_next_gain(plan.index * 100 + self.cycles % 50)
        # A confirmed event, heard by another component.
        node.events.pulsed.emit(self.cycles, self.name)
        # Objects come and go; what is visible of them feeds the model.
        node.set_next_spawns(sum(s.age * (s.serial % 7 + 1) for s in self.spawns.objects))
        if self.cycles % plan.spawn_every == 0:
            spawn = self.impls.SpawnImpl(f"{self.name}_s{self.cycles}", serial=self.cycles)
            api.get_source(SPAWNS).add(spawn)
            self.spawned.append(spawn)
            if len(self.spawned) > 3:
                api.get_source(SPAWNS).remove(self.spawned.pop(0))


@dataclass
class Run:
    path: Path
    seconds: float
    members: list[Member]
    sleeps: int = 0
    bursts: int = 0


DEFAULT_SPAWN_EVERY = (13, 17, 5, 6, 3, 4, 2, 3)


def run_system(
    impls: ModuleType,
    path: Path,
    perturb: bool,
    spawn_every: tuple[int, ...] = DEFAULT_SPAWN_EVERY,
) -> Run:
    jitter = Jitter(seed=1234) if perturb else None
    members = [Member(impls, plan, jitter) for plan in plans(spawn_every)]
    selections = f"['SELECT * FROM {NODES}', 'SELECT * FROM {SPAWNS}']"
    config = load_config_text(
        "kernel: {runMode: virtualTime}\n"
        "load:\n"
        "  - name: recorder\n"
        "    group: 1\n"
        "    freqHz: 30\n"
        f"    recordings: [{{name: r, file: '{path}', selections: {selections}}}]\n"
    )
    components = [(m.name, m, 2) for m in members]
    impls.__dict__["JITTER"] = jitter  # the implementations' hook
    begin = time.monotonic()
    try:
        if perturb:
            with Burner() as burner, TestKernel(components, config) as tk:
                tk.step(STEPS)
            bursts = burner.bursts
        else:
            with TestKernel(components, config) as tk:
                tk.step(STEPS)
            bursts = 0
    finally:
        impls.__dict__["JITTER"] = None
    seconds = time.monotonic() - begin
    return Run(path, seconds, members, jitter.sleeps if jitter is not None else 0, bursts)


def kinds_of(records: list[dict[str, Any]]) -> dict[str, int]:
    counts = {"add": 0, "set": 0, "event": 0, "remove": 0}
    for record in records:
        counts[record["kind"]] += 1
    return counts


def compared(a: Path, b: Path) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["record", "compare", str(a), str(b)])
    return code, out.getvalue()


def test_vt8_a_perturbed_run_records_the_same_as_a_quiet_one(
    impls: ModuleType, tmp_path: Path
) -> None:
    quiet = run_system(impls, tmp_path / "quiet.mcap", perturb=False)
    shaken = run_system(impls, tmp_path / "shaken.mcap", perturb=True)
    # The perturbation really happened, on every component thread.
    assert shaken.sleeps > 2 * sum(m.cycles for m in shaken.members)
    assert shaken.bursts > 10

    code, text = compared(quiet.path, shaken.path)
    assert code == 0, text
    assert quiet.path.read_bytes() == shaken.path.read_bytes()

    # Non-trivial: every kind, many of each, from every component.
    _, records = read_recording(quiet.path)
    kinds = kinds_of(records)
    assert kinds["set"] > 5000 and kinds["event"] > 2000
    assert kinds["add"] > 100 and kinds["remove"] > 100
    names = [node_name(i) for i in range(len(RATES_HZ))]
    nodes = {r["object"] for r in records if r["bus"] == NODES}
    assert nodes == set(names)
    spawners = {r["object"].split("_")[0] for r in records if r["bus"] == SPAWNS}
    assert spawners == set(names)
    for name in names:
        mine = [r for r in records if r["bus"] == NODES and r["object"] == name]
        changed = {key for r in mine if r["kind"] == "set" for key in r["values"]}
        assert {"count", "mixed", "seen", "heard", "spawns", "label"} <= changed, name
        assert any(r["kind"] == "event" for r in mine), name
    written = {node_name(p.writes) for p in plans(DEFAULT_SPAWN_EVERY)}
    for name in written:
        gains = [
            r["values"]["gain"]
            for r in records
            if r["object"] == name and "gain" in r.get("values", {})
        ]
        assert len(gains) > 20, name
    # The cross-component traffic really flowed in both runs.
    for run in (quiet, shaken):
        for member in run.members:
            assert member.results > member.cycles // 4, member.name
            assert member.heard > 0 and len(member.peers) == len(RATES_HZ), member.name
    assert [m.cycles for m in quiet.members] == [m.cycles for m in shaken.members]
    # The component rates are what they say: 1,000 steps of the 100 Hz clock and the others.
    assert quiet.members[0].cycles > 600 and quiet.members[-1].cycles > 40


def test_a_changed_parameter_changes_the_recording(impls: ModuleType, tmp_path: Path) -> None:
    base = run_system(impls, tmp_path / "base.mcap", perturb=False)
    changed_every = (*DEFAULT_SPAWN_EVERY[:-1], DEFAULT_SPAWN_EVERY[-1] + 1)
    other = run_system(impls, tmp_path / "other.mcap", perturb=False, spawn_every=changed_every)
    code, text = compared(base.path, other.path)
    assert code == 1
    assert text.startswith("first difference at record ")
    assert base.path.read_bytes() != other.path.read_bytes()
