"""The user guide (``docs/guide/*.md``) and the README's tutorial are tested: every STL, Python
and YAML block in them is checked, executed or validated, and the commands marked to run do run.

How a page is tested (the convention, also described in ``docs/guide/README.md``):

* Each page gets an empty folder of its own, its **workspace**.
* A *directive* is an HTML comment on the line right before a fenced block (GitHub does not
  show it); several are separated by ``;``. A line ``<!-- copy: examples/NAME -->`` anywhere in
  a page copies that example (its STL, configurations and modules, not its README) into the
  workspace first.
* ``<!-- file: PATH -->``: the block is written to ``PATH`` in the workspace before anything
  runs. STL files go under ``stl/``; guide pages then get them generated into the root package
  ``gen`` (with ``settings.json`` or ``codegen_settings.json`` when there is one), as
  ``sengen build stl --out gen`` would. The README's tutorial builds with its own commands.
* Then the blocks are taken in page order:

  - ```` ```stl ```` with ``file: stl/...``: generated (guide pages), or built by the page's own
    commands (the README);
  - ```` ```stl ```` otherwise: ``sengen.check`` on it alone: no error, or, with
    ``expect-error: TEXT``, an error containing TEXT;
  - ```` ```python ```` with ``file: test_*.py``: run by pytest in the workspace (by the page's
    own ``pytest`` command when it has one);
  - ```` ```python ```` with another ``file:``: imported;
  - ```` ```python ```` without: executed in the workspace, in a fresh namespace;
  - ```` ```yaml ```` with ``launch``: a launch file, validated as ``sengen launch`` does;
  - ```` ```yaml ````: loaded and preloaded as ``sengen run CFG --check`` does (imports,
    classes, properties, components, and a transport's Zenoh settings): valid, or failing
    with ``expect-error: TEXT``;
  - ```` ```sh ```` with ``run`` (or ``run: exit N``): run by bash (``set -eo pipefail``) in
    the workspace, this venv's ``sengen`` first on ``PATH``; it must exit 0 (or N);
  - ```` ```text ```` with ``output``: every line appears in the output of the block run just
    before it (stdout or stderr, in order within each; other lines may come between); ``…``
    matches any text within a line, and a line of ``…`` alone only shows that lines are left out.

  Other blocks (``sh`` without ``run``, ``text``, ``json`` without ``file:``) are illustrations.

Python snippets and YAML validations run in one child process per run of consecutive blocks,
so a page's generated package ``gen`` never meets another page's. Multi-process scenarios
(distribution) have tests of their own below, on a free loopback port and a session name of
their own.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import sengen

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
TUTORIAL_HEADING = "## Five-minute tutorial"
TIMEOUT_S = 120.0
TESTED_LANGUAGES = ("stl", "python", "yaml")

_DIRECTIVE = re.compile(r"^<!--\s*(.*?)\s*-->$")


@dataclass
class Block:
    """A fenced code block: its language, text, line of its opening fence and directives."""

    lang: str
    code: str
    line: int
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def file(self) -> str | None:
        return self.directives.get("file")


@dataclass
class Page:
    name: str
    blocks: list[Block]
    copies: list[str]


def parse_directives(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in text.split(";"):
        key, _, value = part.partition(":")
        if key.strip():
            found[key.strip()] = value.strip()
    return found


def parse_page(name: str, text: str, first_line: int = 1) -> Page:
    """The fenced blocks of ``text`` (unindented fences only) and its ``copy:`` lines."""
    blocks: list[Block] = []
    copies: list[str] = []
    lines = text.splitlines()
    index = 0
    previous = ""  # the last non-blank line outside a block
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        match = _DIRECTIVE.match(stripped)
        if match and match.group(1).startswith("copy:"):
            copies.append(match.group(1).partition(":")[2].strip())
        if stripped.startswith("```"):
            assert line.startswith("```"), (
                f"{name}:{first_line + index}: indented fence: the docs tests only see"
                " unindented blocks"
            )
            lang = (line[3:].split() or [""])[0]
            end = index + 1
            while end < len(lines) and lines[end] != "```":
                end += 1
            assert end < len(lines), f"{name}:{first_line + index}: unterminated block"
            directive = _DIRECTIVE.match(previous)
            blocks.append(
                Block(
                    lang,
                    "\n".join(lines[index + 1 : end]) + "\n",
                    first_line + index,
                    parse_directives(directive.group(1)) if directive else {},
                )
            )
            index = end + 1
            previous = ""
            continue
        if stripped:
            previous = stripped
        index += 1
    return Page(name, blocks, copies)


def tutorial_section(text: str) -> tuple[str, int]:
    """The README's tutorial: from its heading to the next ``## `` heading, and its first line."""
    start = text.index(TUTORIAL_HEADING)
    end = text.find("\n## ", start + len(TUTORIAL_HEADING))
    return text[start : end if end >= 0 else len(text)], text[:start].count("\n") + 1


