"""The ``examples/producer_consumer`` system end to end: two ``sengen run`` processes over the
transport (runtime.md §8), each on a free loopback port and a session of the test's own.

The example's configurations and implementation module are copied into a temporary folder with
the STL generated beside them (``gen.pc``), as ``tests/test_example_plant.py`` does. The producer
starts first; once its kernel is up the consumer starts, with a longer ``--until``, so that it
outlives the producer and sees its objects go. Everything is asserted from the log lines both
processes write: the objects, property values, events and call results the consumer received,
and the setter it sent, as the producer saw it. Relations only, never exact timings.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import sengen

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "producer_consumer"
PRODUCER_UNTIL = "5s"
CONSUMER_UNTIL = "7s"  # started after the producer is up: it always outlives the producer
START_TIMEOUT_S = 30.0
RUN_TIMEOUT_S = 60.0

C = r"INFO sengen\.component\.consumer: "
P = r"INFO sengen\.component\.counters: "
DISCOVERED = re.compile(
    C + r"discovered counter (?P<name>\w+) on (?P<bus>[\w.-]+): label '(?P<label>[^']*)',"
    r" every (?P<every>\d+), step (?P<step>\d+), count (?P<count>\d+)$"
)
ASKING = re.compile(C + r"asking counter (?P<name>\w+) to step by (?P<step>\d+)$")
STEPS = re.compile(C + r"counter (?P<name>\w+) now steps by (?P<step>\d+)$")
REACHED = re.compile(C + r"counter (?P<name>\w+) reached (?P<count>\d+)$")
RESULT = re.compile(
    C + r"counter (?P<name>\w+): scaled\((?P<factor>\d+)\) = (?P<value>-?\d+)"
    r" \(count (?P<seen>\d+) when called\)$"
)
REMOVED = re.compile(C + r"counter (?P<name>\w+) removed \(last count (?P<count>\d+)\)$")
WATCHER = re.compile(
    C + r"watcher watcher summary: (?P<counters>\d+) counter\(s\) discovered,"
    r" (?P<heard>\d+) event\(s\) heard, (?P<results>\d+) result\(s\), last counts (?P<last>.*)$"
)
COUNTER = re.compile(
    P + r"counter (?P<name>\w+) summary: count (?P<count>\d+), step (?P<step>\d+),"
    r" (?P<events>\d+) event\(s\), (?P<served>\d+) call\(s\) served,"
    r" (?P<watchers>\d+) watcher\(s\) seen$"
)
JOINED = re.compile(P + r"counter (?P<name>\w+): watcher watcher joined$")
CHANGED = re.compile(P + r"counter (?P<name>\w+): step changed from 1 to (?P<step>\d+)$")
LOST = re.compile(
    r"^WARNING sengen\.transport: process producer/\d+ lost: \d+ object\(s\) removed$"
)
# The real-time loop's overrun lines (runtime.md §5.5): timing, not behaviour, on a busy machine.
LATE = re.compile(r"^WARNING sengen\.kernel: (counters|consumer|kernel|transport) ")
EVERY = {"fast": 10, "slow": 25}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("producer_consumer")
    for name in ("producer.yaml", "consumer.yaml", "pc_impl.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _env(request: pytest.FixtureRequest, port: int) -> dict[str, str]:
    """The example's two variables: this test's own port and session."""
    test = "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[-30:]
    return {**os.environ, "SENGEN_PORT": str(port), "SENGEN_SESSION": f"pc{os.getpid()}_{test}"}


def _command(config: str, until: str) -> list[str]:
    return [sys.executable, "-m", "sengen", "run", config, "--until", until]


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    """Every process a test starts: killed at the end if it is still running."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def _wait_for(path: Path, text: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        if text in path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not in the log within {START_TIMEOUT_S} s:\n{path.read_text()}")


def _quiet(line: str) -> bool:
    return line.startswith("INFO ") or LATE.match(line) is not None


def _lines(pattern: re.Pattern[str], lines: list[str]) -> list[re.Match[str]]:
    return [m for m in map(pattern.match, lines) if m is not None]


def _one(pattern: re.Pattern[str], lines: list[str]) -> re.Match[str]:
    found = _lines(pattern, lines)
    assert len(found) == 1, (pattern.pattern, lines)
    return found[0]


def _by_name(matches: list[re.Match[str]]) -> dict[str, list[re.Match[str]]]:
    grouped: dict[str, list[re.Match[str]]] = {name: [] for name in EVERY}
    for match in matches:
        grouped[match["name"]].append(match)
    return grouped


