"""``sengen launch``: the processes of a launch file started, their output prefixed, stopped in
reverse order when a required one ends (whose status the launch takes) or on a signal, restarted
with back-off; and a bad launch file refused before anything starts.

The two-process cases run the ``examples/producer_consumer`` system over the transport on a free
loopback port and a session of the test's own (as ``tests/test_example_remote.py`` does); the
others use tiny configurations that load no transport.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import sengen
from sengen.cli.launch_file import LaunchFileError, load_launch
from sengen.cli.main import main
from sengen.runtime.kernel.config import load_config

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "producer_consumer"
TIMEOUT_S = 60.0
READY = re.compile(r"^sengen launch: all processes ready in (?P<seconds>[\d.]+) s$", re.M)


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("launch_pc")
    for name in ("producer.yaml", "consumer.yaml", "launch.yaml", "pc_impl.py"):
        shutil.copy(EXAMPLE / name, folder / name)
    result = sengen.generate([EXAMPLE / "stl"], output=folder / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    return folder


def _env(tag: str) -> dict[str, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {**os.environ, "SENGEN_PORT": str(port), "SENGEN_SESSION": f"la{os.getpid()}_{tag}"}


def _launch(file: str) -> list[str]:
    return [sys.executable, "-m", "sengen", "launch", file]


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def test_two_processes_prefixed_and_stopped_when_the_required_one_ends(example: Path) -> None:
    _write(
        example,
        "until.yaml",
        """\
        processes:
          - name: producer
            config: producer.yaml
            args: [--until, 3s]
            required: true
          - name: consumer
            config: consumer.yaml
        """,
    )
    ran = subprocess.run(
        _launch("until.yaml"),
        cwd=example,
        env=_env("until"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    lines = ran.stdout.splitlines()
    # Every line of the processes carries its name, padded to the longest (both are 8 long).
    assert lines and all(line.startswith(("producer | ", "consumer | ")) for line in lines), lines
    for name in ("producer", "consumer"):
        assert f"{name} | INFO sengen.kernel: started 3 component(s) in 1 group(s)" in lines
    # They talked to each other: the consumer discovered the producer's counters.
    assert any(re.match(r"consumer \| INFO .*discovered counter fast on ", line) for line in lines)
    # The producer's --until ended it: the consumer was then stopped, orderly (its summary).
    events = ran.stderr.splitlines()
    assert "sengen launch: producer exited with status 0" in events, ran.stderr
    stop = events.index("sengen launch: producer is required: stopping the launch")
    assert events[stop + 1 :] == ["sengen launch: stopping consumer"], ran.stderr
    assert any("watcher watcher summary: 2 counter(s) discovered" in line for line in lines)
    ready = READY.search(ran.stderr)
    assert ready is not None, ran.stderr
    print(f"launch: both processes ready in {ready['seconds']} s")


def test_the_examples_launch_file_stops_in_reverse_order_on_sigint(example: Path) -> None:
    launcher = subprocess.Popen(
        _launch("launch.yaml"),
        cwd=example,
        env=_env("sigint"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert launcher.stderr is not None
        seen: list[str] = []
        deadline = time.monotonic() + TIMEOUT_S
        # Bounded by the launcher: within its readyTimeout it reports all ready, or it exits
        # (which ends the stream).
        for line in launcher.stderr:
            seen.append(line.rstrip("\n"))
            if READY.match(seen[-1]) or time.monotonic() > deadline:
                break
        assert READY.match(seen[-1]), seen
        launcher.send_signal(signal.SIGINT)
        out, err = launcher.communicate(timeout=TIMEOUT_S)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate(timeout=10)
    assert launcher.returncode == 130, err
    events = [*seen, *err.splitlines()]
    stopping = [line for line in events if line.startswith("sengen launch: stopping ")]
    assert stopping == ["sengen launch: stopping consumer", "sengen launch: stopping producer"]
    # Both stopped in order: their kernels' last lines are there, no process was killed.
    assert "killed" not in err
    assert "consumer | INFO sengen.component.consumer: watcher watcher summary:" in out
    assert "producer | INFO sengen.component.counters: counter fast summary:" in out
    _assert_gone(events)


def _assert_gone(events: list[str]) -> None:
    """Every process the launcher started was reaped by it: no pid of theirs is left."""
    pids = [int(p) for p in re.findall(r" started \(pid (\d+)\)", "\n".join(events))]
    assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    _write(tmp_path, "a.yaml", "kernel: {appName: a, logConfig: {level: info}}\n")
    _write(tmp_path, "quiet.yaml", "kernel: {logConfig: {level: warn}}\n")
    return tmp_path


def test_a_required_process_gives_the_launch_its_exit_status(tiny: Path) -> None:
    _write(
        tiny,
        "launch.yaml",
        """\
        processes:
          - name: server
            config: quiet.yaml
          - name: broken
            config: a.yaml
            requires: [server]
            args: [--until, forever]
            required: true
        """,
    )
    ran = subprocess.run(
        _launch("launch.yaml"),
        cwd=tiny,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    # `sengen run --until forever` is a usage error (2): the launch ends with it.
    assert ran.returncode == 2, ran.stderr
    assert "broken | sengen: error: --until: " in ran.stdout
    events = ran.stderr.splitlines()
    # The server's log level hides the kernel's INFO lines; it is found ready all the same.
    assert any(line.startswith("sengen launch: server ready (") for line in events), events
    assert events[-3:] == [
        "sengen launch: broken exited with status 2",
        "sengen launch: broken is required: stopping the launch",
        "sengen launch: stopping server",
    ]
    _assert_gone(events)


def test_respawn_backs_off_up_to_its_limit(tiny: Path) -> None:
    _write(
        tiny,
        "launch.yaml",
        """\
        processes:
          - name: flaky
            config: a.yaml
            args: [--until, 50ms]
            respawn: {delay: 100ms, maxDelay: 150ms, limit: 2}
        """,
    )
    ran = subprocess.run(
        _launch("launch.yaml"),
        cwd=tiny,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    events = [line for line in ran.stderr.splitlines() if "restart" in line]
    assert events == [
        "sengen launch: flaky restarts in 0.1 s (1 of 2)",
        "sengen launch: flaky restarts in 0.15 s (2 of 2)",
        "sengen launch: flaky: no more restarts (limit 2)",
    ]
    assert ran.stdout.count("flaky | INFO sengen.kernel: started") == 3


def test_stepped_processes_get_one_master_clock(tiny: Path) -> None:
    _write(
        tiny,
        "launch.yaml",
        """\
        stepped: true
        clockBus: sim.clocks
        processes:
          - name: physics
            config: a.yaml
          - name: instruments
            config: a.yaml
        """,
    )
    plan = load_launch(tiny / "launch.yaml")
    # The master starts after the other stepped process is up.
    assert [(p.name, p.master, p.requires) for p in plan.processes] == [
        ("physics", False, ()),
        ("instruments", True, ("physics",)),
    ]
    from sengen.cli.launch import Launcher

    launcher = Launcher(plan, tiny)
    for process in plan.processes:
        env: dict[str, str] = {}
        config = load_config(launcher._stepped_config(process, env))
        kernel = config.kernel
        assert (kernel.run_mode, kernel.clock_bus, kernel.clock_name) == (
            "virtualTime",
            "sim.clocks",
            process.name,
        )
        assert kernel.clock_master is process.master
        assert kernel.app_name == "a"  # the rest is the process's own configuration
        assert env["PYTHONPATH"].split(os.pathsep)[0] == str(tiny)


STEPPED = Path(__file__).resolve().parent.parent / "examples" / "stepped"
PHYSICS = """\
kernel: {appName: physics, logConfig: {level: info}}
load:
  - {name: transport, rendezvous: "tcp/127.0.0.1:@env(SENGEN_PORT, 7447)"}