# -- matching outputs ------------------------------------------------------------------------


def _pattern(line: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in line.split("…")))


def assert_output(expected: str, stdout: str, stderr: str, where: str) -> None:
    """Every expected line matches a line of stdout or of stderr, in order within each."""
    streams = {"stdout": stdout.splitlines(), "stderr": stderr.splitlines()}
    positions = dict.fromkeys(streams, 0)
    for line in expected.splitlines():
        wanted = line.rstrip()
        if not wanted or wanted == "…":
            continue
        pattern = _pattern(wanted)
        for stream, lines in streams.items():
            found = next(
                (i for i in range(positions[stream], len(lines)) if pattern.fullmatch(lines[i])),
                None,
            )
            if found is not None:
                positions[stream] = found + 1
                break
        else:
            raise AssertionError(
                f"{where}: the output has no line {wanted!r} (in order)\n"
                f"--- stdout\n{stdout}--- stderr\n{stderr}"
            )


# -- the child process that executes snippets and validates configurations -------------------

RUNNER = r"""
import contextlib, io, json, os, sys, traceback
from pathlib import Path

sys.path.insert(0, os.getcwd())
steps = json.loads(Path(sys.argv[1]).read_text())
results = []


def validate(path):
    from sengen.stl.project import config_import_path
    from sengen.runtime.kernel.config import ConfigurationError, load_config
    from sengen.runtime.kernel.kernel import Kernel, PreloadError

    try:
        config = load_config(Path(path))
        config_import_path(Path(path))
        kernel = Kernel(config)
    except (ConfigurationError, PreloadError) as error:
        return list(error.problems)
    # The transport opens its Zenoh session only at init: build its Zenoh configuration here,
    # which refuses any setting of the zenoh: passthrough that Zenoh does not know.
    from sengen.runtime.components.transport import transport

    make = getattr(transport, "zenoh_config", None)
    for runner in kernel.runners:
        if make is not None and isinstance(runner.component, transport.Transport):
            try:
                make(runner.component.settings, [], [])
            except Exception as error:
                return [f"{path}: zenoh settings of {runner.name}: {error}"]
    return []


for step in steps:
    out = io.StringIO()
    result = {"ok": True, "error": "", "problems": [], "stdout": ""}
    try:
        with contextlib.redirect_stdout(out):
            if step["kind"] == "exec":
                code = compile(step["code"], step["where"], "exec")
                exec(code, {"__name__": "__main__"})
            elif step["kind"] == "import":
                __import__(step["module"])
            else:
                result["problems"] = validate(step["path"])
    except BaseException:
        result["ok"] = False
        result["error"] = traceback.format_exc()
    result["stdout"] = out.getvalue()
    results.append(result)
    Path(sys.argv[2]).write_text(json.dumps(results))
    if not result["ok"]:
        break
"""


@dataclass
class Step:
    block: Block
    kind: str  # exec, import, validate, check, launch, pytest, sh; covered: run by one of the sh
    where: str
    path: str = ""
    output: Block | None = None  # the ``output`` block that follows


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def _run_child(steps: list[Step], workspace: Path) -> None:
    """Execute the snippets and validations of ``steps`` in one child process, in order."""
    requests = []
    for step in steps:
        if step.kind == "exec":
            requests.append({"kind": "exec", "code": step.block.code, "where": step.where})
        elif step.kind == "import":
            requests.append({"kind": "import", "module": Path(step.path).stem})
        else:
            requests.append({"kind": "validate", "path": step.path})
    plan, answer = workspace / "_steps.json", workspace / "_results.json"
    plan.write_text(json.dumps(requests))
    answer.unlink(missing_ok=True)
    process = subprocess.run(
        [sys.executable, "-c", RUNNER, str(plan), str(answer)],
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    results = json.loads(answer.read_text()) if answer.exists() else []
    for step, result in zip(steps, results, strict=False):
        problems: list[str] = result["problems"]
        assert result["ok"], f"{step.where} failed:\n{result['error']}\n{process.stderr}"
        expected = step.block.directives.get("expect-error")
        if step.kind == "validate" and expected is not None:
            assert any(
                expected in p for p in problems
            ), f"{step.where}: expected a problem with {expected!r}, got {problems}"
        elif step.kind == "validate":
            assert not problems, f"{step.where}: invalid configuration:\n" + "\n".join(problems)
        if step.output is not None:
            assert_output(step.output.code, result["stdout"], "", step.where)
    assert len(results) == len(steps), f"the snippet runner stopped early:\n{process.stderr}"


def _run_shell(step: Step, workspace: Path) -> None:
    wanted = int(step.block.directives["run"].removeprefix("exit").strip() or 0)
    result = subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + step.block.code],
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == wanted, (
        f"{step.where}: exit {result.returncode}, expected {wanted}\n"
        f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}"
    )
    if step.output is not None:
        assert_output(step.output.code, result.stdout, result.stderr, step.where)


