"""``sengen init NAME [--class CLASS]``: a scaffolded project builds, runs for one second and
passes its own tests at once; bad names and occupied folders are refused with exit 1 and
nothing written.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from wheel_tree import run_mypy, wheel_tree

import sengen
from sengen.cli import scaffold
from sengen.cli.main import main
from sengen.runtime.kernel.kernel import registered_components

FILES = [
    "pyproject.toml",
    "README.md",
    ".gitignore",
    "stl/demo/demo.stl",
    "demo_impl.py",
    "config.yaml",
    "tests/conftest.py",
    "tests/test_demo.py",
]
# 10 Hz for the second after start-up, which the component's schedule starts before: 11
# cycles, and a few more for a slow start-up on a busy machine; fewer only if it stalled.
MOST_CYCLES = 15
# The shell is a shipped component of its own; until it exists a configuration loading it
# cannot run, so only that one check waits for it.
needs_shell = pytest.mark.skipif(
    "shell" not in registered_components(), reason="the shell is not shipped yet"
)


def _sengen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``sengen init demo`` and ``sengen build`` in a fresh folder, as a user would."""
    where = tmp_path_factory.mktemp("init")
    made = _sengen("init", "demo", cwd=where)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[1:9] == [f"  {path}" for path in FILES]
    folder = where / "demo"
    built = _sengen("build", cwd=folder)
    assert (built.returncode, built.stderr) == (0, "")
    yield folder


def _summary(stderr: str) -> int:
    """The cycles the scaffolded object reports at shut-down; the log must be clean."""
    lines = stderr.splitlines()
    assert all(line.startswith("INFO ") for line in lines), stderr
    (summary,) = [line for line in lines if line.startswith("INFO sengen.component.main: ")]
    prefix, _, rest = summary.partition(" ran ")
    assert prefix.endswith(": demo") and rest.endswith(" cycle(s)"), summary
    return int(rest.split()[0])


def test_init_writes_the_project_files(project: Path) -> None:
    written = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    assert [p for p in written if not p.startswith("gen/")] == sorted(FILES)
    assert (project / "gen" / "demo" / "demo.py").is_file()
    assert "class Demo\n" in (project / "stl/demo/demo.stl").read_text()
    assert "class: demo.DemoImpl" in (project / "config.yaml").read_text()
    assert "- name: shell" in (project / "config.yaml").read_text()


def test_the_system_runs_for_one_second(project: Path) -> None:
    # config.yaml without its shell entry, by the configuration's own merge rule: an explicit
    # null restores the default (no load entries at all).
    (project / "noshell.yaml").write_text("include: config.yaml\nload: null\n")
    try:
        ran = _sengen("run", "noshell.yaml", "--until", "1s", cwd=project)
    finally:
        (project / "noshell.yaml").unlink()
    assert ran.returncode == 0, ran.stderr
    assert 0 < _summary(ran.stderr) <= MOST_CYCLES


@needs_shell
def test_config_yaml_runs_for_one_second_with_its_shell(project: Path) -> None:
    ran = _sengen("run", "config.yaml", "--until", "1s", cwd=project)
    assert ran.returncode == 0, ran.stderr
    assert 0 < _summary(ran.stderr) <= MOST_CYCLES


def test_the_scaffolded_tests_pass(project: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "3 passed" in ran.stdout


def test_the_scaffolded_python_is_ruff_and_black_clean(project: Path) -> None:
    # --isolated: the rules below, whatever configuration the machine has; the project folder
    # is the source root, so gen and demo_impl are first-party imports there.
    ruff = ["ruff", "check", "--isolated", "--select", "E,F,W,I,B,UP,RUF,SIM", "--exclude", "gen"]
    linted = subprocess.run(
        [sys.executable, "-m", *ruff, "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    formatted = subprocess.run(
        [sys.executable, "-m", "black", "--check", "--quiet", "demo_impl.py", "tests"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.mark.slow
def test_the_scaffolded_python_is_mypy_strict_clean(project: Path, tmp_path: Path) -> None:
    checked = run_mypy(wheel_tree(tmp_path), "demo_impl.py", "tests", cwd=project)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_class_option_names_the_class_and_its_files(tmp_path: Path) -> None:
    made = _sengen("init", "plant2", "--class", "HeatPump", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    folder = tmp_path / "plant2"
    assert (folder / "stl/plant2/heat_pump.stl").is_file()
    assert (folder / "tests/test_heat_pump.py").is_file()
    assert "class: plant2.HeatPumpImpl" in (folder / "config.yaml").read_text()
    assert "name: heat_pump" in (folder / "config.yaml").read_text()
    assert sengen.check([folder / "stl"]) == []


def test_init_dot_uses_an_empty_current_folder(tmp_path: Path) -> None:
    folder = tmp_path / "lab"
    folder.mkdir()
    made = _sengen("init", ".", cwd=folder)
    assert made.returncode == 0, made.stderr
    assert (folder / "stl/lab/lab.stl").is_file()
    assert "class Lab\n" in (folder / "stl/lab/lab.stl").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["My-App"], "invalid project name 'My-App': a project name starts with a lowercase"),
        (["1app"], "invalid project name '1app'"),
        (["def"], "invalid project name 'def': it is reserved in Python"),
        (["match"], "invalid project name 'match': it is reserved in Python"),
        (["interface"], "invalid project name 'interface': it is an STL keyword"),
        (["a" * 65], "at most 64 characters"),
        (["none"], "invalid class name 'None' (derived from 'none'; choose one with --class)"),
        (["ok", "--class", "pump"], "invalid class name 'pump': not allowed to start with low"),
        (["ok", "--class", "Heat_Pump"], "alpha-numeric characters but '_' was found"),
        (["ok", "--class", "Heat-Pump"], "a class name has only letters and digits"),
        (["ok", "--class", "SELECT"], "invalid class name 'SELECT': it is reserved"),
    ],
)
def test_bad_names_exit_1_and_write_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", *args]) == 1
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_occupied_or_unreachable_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    (tmp_path / "afile").write_text("")
    for name, message in [
        ("busy", "is not empty"),
        ("afile", "exists and is not a folder"),
        ("missing/demo", "cannot create the project in 'missing/demo': [Errno 2]"),
    ]:
        refused = _sengen("init", name, cwd=tmp_path)
        assert refused.returncode == 1
        assert message in refused.stderr and "Traceback" not in refused.stderr
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["notes.txt"]
    assert (tmp_path / "afile").read_text() == ""
    assert not (tmp_path / "missing").exists()


def test_a_missing_name_is_a_usage_error(tmp_path: Path) -> None:
    assert _sengen("init", cwd=tmp_path).returncode == 2
    assert _sengen("init", "ok", "--class", cwd=tmp_path).returncode == 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("existed", [False, True])
def test_a_failed_write_leaves_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existed: bool
) -> None:
    folder = tmp_path / "demo"
    if existed:
        folder.mkdir()
    real = Path.write_text
    writes: list[Path] = []

    def failing(self: Path, text: str, encoding: str | None = None) -> int:
        writes.append(self)
        if len(writes) == 4:  # the STL file, in a folder of its own
            raise OSError(28, "No space left on device")
        return real(self, text, encoding=encoding)

    monkeypatch.setattr(Path, "write_text", failing)
    with pytest.raises(scaffold.InitError, match="No space left on device"):
        scaffold.init(folder)
    assert folder.is_dir() == existed
    assert not existed or list(folder.iterdir()) == []
