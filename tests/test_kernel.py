"""The first kernel: ``build:`` components cycling on their own threads under real time, and
``sengen run`` (runtime.md §1.12, §2, §5.5). Outcomes are counts and relations, never tight
wall-clock values."""

from __future__ import annotations

import logging
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sengen
from sengen.runtime import Duration
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel, PreloadError

STL = """\
package kdemo;

class Counter
{
  var count : u32;
  var step  : u32 [static];
}
"""
IMPLEMENTATIONS = """\
from typing import Any

from kgen.kdemo import CounterBase


class Ticker(CounterBase):
    def update(self, run_api: Any) -> None:
        self.set_next_count(self.count + self.step)


class Broken(CounterBase):
    def update(self, run_api: Any) -> None:
        raise RuntimeError("boom")
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("kernel")
    (folder / "stl" / "kdemo").mkdir(parents=True)
    (folder / "stl" / "kdemo" / "counter.stl").write_text(STL)
    assert sengen.generate([folder / "stl"], output=folder / "kgen").ok
    (folder / "kimpls.py").write_text(IMPLEMENTATIONS)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == "kimpls" or n.startswith("kgen")]:
            del sys.modules[name]


def config(body: str) -> str:
    return textwrap.dedent(body)


TWO_RATES = config("""\
    build:
      - name: fast
        freqHz: 50
        imports: [kgen.kdemo, kimpls]
        objects:
          - {name: f, class: kdemo.Ticker, bus: local.demo, step: 1}
      - name: slow
        group: 2
        freqHz: 5
        imports: [kgen.kdemo, kimpls]
        objects:
          - {name: s, class: kdemo.Ticker, bus: local.demo, step: 1}
          - {name: plain, class: kdemo.Counter, bus: local.demo, step: 3}
    """)


def test_components_cycle_at_their_own_rates_and_stop_cleanly(project: Path) -> None:
    kernel = Kernel(load_config_text(TWO_RATES))
    fast: Any = kernel.components[0].component.objects[0][0]  # type: ignore[attr-defined]
    slow: Any = kernel.components[1].component.objects[0][0]  # type: ignore[attr-defined]
    plain: Any = kernel.components[1].component.objects[1][0]  # type: ignore[attr-defined]
    assert kernel.run(Duration.parse("600 ms")) == 0
    assert fast.count > slow.count > 0
    assert plain.count == 0 and plain.step == 3  # the STL class itself: no code, no change
    assert kernel.objects("local.demo") == []  # a stopped component's objects are removed
    assert all(c.thread is not None and not c.thread.is_alive() for c in kernel.components)
    loop = kernel.components[0].loop
    assert loop is not None and loop.snapshot().cycle_time == 20_000_000


def test_a_failing_update_stops_the_kernel_with_exit_code_3(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="sengen.kernel")
    text = TWO_RATES.replace("{name: f, class: kdemo.Ticker", "{name: f, class: kdemo.Broken")
    assert "kdemo.Broken" in text
    kernel = Kernel(load_config_text(text))
    assert kernel.run(Duration.parse("20 s")) == 3  # the failure ends the run long before
    failures = [r.getMessage() for r in caplog.records if "failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].startswith("component 'fast' failed: boom")
    assert "RuntimeError: boom" in failures[0]


def test_preload_reports_every_problem_before_anything_starts(project: Path) -> None:
    text = config("""\
        build:
          - name: a
            imports: [kgen.kdemo, no_such_package_k]
            objects: [{name: x, class: kdemo.Counter, bus: local.b, step: 1}]
          - name: b
            imports: [kgen.kdemo]
            objects:
              - {name: y, class: kdemo.Missing, bus: local.b}
              - {name: z, class: kdemo.Counter, bus: local.b}
        """)
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    problems = caught.value.problems
    assert problems[0].startswith(
        "<yaml text>: build[0].imports: could not import package 'no_such_package_k'"
    )
    assert problems[1:] == [
        "<yaml text>: build[1].objects[0].class: could not find class 'kdemo.Missing' in any of"
        " the imported packages",
        "<yaml text>: build[1].objects[1]: missing constructor argument 'step' of type 'u32' for"
        " creating object 'z' of class 'kdemo.Counter'",
    ]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sengen", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_sengen_run_from_the_command_line(project: Path) -> None:
    (project / "two.yaml").write_text(TWO_RATES)
    checked = _run("two.yaml", "--check", cwd=project)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == "sengen: two.yaml is ready to run: 2 components, 3 objects\n"
    quiet = _run("two.yaml", "--check", "-q", cwd=project)
    assert (quiet.returncode, quiet.stdout) == (0, "")
    ran = _run("two.yaml", "--until", "300ms", cwd=project)
    assert ran.returncode == 0, ran.stderr
    printed = _run("two.yaml", "--print-config", cwd=project)
    assert printed.returncode == 0 and "name: fast" in printed.stdout
    bad = _run("two.yaml", "--until", "3", cwd=project)
    assert bad.returncode == 2 and "Duration needs a unit" in bad.stderr
    (project / "bad.yaml").write_text(TWO_RATES.replace("kdemo.Ticker", "kdemo.Nope", 1))
    broken = _run("bad.yaml", "--check", cwd=project)
    assert broken.returncode == 1
    assert "bad.yaml: build[0].objects[0].class: could not find class 'kdemo.Nope'" in broken.stderr


def test_a_name_used_on_one_bus_by_two_components_is_a_start_up_error(project: Path) -> None:
    text = TWO_RATES.replace("{name: s, class", "{name: f, class")
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    assert caught.value.problems == [
        "<yaml text>: build[1].objects[0].name: object name 'f' is already used on bus"
        " 'local.demo' by component 'fast'"
    ]


def _started(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sengen", "run", "two.yaml", *args],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(("number", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_shuts_down_in_order_with_its_exit_code(
    project: Path, number: signal.Signals, code: int
) -> None:
    (project / "two.yaml").write_text(TWO_RATES)
    process = _started(project, "--until", "60 s")
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        lines: list[str] = []
        while time.monotonic() < deadline:  # until the kernel says everything started
            ready, _, _ = select.select([process.stderr], [], [], 1.0)
            if ready:
                lines.append(process.stderr.readline())
                if "started" in lines[-1] or not lines[-1]:
                    break
        assert any("started 3 component(s) in 2 group(s)" in line for line in lines), lines
        process.send_signal(number)
        _, rest = process.communicate(timeout=20)
        stderr = "".join(lines) + rest
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr


def test_until_runs_that_long_and_start_stop_runs_briefly(project: Path) -> None:
    (project / "two.yaml").write_text(TWO_RATES)
    begin = time.monotonic()
    ran = _run("two.yaml", "--until", "1s", cwd=project)
    assert ran.returncode == 0, ran.stderr
    assert time.monotonic() - begin >= 1.0
    begin = time.monotonic()
    smoke = _run("two.yaml", "--start-stop", cwd=project)
    assert smoke.returncode == 0, smoke.stderr
    assert time.monotonic() - begin < 15  # 100 ms of running, plus start-up and imports


def test_sengen_run_until_under_virtual_time_needs_no_wall_clock_wait(project: Path) -> None:
    (project / "virtual.yaml").write_text("kernel: {runMode: virtualTime}\n" + TWO_RATES)
    begin = time.monotonic()
    ran = _run("virtual.yaml", "--until", "60s", cwd=project)
    assert ran.returncode == 0, ran.stderr
    assert time.monotonic() - begin < 30  # 60 s of virtual time
    assert "Traceback" not in ran.stderr


def test_a_log_file_in_a_folder_that_does_not_exist_yet_is_created(project: Path) -> None:
    config = project / "logged.yaml"
    config.write_text(
        TWO_RATES + "kernel:\n  logConfig: {level: info, file: {path: logs/deep/run.log}}\n"
    )
    result = _run(str(config), "--until", "200ms", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "started" in (project / "logs" / "deep" / "run.log").read_text()