def _run_pytest(step: Step, workspace: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", step.path],
        cwd=workspace,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"{step.where}:\n{result.stdout}{result.stderr}"
    assert " passed" in result.stdout and "skipped" not in result.stdout, result.stdout


def _check_stl(step: Step, workspace: Path) -> None:
    path = workspace / step.path
    path.write_text(step.block.code)
    errors = [d.format() for d in sengen.check([path]) if d.severity.name.lower() == "error"]
    expected = step.block.directives.get("expect-error")
    if expected is None:
        assert not errors, f"{step.where}: " + "\n".join(errors)
    else:
        assert any(expected in e for e in errors), f"{step.where}: {expected!r} not in {errors}"


def _check_launch(step: Step, workspace: Path) -> None:
    from sengen.cli.launch_file import LaunchFileError, load_launch

    try:
        load_launch(workspace / step.path)
    except LaunchFileError as error:
        raise AssertionError(f"{step.where}: " + "\n".join(error.problems)) from None


def plan_page(page: Page, workspace: Path) -> list[Step]:
    """Write the page's files into ``workspace`` and list what to run, in page order."""
    steps: list[Step] = []
    written: set[str] = set()
    for block in page.blocks:
        where = f"{page.name}:{block.line}"
        if block.file is not None:
            assert block.file not in written, f"{where}: {block.file} is written twice"
            written.add(block.file)
            target = workspace / block.file
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code)
        if block.lang == "stl" and (
            block.file is None
            or "expect-error" in block.directives
            or not block.file.startswith("stl/")
        ):
            steps.append(Step(block, "check", where, block.file or f"_block_{block.line}.stl"))
        elif block.lang == "python" and block.file is None:
            steps.append(Step(block, "exec", where))
        elif block.lang == "python":
            assert block.file is not None
            kind = "pytest" if Path(block.file).name.startswith("test_") else "import"
            assert kind == "pytest" or "/" not in block.file, f"{where}: modules sit at the top"
            steps.append(Step(block, kind, where, block.file))
        elif block.lang == "yaml" and "launch" in block.directives:
            steps.append(Step(block, "launch", where, block.file or f"_block_{block.line}.yaml"))
            if block.file is None:
                (workspace / steps[-1].path).write_text(block.code)
        elif block.lang == "yaml":
            path = block.file or f"_block_{block.line}.yaml"
            if block.file is None:
                (workspace / path).write_text(block.code)
            steps.append(Step(block, "validate", where, str(workspace / path)))
        elif block.lang == "sh" and "run" in block.directives:
            steps.append(Step(block, "sh", where))
        elif block.lang == "text" and "output" in block.directives:
            assert steps and steps[-1].kind in ("sh", "exec"), f"{where}: output of what?"
            steps[-1].output = block
    commands = [s.block.code for s in steps if s.kind == "sh"]
    for step in steps:  # a test file that the page runs with pytest itself is run once
        if step.kind == "pytest" and any("pytest" in c and step.path in c for c in commands):
            step.kind = "covered"
    return steps


def copy_example(name: str, workspace: Path) -> None:
    source = ROOT / name
    assert source.is_dir(), f"no folder {name}"
    ignored = shutil.ignore_patterns("gen", "__pycache__", "README.md", "*.mcap", "trace.json")
    shutil.copytree(source, workspace, ignore=ignored, dirs_exist_ok=True)


def generate(workspace: Path) -> None:
    """``sengen build stl --out gen`` with the workspace's codegen settings, if any."""
    if not (workspace / "stl").is_dir():
        return
    settings = next(
        (
            workspace / n
            for n in ("settings.json", "codegen_settings.json")
            if (workspace / n).exists()
        ),
        None,
    )
    # Unformatted: the same code, without black's time.
    result = sengen.generate(
        [workspace / "stl"], output=workspace / "gen", settings=settings, format=False
    )
    assert result.ok, [d.format() for d in result.diagnostics]


