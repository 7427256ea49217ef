"""``echo``, ``hz`` and ``bw`` in the shell: every committed change, and its rates, through the
change logs the recorder uses; ``watch`` samples and ``step n`` shows each step's values.

The shell runs as ``sengen shell -c`` runs it, in a kernel in this process, at 10 Hz: slower
than the 50 Hz producer, so sampling would lose values where the change logs do not. A watchdog
bounds every run.
"""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from kernel_support import make_package, producer
from test_shell import run_shell as shell_run
from transport_support import (
    Process,
    free_port,
    make_project,
    producer_config,
    session_name,
    transport_entry,
)

from sengen.runtime.kernel.extension import class_codec

CHANGE = re.compile(r"\[([\d:.]+)\] local\.b\.s1\.a = (\d+)")


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_echo")


def system(impls: ModuleType, kernel: str = "", shell_hz: float = 10, freq_hz: float = 50) -> str:
    """s1 counting at ``freq_hz`` on local.b, s2 still; a shell at ``shell_hz`` opening it."""
    return (
        kernel
        + f"load:\n  - name: shell\n    freqHz: {shell_hz}\n    open: [local.b]\n"
        + "build:\n"
        + producer(
            impls,
            "{name: s1, class: kbus.Counting, bus: local.b, serial: 15}\n"
            "{name: s2, class: kbus.Still, bus: local.b, serial: 7}",
            freq_hz=freq_hz,
        )
    )


def run_shell(
    capsys: pytest.CaptureFixture[str], yaml_text: str, commands: str
) -> tuple[int, str, str]:
    """test_shell's runner, each command waiting up to 5 s (a window of changes takes time)."""
    return shell_run(capsys, yaml_text, commands, wait="5 s")


def consecutive(values: list[int]) -> bool:
    return values == list(range(values[0], values[0] + len(values)))


def test_echo_prints_every_change_once_and_in_order_where_watch_samples(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "echo s1.a; sleep 1 s; unecho")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "echoing local.b.s1.a" and lines[-1] == "stopped echo of all"
    found = [CHANGE.fullmatch(x) for x in lines[1:-1]]
    assert all(found)
    values = [int(m.group(2)) for m in found if m]
    assert 40 <= len(values) <= 60  # 50 Hz for 1 s
    assert consecutive(values)  # every value once, in order, at 10 Hz drains
    stamps = [m.group(1) for m in found if m]
    assert stamps == sorted(stamps)  # each commit's own time

    code, out, _ = run_shell(capsys, system(impls), "watch s1.a; sleep 1 s; unwatch")
    assert code == 0
    sampled = [int(m.group(2)) for x in out.splitlines() if (m := CHANGE.fullmatch(x))]
    assert sampled and not consecutive(sampled)  # the shell's drains skip values


def test_echo_csv_parses_as_time_and_value(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "echo --csv s1.a; sleep 400 ms")
    assert code == 0
    rows = list(csv.reader(out.splitlines()))
    assert rows[0] == ["time", "value"]
    times = [float(t) for t, _ in rows[1:]]
    values = [int(v) for _, v in rows[1:]]
    assert len(values) >= 10 and consecutive(values)
    assert times == sorted(times) and abs(times[0] - time.time()) < 10  # seconds since 1970


def test_hz_and_bw_report_the_rate_of_commits(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "hz s1.a; bw s1; hz s2; sleep 2100 ms")
    assert code == 0
    lines = out.splitlines()
    assert lines[:3] == [
        "measuring the rate of local.b.s1.a",
        "measuring the bandwidth of local.b.s1",
        "measuring the rate of local.b.s2",
    ]
    rates = [
        float(m.group(1))
        for x in lines
        if (m := re.fullmatch(r"local\.b\.s1\.a: rate ([\d.]+) Hz  min .* window \d+", x))
    ]
    assert len(rates) == 2 and 45 <= rates[-1] <= 55
    # Each commit of s1 changes reading, a and b: what the transport would send for it.
    codec = class_codec(impls.Counting.META)
    size = len(codec.encode_properties({"reading": 1.0, "a": 1, "b": 1}))
    speeds = [
        float(m.group(1))
        for x in lines
        if (m := re.fullmatch(rf"local\.b\.s1: ([\d.]+) KB/s  mean {size} B  .*", x))
    ]
    assert len(speeds) == 2 and 0.9 * 50 * size <= speeds[-1] * 1000 <= 1.1 * 50 * size
    assert lines.count("local.b.s2: no new changes") == 2


def test_bad_echo_hz_and_bw_commands_say_why(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "echo s1.serial": "property 'serial' of local.b.s1 is static: it never changes",
        "echo s1.nope": "property 'nope' not found in local.b.s1",
        "echo --csv s1": "echo --csv takes one property: <obj>.<property>",
        "echo --tsv s1.a": "unknown option '--tsv'",
        "hz --window 1 s1": "--window takes a number of changes >= 2, got 1",
        "bw --window x s1": "--window takes a number of changes, got 'x'",
        "unhz": "no hz of anything in progress",
        "echo s1.a; echo s1.a": "already echo local.b.s1.a",
    }
    for script, message in cases.items():
        code, _, err = run_shell(capsys, system(impls), script)
        assert code == 1
        assert err.splitlines()[0] == message


def test_step_n_shows_each_steps_values_to_watch_and_echo(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = "kernel: {runMode: virtualTime, clockMaster: true}\n"
    yaml_text = system(impls, kernel=kernel, shell_hz=100, freq_hz=100)
    for command in ("watch", "echo"):
        script = f"open local.kernel; step; {command} s1.a; step 3"
        code, out, _ = run_shell(capsys, yaml_text, script)
        assert code == 0
        lines = [x for x in out.splitlines() if x.startswith("[")]
        # 100 Hz: steps 10 ms apart, the first at t = 0 (a = 1).
        assert lines == [
            "[0.010000000] local.b.s1.a = 2",
            "[0.020000000] local.b.s1.a = 3",
            "[0.030000000] local.b.s1.a = 4",
        ], command


@pytest.mark.slow
def test_echo_and_hz_of_an_object_of_another_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for _ in make_project(tmp_path, "xecho"):
        port, session = free_port(), session_name("echo_remote")
        objects = "name: s1, class: xbus.Counting, serial: 7"
        process = Process(tmp_path, "producer", producer_config("xecho", port, session, objects))
        try:
            yaml_text = (
                "kernel: {appName: shell}\nload:\n" + transport_entry(port) + "  - name: shell\n"
                f"    freqHz: 10\n    open: [{session}.b]\n"
            )
            code, out, _ = run_shell(capsys, yaml_text, "echo s1.count; hz s1; sleep 1100 ms")
        finally:
            process.stop()
    assert code == 0
    pattern = rf"\[[\d:.]+\] {session}\.b\.s1\.count = (\d+)"
    values = [int(m.group(1)) for x in out.splitlines() if (m := re.fullmatch(pattern, x))]
    assert len(values) >= 30 and consecutive(values)
    rates = [float(m.group(1)) for x in out.splitlines() if (m := re.search(r"rate ([\d.]+)", x))]
    assert rates and 45 <= rates[-1] <= 55