build:
  - name: physics
    freqHz: 100
    imports: [gen.bouncing, bouncing_impl]
    objects:
      - {name: ball, class: bouncing.FallingBall, bus: "@env(SENGEN_SESSION).lab",
         gravity: 9.81, restitution: 0.8, height: 1.0}
"""
INSTRUMENTS = """\
kernel: {appName: instruments, logConfig: {level: info}}
load:
  - {name: transport, rendezvous: "tcp/127.0.0.1:@env(SENGEN_PORT, 7447)"}
build:
  - name: instruments
    freqHz: 10
    imports: [gen.bouncing, bouncing_impl]
    objects:
      - {name: altimeter, class: bouncing.SamplingAltimeter, bus: "@env(SENGEN_SESSION).lab",
         ballBus: "@env(SENGEN_SESSION).lab"}
"""


def test_stepped_processes_run_as_the_one_process_run(tmp_path: Path) -> None:
    """Two real-time configurations put under one master clock by the launch file alone: the
    run logs what the one-process run of docs/guide/clock.md logs, every time."""
    shutil.copy(STEPPED / "bouncing_impl.py", tmp_path)
    result = sengen.generate([STEPPED / "stl"], output=tmp_path / "gen")
    assert result.ok, [d.format() for d in result.diagnostics]
    _write(tmp_path, "physics.yaml", PHYSICS)
    _write(tmp_path, "instruments.yaml", INSTRUMENTS)
    env = _env("stepped")
    _write(
        tmp_path,
        "launch.yaml",
        f"""\
        stepped: true
        clockBus: {env["SENGEN_SESSION"]}.clocks
        until: 1s
        processes:
          - name: physics
            config: physics.yaml
          - name: instruments
            config: instruments.yaml
        """,
    )
    ran = subprocess.run(
        _launch("launch.yaml"),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    lines = ran.stdout.splitlines()
    assert (
        "instruments | INFO sengen.component.instruments: ball bounced at 0.450 s at 4.415 m/s,"
        " after a highest sample of 0.9559 m"
    ) in lines
    assert "instruments | INFO sengen.component.instruments: altimeter: 9 sample(s)" in lines
    assert (
        "physics     | INFO sengen.component.physics: ball: 100 cycle(s) up to 0.990 s,"
        " height 0.4503 m, 1 bounce(s)"
    ) in lines
    assert not any("joined at t=" in line for line in lines), ran.stdout  # none came late
    assert ran.stderr.splitlines()[-2:] == [
        "sengen launch: instruments is required: stopping the launch",
        "sengen launch: stopping physics",
    ]


BAD = {
    "missing configuration": (
        """\
        processes:
          - {name: a, config: a.yaml}
          - {name: b, config: nowhere.yaml}
        """,
        ["launch.yaml: processes[1].config: configuration file 'nowhere.yaml' not found"],
    ),
    "duplicate name": (
        """\
        processes:
          - {name: a, config: a.yaml}
          - {name: a, config: a.yaml}
        """,
        ["launch.yaml: processes[1].name: duplicate process name 'a' (first at processes[0])"],
    ),
    "requires cycle": (
        """\
        processes:
          - {name: a, config: a.yaml, requires: [c]}
          - {name: b, config: a.yaml, requires: [a]}
          - {name: c, config: a.yaml, requires: [b]}
        """,
        ["launch.yaml: processes[0].requires: cycle in requires: a -> c -> b -> a"],
    ),
    "unknown key": (
        """\
        processes:
          - {name: a, config: a.yaml, respwan: true}
        """,
        ["launch.yaml: processes[0].respwan: unknown key 'respwan' (did you mean 'respawn'?)"],
    ),
    "unknown nested key": (
        """\
        processes:
          - {name: a, config: a.yaml, respawn: {delay: 1s, limt: 3}}
        """,
        ["launch.yaml: processes[0].respawn.limt: unknown key 'limt' (did you mean 'limit'?)"],
    ),
    "unknown process required": (
        """\
        processes:
          - {name: a, config: a.yaml, requires: [z]}
        """,
        ["launch.yaml: processes[0].requires[0]: unknown process 'z'"],
    ),
    "bad values": (
        """\
        stopTimeout: soon
        processes:
          - {name: 1a, config: a.yaml, required: maybe}
        """,
        [
            "launch.yaml: processes[0].name: invalid process name '1a' (letters, digits and '_')",
            "launch.yaml: processes[0].required: expected true or false, got 'maybe'",
            "launch.yaml: stopTimeout: invalid Duration 'soon'"
            " (expected a number followed by ns, us, ms, s, min or h)",
        ],
    ),
    "no processes": ("env: {}\n", ["launch.yaml: (top level): missing key 'processes'"]),
    "until without stepping": (
        """\
        until: 1s
        processes:
          - {name: a, config: a.yaml}
        """,
        ["launch.yaml: until: 1 s needs stepped processes"],
    ),
    "master not stepped": (
        """\
        master: a
        processes:
          - {name: a, config: a.yaml}
        """,
        ["launch.yaml: master: 'a' is not a stepped process"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_launch_file_is_refused_before_anything_starts(
    case: str, tiny: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = BAD[case]
    _write(tiny, "launch.yaml", text)
    monkeypatch.chdir(tiny)
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    assert main(["launch", "launch.yaml"]) == 1
    out, err = capsys.readouterr()
    assert (out, err.splitlines(), started) == ("", expected, [])
    with pytest.raises(LaunchFileError):
        load_launch(tiny / "launch.yaml")