def run_page(page: Page, workspace: Path, *, build: bool = True) -> list[Step]:
    """Test ``page`` in ``workspace``; the steps it ran."""
    for name in page.copies:
        copy_example(name, workspace)
    steps = plan_page(page, workspace)
    if build:
        generate(workspace)
    batch: list[Step] = []
    for step in [*steps, None]:
        if step is not None and step.kind in ("exec", "import", "validate"):
            batch.append(step)
            continue
        if batch:
            _run_child(batch, workspace)
            batch = []
        if step is None:
            break
        if step.kind == "sh":
            _run_shell(step, workspace)
        elif step.kind == "pytest":
            _run_pytest(step, workspace)
        elif step.kind == "check":
            _check_stl(step, workspace)
        elif step.kind == "launch":
            _check_launch(step, workspace)
    return steps


def guide_pages() -> list[Path]:
    return sorted(GUIDE.glob("*.md"))


# -- the guide -------------------------------------------------------------------------------


def test_the_guide_has_its_pages_and_the_index_links_every_one() -> None:
    names = {p.name for p in guide_pages()}
    for expected in (
        "README.md",
        "concepts.md",
        "stl.md",
        "generated-api.md",
        "components.md",
        "configuration.md",
        "execution-model.md",
        "clock.md",
        "self-driven.md",
        "distribution.md",
        "testing.md",
        "tracing.md",
        "troubleshooting.md",
    ):
        assert expected in names
    index = (GUIDE / "README.md").read_text()
    for name in names - {"README.md"}:
        assert f"({name})" in index, f"docs/guide/README.md does not link {name}"


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a page's headings, and its explicit ``<a id>`` ones."""
    found = set(re.findall(r'<a id="([^"]+)"', text))
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading and not fenced:
            title = heading.group(1).strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_relative_link_of_the_docs_leads_somewhere() -> None:
    link = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")
    pages = [
        README,
        *guide_pages(),
        *(ROOT / "docs").glob("*.md"),
        ROOT / "docs/examples/README.md",
    ]
    for page in pages:
        for target, anchor in link.findall(page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            where = f"{page.relative_to(ROOT)}: {target}#{anchor}"
            path = page.parent / target if target else page
            assert path.exists(), f"{where}: no such file"
            if anchor:
                assert anchor in anchors(path.read_text()), f"{where}: no such heading"


@pytest.mark.parametrize("path", guide_pages(), ids=lambda p: p.stem)
def test_guide_page(path: Path, tmp_path: Path) -> None:
    page = parse_page(f"docs/guide/{path.name}", path.read_text())
    steps = run_page(page, tmp_path)
    tested = {id(s.block) for s in steps} | {id(s.output) for s in steps if s.output}
    for block in page.blocks:
        if block.lang == "stl" and block.file and block.file.startswith("stl/"):
            continue  # generated by run_page, which fails on any error
        if block.lang in TESTED_LANGUAGES:
            assert id(block) in tested, f"{page.name}:{block.line}: a {block.lang} block untested"


# -- the README's tutorial -------------------------------------------------------------------


def test_readme_keeps_the_two_set_up_commands() -> None:
    """``.ci/run`` runs the test command verbatim; the run command is the main job."""
    text = README.read_text()
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/sengen check"
        " examples/plant/stl && .venv/bin/sengen build examples/plant/stl --out examples/plant/gen"
        " && .venv/bin/sengen run examples/plant/plant.yaml --until 3s\n"
    ) in text
    command = (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]'"
        " && .venv/bin/python -m pytest"
    )
    assert f"{command}\n" in text
    assert command.removeprefix("python3") in (ROOT / ".ci" / "run").read_text()


def test_readme_reference_lists_every_command_with_its_exit_codes() -> None:
    from sengen.cli.main import _parser

    text = README.read_text()
    reference = text[text.index("## Command-line reference") :]
    reference = reference[: reference.index("\n## ", 5)]
    actions = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    for name in actions[0].choices:
        assert f"`sengen {name}" in reference, f"the reference misses sengen {name}"
    for code in ("0", "1", "2", "3", "4", "130", "143"):
        assert f"| {code} |" in reference or f"| {code} " in reference, code


@pytest.mark.slow
def test_readme_tutorial_runs_end_to_end(tmp_path: Path) -> None:
    """The tutorial as a reader follows it in an empty folder: its files, then its commands
    (check, build, run for a second, the scripted shell, pytest), with their outputs."""
    section, first = tutorial_section(README.read_text())
    page = parse_page("README.md", section, first)
    steps = run_page(page, tmp_path, build=False)
    commands = "\n".join(s.block.code for s in steps if s.kind == "sh")
    for expected in (
        "sengen check stl",
        "sengen build stl --out gen",
        "--until 1s",
        "sengen shell hello.yaml -c",
        "pytest",
    ):
        assert expected in commands, f"the tutorial no longer runs {expected!r}"
    assert all(s.output is not None for s in steps if "sengen shell" in s.block.code)
    languages = {b.lang for b in page.blocks if b.file}
    assert {"stl", "python", "yaml"} <= languages
    for block in page.blocks:
        assert block.lang not in TESTED_LANGUAGES or block.file, f"README:{block.line}"