def test_the_consumer_sees_the_producers_objects_values_events_and_results(
    example: Path, request: pytest.FixtureRequest, processes: list[subprocess.Popen[str]]
) -> None:
    env = _env(request, _free_port())
    session = env["SENGEN_SESSION"]
    producer_log, consumer_log = example / "producer.log", example / "consumer.log"
    with producer_log.open("w") as out:
        producer = subprocess.Popen(
            _command("producer.yaml", PRODUCER_UNTIL),
            cwd=example,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            text=True,
        )
    processes.append(producer)
    _wait_for(producer_log, "INFO sengen.kernel: started", producer)
    with consumer_log.open("w") as out:
        consumer = subprocess.Popen(
            _command("consumer.yaml", CONSUMER_UNTIL),
            cwd=example,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
            text=True,
        )
    processes.append(consumer)
    assert producer.wait(RUN_TIMEOUT_S) == 0, producer_log.read_text()
    assert consumer.wait(RUN_TIMEOUT_S) == 0, consumer_log.read_text()
    theirs, ours = producer_log.read_text(), consumer_log.read_text()
    for text in (theirs, ours):
        assert "Traceback" not in text and "ERROR" not in text, text
    produced, consumed = theirs.splitlines(), ours.splitlines()
    # Nothing above INFO but the producer's departure (an orderly leave is a loss, §8.2).
    assert all(_quiet(line) or LOST.match(line) for line in consumed), ours
    assert all(_quiet(line) for line in produced), theirs

    # Objects: both counters, with their static properties and a first state.
    discovered = {m["name"]: m for m in _lines(DISCOVERED, consumed)}
    assert sorted(discovered) == ["fast", "slow"], ours
    for name, found in discovered.items():
        assert found["bus"] == f"{session}.line"
        assert found["label"] == f"{name} counter"
        assert int(found["every"]) == EVERY[name]
        assert int(found["step"]) == 1
    assert int(discovered["fast"]["count"]) >= 1
    assert int(discovered["slow"]["count"]) >= 1001  # its configured initial value was 1000

    # A writable property set from the consumer: the producer applied it, the consumer saw it.
    counters = {m["name"]: m for m in _lines(COUNTER, produced)}
    assert sorted(counters) == ["fast", "slow"], theirs
    for name in EVERY:
        assert [m["step"] for m in _lines(ASKING, consumed) if m["name"] == name] == ["2"]
        assert [m["step"] for m in _lines(STEPS, consumed) if m["name"] == name] == ["2"]
        assert [m["step"] for m in _lines(CHANGED, produced) if m["name"] == name] == ["2"]
        assert counters[name]["step"] == "2"
        # The producer discovered the consumer's watcher: discovery works both ways.
        assert len([m for m in _lines(JOINED, produced) if m["name"] == name]) == 1
        assert counters[name]["watchers"] == "1"

    # Events: at every multiple of `every`, none missing between the first and the last heard.
    reached = _by_name(_lines(REACHED, consumed))
    for name, every in EVERY.items():
        counts = [int(m["count"]) for m in reached[name]]
        assert len(counts) >= 2, (name, ours)
        assert counts == sorted(set(counts))
        assert all(count % every in (0, 1) for count in counts), counts
        multiples = [count // every for count in counts]
        assert multiples == list(range(multiples[0], multiples[0] + len(multiples))), counts
        assert counts[0] > int(discovered[name]["count"]) - 2
        assert len(counts) <= int(counters[name]["events"])

    # Call results: count * factor, computed after the consumer read the count it called with.
    results = _by_name(_lines(RESULT, consumed))
    for name in EVERY:
        assert len(results[name]) >= 2, (name, ours)
        final = int(counters[name]["count"])
        values = []
        for result in results[name]:
            factor, value, seen = int(result["factor"]), int(result["value"]), int(result["seen"])
            assert factor == 3
            assert value % factor == 0
            assert seen <= value // factor <= final
            values.append(value)
        assert values == sorted(values)
        assert len(values) <= int(counters[name]["served"])

    # The producer stopped first: its objects were removed at the consumer, which went on.
    removed = {m["name"]: int(m["count"]) for m in _lines(REMOVED, consumed)}
    assert sorted(removed) == ["fast", "slow"], ours
    for name in EVERY:
        assert int(discovered[name]["count"]) < removed[name] <= int(counters[name]["count"])
    summary = _one(WATCHER, consumed)
    assert int(summary["counters"]) == 2
    assert int(summary["heard"]) == sum(len(r) for r in reached.values())
    assert int(summary["results"]) == sum(len(r) for r in results.values())
    assert summary["last"] == f"fast={removed['fast']}, slow={removed['slow']}"
    removal = next(i for i, line in enumerate(consumed) if REMOVED.match(line))
    assert consumed.index(summary.group(0)) > removal


@pytest.mark.parametrize("config", ["producer.yaml", "consumer.yaml"])
def test_each_process_runs_alone(
    example: Path, config: str, request: pytest.FixtureRequest
) -> None:
    ran = subprocess.run(
        _command(config, "1s"),
        cwd=example,
        env=_env(request, _free_port()),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stderr.splitlines()
    assert all(_quiet(line) for line in lines), ran.stderr
    if config == "producer.yaml":
        for name in EVERY:
            summary = next(m for m in _lines(COUNTER, lines) if m["name"] == name)
            assert (summary["step"], summary["served"], summary["watchers"]) == ("1", "0", "0")
            assert int(summary["count"]) > 0
    else:
        summary = _one(WATCHER, lines)
        assert (summary["counters"], summary["heard"], summary["results"]) == ("0", "0", "0")
