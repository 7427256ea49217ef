"""``sengen shell`` and a shell under ``sengen run`` as users run them: scripted with ``-c``,
fed by a pipe, without any input, and interactive in a real pseudo-terminal (runtime.md §9.1,
§1.12; acceptance S3, S6, S7 of §11).

Every process uses in-process buses only (no network), is bounded by a timeout and is waited
for; the interactive one gets a history file in the test's folder and has prompt_toolkit's
cursor-position requests turned off.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pexpect  # type: ignore[import-untyped]
import pytest
from kernel_support import make_package, producer

TIMEOUT = 30  # seconds, for any one process


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``plant.yaml`` (a producer of two sensors on local.b, no shell) and its package."""
    where = tmp_path_factory.mktemp("shell_cli")
    for impls in make_package(where, "kb_shell_cli"):
        objects = (
            "{name: sensor, class: kbus.Counting, bus: local.b, serial: 15}\n"
            "{name: boiler.temp, class: kbus.Still, bus: local.b, serial: 7}"
        )
        # Errors only: a scheduling warning of a loaded machine must not reach the output.
        kernel = "kernel: {logConfig: {level: err}}\n"
        (where / "plant.yaml").write_text(kernel + "build:\n" + producer(impls, objects))
        yield where


def with_shell(folder: Path, name: str, keys: str) -> Path:
    """A configuration including plant.yaml with a shell entry of ``keys`` (YAML flow map)."""
    path = folder / name
    path.write_text(f"include: plant.yaml\nload:\n  - {{name: shell, {keys}}}\n")
    return path


def sengen(
    folder: Path, *args: str, stdin: int | None = subprocess.DEVNULL, text: str | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=folder,
        input=text,
        stdin=None if text is not None else stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert "Traceback" not in result.stdout + result.stderr
    return result


# -- sengen shell -c -----------------------------------------------------------------------------


def test_c_waits_for_the_object_and_the_result(folder: Path) -> None:
    result = sengen(folder, "shell", "plant.yaml", "-c", "open local.b; sensor.add 1, 2")
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == "opened local.b"
    assert "detected local.b.sensor" in lines and lines[-1] == "3"


def test_c_fails_when_an_object_never_appears(folder: Path) -> None:
    started = time.monotonic()
    result = sengen(
        folder, "shell", "plant.yaml", "--wait", "300ms", "-c", "open local.b; nosuch.add 1; ls"
    )
    assert time.monotonic() - started >= 0.3
    assert result.returncode == 1
    assert result.stderr == "could not find object nosuch\n"
    assert "local" not in result.stdout.splitlines()  # ls never ran


def test_c_without_configuration_runs_a_bare_kernel(folder: Path) -> None:
    result = sengen(folder, "shell", "-c", "open local.kernel; api.getTypes")
    assert result.returncode == 0
    assert '"sen.kernel.KernelApi"' in result.stdout.splitlines()[-1]


def test_command_line_and_configuration_errors(folder: Path) -> None:
    usage = sengen(folder, "shell", "--wait", "3", "-c", "ls")
    assert usage.returncode == 2
    assert usage.stderr == "sengen: error: --wait: Duration needs a unit, e.g. '100 ms'\n"
    missing = sengen(folder, "shell", "absent.yaml", "-c", "ls")
    assert missing.returncode == 1
    assert "absent.yaml" in missing.stderr and "not found" in missing.stderr
    bad = with_shell(folder, "bad.yaml", "open: [nodot]")
    invalid = sengen(folder, "shell", bad.name, "-c", "ls")
    assert invalid.returncode == 1
    assert "load[0].open[0]: invalid bus address 'nodot'" in invalid.stderr


# -- piped input and no input --------------------------------------------------------------------


def test_piped_commands_run_one_per_line_and_go_on_after_a_failure(folder: Path) -> None:
    config = with_shell(folder, "piped.yaml", "open: [local.b], exitOnEof: true, freqHz: 50")
    lines = "sensor.serial\nnosuch.serial\nboiler.temp.serial\n"
    failing = sengen(folder, "shell", config.name, "--wait", "300ms", text=lines)
    assert failing.returncode == 1
    assert failing.stdout.splitlines() == ["15", "7"]
    assert "could not find object nosuch" in failing.stderr
    passing = sengen(folder, "run", config.name, text="sensor.add 2, 2\nshutdown\nls\n")
    assert (passing.returncode, passing.stdout) == (0, "4\n")


@pytest.mark.parametrize("closed", [False, True], ids=["dev-null", "closed"])
def test_without_input_the_shell_is_quiet_and_the_run_goes_on(folder: Path, closed: bool) -> None:
    # /dev/null ends at once and the shell goes quiet; with fd 0 closed there is no input to
    # end, so even exitOnEof does not stop the run.
    keys = "open: [local.b]" + (", exitOnEof: true" if closed else "")
    config = with_shell(folder, f"quiet{int(closed)}.yaml", keys)
    command = [sys.executable, "-m", "sengen", "run", config.name, "--until", "500ms"]
    if closed:  # Python then has no sys.stdin at all
        command = ["sh", "-c", 'exec "$0" "$@" <&-', *command]
    started = time.monotonic()
    result = subprocess.run(
        command,
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert time.monotonic() - started >= 0.5
    assert (result.returncode, result.stdout) == (0, "")
    assert "Traceback" not in result.stderr


# -- interactive, in a pseudo-terminal -------------------------------------------------------------


def test_interactive_completion_info_call_and_shutdown(folder: Path, tmp_path: Path) -> None:
    history = tmp_path / "history"
    config = with_shell(folder, "tty.yaml", f"open: [local.b], historyFile: '{history}'")
    env = {
        **os.environ,
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "TERM": "xterm",
        "XDG_STATE_HOME": str(tmp_path),
    }
    child = pexpect.spawn(
        sys.executable,
        ["-m", "sengen", "shell", config.name],
        cwd=str(folder),
        env=env,
        encoding="utf-8",
        timeout=10,
        dimensions=(40, 160),
    )
    try:
        child.expect_exact("sen> ")
        child.send("ls\r")
        child.expect_exact("sensor  kbus.Sensor  local")
        child.expect_exact("sen> ")
        child.send("info local.b.sen\t\r")  # completes to local.b.sensor
        child.expect(r"object\s+local\.b\.sensor\r\n")
        child.expect(r"add\(x: i32, y: i32\) -> i64")
        child.expect_exact("sen> ")
        child.send("local.b.sensor.setN\t")  # the common prefix of the setters
        child.expect_exact("local.b.sensor.setNext")
        child.send("\t")  # lists them: setters of writable properties only
        child.expect_exact("setNextSetpoint")
        listed = child.before + child.after
        child.send("\x15")  # Ctrl-U: clear the line
        child.send("local.b.sensor.add 2, 40\r")
        child.expect(r"\D42\r\n")  # printed when the result arrives
        child.send("ls\r")
        child.expect_exact("sensor  kbus.Sensor  local")
        child.send("ls\r")
        child.expect_exact("sensor  kbus.Sensor  local")
        child.send("shutdown\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert "setNextMode" in listed and "setNextReading" not in listed
    entries = [line[1:] for line in history.read_text().splitlines() if line.startswith("+")]
    assert entries == ["ls", "info local.b.sensor", "local.b.sensor.add 2, 40", "ls", "shutdown"]