# -- distribution: several processes on loopback ---------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def distribution(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """The distribution page's workspace, with a free port and a session of the test's own."""
    page = parse_page("docs/guide/distribution.md", (GUIDE / "distribution.md").read_text())
    for name in page.copies:
        copy_example(name, tmp_path)
    plan_page(page, tmp_path)
    generate(tmp_path)
    env = _env()
    env["SENGEN_PORT"] = str(free_port())
    env["SENGEN_SESSION"] = f"docs{os.getpid()}"
    yield tmp_path, env


class Background:
    """A ``sengen run`` in the background, always stopped."""

    def __init__(self, folder: Path, args: Sequence[str], env: dict[str, str]) -> None:
        self.log = folder / f"{Path(args[0]).stem}.log"
        with self.log.open("w") as sink:
            self.popen = subprocess.Popen(
                [str(BIN / "sengen"), "run", *args],
                cwd=folder,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log.read_text():
                return
            assert self.popen.poll() is None, self.log.read_text()
            time.sleep(0.05)
        raise AssertionError(f"never logged {text!r}:\n{self.log.read_text()}")

    def stop(self) -> tuple[int, str]:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)
        return self.popen.returncode, self.log.read_text()


def _shell(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "sengen"), "shell", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _commands_of(page: str, start: str) -> str:
    """The ``-c`` script of the first ``sengen shell`` line of the page that contains ``start``."""
    for line in (GUIDE / page).read_text().splitlines():
        if line.startswith("sengen shell") and start in line:
            words = shlex.split(line, comments=True)
            return words[words.index("-c") + 1]
    raise AssertionError(f"{page}: no shell command with {start!r}")


@pytest.mark.slow
def test_distribution_stepped_across_two_processes_matches_one_process(
    distribution: tuple[Path, dict[str, str]],
) -> None:
    """The worked run: the physics in a process of its own, stepped by the master of the
    instruments' process through the shell, gives the numbers of the one-process run."""
    folder, env = distribution
    commands = _commands_of("distribution.md", "advance").replace(
        "sim.", env["SENGEN_SESSION"] + "."
    )
    physics = Background(folder, ["physics.yaml"], env)
    try:
        physics.wait_for("started 3 component(s)")
        shell = _shell(folder, env, "instruments.yaml", "-c", commands)
    finally:
        code, log = physics.stop()
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert "time 1.000000000" in shell.stdout
    assert (
        "ball bounced at 0.450 s at 4.415 m/s, after a highest sample of 0.9559 m" in shell.stderr
    )
    assert "altimeter: 9 sample(s)" in shell.stderr
    assert code == 130, log
    assert "ball: 100 cycle(s) up to 0.990 s, height 0.4503 m, 1 bounce(s)" in log


def _certificates(folder: Path) -> None:
    """A test CA and a certificate for localhost signed by it, as the page's openssl lines make."""
    page = (GUIDE / "distribution.md").read_text()
    script = page[page.index("openssl req -x509") :]
    script = script[: script.index("```")]
    certs = folder / "certs"
    certs.mkdir()
    result = subprocess.run(
        ["bash", "-c", "set -eo pipefail\n" + script],
        cwd=certs,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl for the certificates")
def test_distribution_tls_configuration_connects_two_processes(
    distribution: tuple[Path, dict[str, str]],
) -> None:
    """The TLS example: the producer listens on a TLS endpoint only and the consumer's shell
    connects to it with the CA certificate; the remote counters answer through it."""
    folder, env = distribution
    _certificates(folder)
    session = env["SENGEN_SESSION"]
    commands = _commands_of("distribution.md", "fast.label").replace("pcdemo.", f"{session}.")
    producer = Background(folder, ["producer_tls.yaml", "--until", "60s"], env)
    try:
        producer.wait_for("started 3 component(s)")
        shell = _shell(folder, env, "consumer_tls.yaml", "-c", commands)
    finally:
        _, log = producer.stop()
    assert shell.returncode == 0, shell.stdout + shell.stderr + log
    assert '"fast counter"' in shell.stdout
    assert re.search(r"^\d+$", shell.stdout, re.MULTILINE), shell.stdout
