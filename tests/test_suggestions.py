"""Helpful mistakes at preload and in ``sengen run`` (issue 27, item 6): "did you mean" for class,
property and component names, an abstract implementation naming its missing methods, a missing
generated package naming the command that builds it, and a file that is not a configuration.

The configuration's own keys are data-driven cases in ``tests/config_cases/suggest_*``; here each
row of a table is a configuration fragment and the exact problem line it must produce.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import sengen
from sengen.runtime.kernel.config import load_config, load_config_text
from sengen.runtime.kernel.kernel import Kernel, PreloadError
from sengen.runtime.objects.suggest import did_you_mean, dotted_suggestion, suggestion

STL = """\
package hello;

class Greeter
{
  var salutation : string [static];
  var times : u32 [static];
  var shown : u32 [static_no_config];
  fn reset();
  fn greet(name: string) -> string;
}
"""
IMPLEMENTATIONS = """\
from sgen_suggest.hello import GreeterBase


class CountingGreeter(GreeterBase):
    def reset_impl(self) -> None:
        pass

    def greet_impl(self, name: str) -> str:
        return name


class HalfGreeter(GreeterBase):
    pass


class ResetOnly(GreeterBase):
    def reset_impl(self) -> None:
        pass
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("suggest")
    (folder / "stl" / "hello").mkdir(parents=True)
    (folder / "stl" / "hello" / "greeter.stl").write_text(STL)
    assert sengen.generate([folder / "stl"], output=folder / "sgen_suggest").ok
    (folder / "suggest_impls.py").write_text(IMPLEMENTATIONS)
    sys.path.insert(0, str(folder))
    try:
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n.startswith(("suggest_impls", "sgen_suggest"))]:
            del sys.modules[name]


def _object(fragment: str) -> str:
    return textwrap.dedent(f"""\
        build:
          - name: greeters
            freqHz: 10
            imports: [sgen_suggest.hello, suggest_impls]
            objects:
              - {{name: g, bus: local.g, times: 1, salutation: hi, {fragment}}}
        """)


WHERE = "<yaml text>: build[0].objects[0]"

PRELOAD_CASES = [
    (
        _object("class: hello.CountingGreter"),
        f"{WHERE}.class: could not find class 'hello.CountingGreter' in any of the imported"
        " packages (did you mean 'hello.CountingGreeter'?)",
    ),
    (
        _object("class: hello.countinggreeter"),
        f"{WHERE}.class: could not find class 'hello.countinggreeter' in any of the imported"
        " packages (did you mean 'hello.CountingGreeter'?)",
    ),
    (
        _object("class: hello.Nothing"),
        f"{WHERE}.class: could not find class 'hello.Nothing' in any of the imported packages",
    ),
    (
        _object("class: hello.CountingGreeter, salutaton: hi"),
        f"{WHERE}: did not find any property named 'salutaton' in class 'hello.Greeter'"
        " (did you mean 'salutation'?)",
    ),
    (
        _object("class: hello.CountingGreeter, Times: 2"),
        f"{WHERE}: did not find any property named 'Times' in class 'hello.Greeter'"
        " (did you mean 'times'?)",
    ),
    (
        _object("class: hello.CountingGreeter, show: 2"),  # read-only: never suggested
        f"{WHERE}: did not find any property named 'show' in class 'hello.Greeter'",
    ),
    (
        _object("class: hello.HalfGreeter"),
        f"{WHERE}.class: class 'hello.HalfGreeter' is abstract: implement greet_impl(),"
        " reset_impl()",
    ),
    (
        _object("class: hello.ResetOnly"),
        f"{WHERE}.class: class 'hello.ResetOnly' is abstract: implement greet_impl()",
    ),
    (
        _object("class: hello.Greeter"),
        f"{WHERE}.class: class 'hello.Greeter' is abstract and cannot be instantiated",
    ),
    (
        "load: [{name: tranport}]\n",
        "<yaml text>: load[0].name: unknown component 'tranport' (did you mean 'transport'?)",
    ),
    (
        "load: [{name: nothing_like_it}]\n",
        "<yaml text>: load[0].name: unknown component 'nothing_like_it'",
    ),
    (
        "load: [{name: shell, grup: 2}]\n",
        "<yaml text>: load[0].grup: unknown key 'grup' (did you mean 'group'?)",
    ),
    (
        _object("class: hello.CountingGreeter").replace(
            "sgen_suggest.hello,", "sgen_suggest.helo,"
        ),
        "<yaml text>: build[0].imports: could not import package 'sgen_suggest.helo':"
        " ModuleNotFoundError: No module named 'sgen_suggest.helo'"
        " (did you mean 'sgen_suggest.hello'?)",
    ),
]


@pytest.mark.parametrize(("text", "problem"), PRELOAD_CASES)
def test_preload_suggests(project: Path, text: str, problem: str) -> None:
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    assert caught.value.problems == [problem]


def test_a_package_never_built_names_the_build_command(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _object("class: hello.CountingGreeter").replace("sgen_suggest.hello,", "gen_none.x,")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.yaml").write_text(text)
    inside = tmp_path / "proj" / "configs"
    inside.mkdir(parents=True)
    (inside / "config.yaml").write_text(text)
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.sengen]\nsources = ["stl"]\n')
    missing = (
        "build[0].imports: could not import package 'gen_none.x': ModuleNotFoundError:"
        " No module named 'gen_none'"
    )
    monkeypatch.chdir(plain)
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config("config.yaml"))
    assert caught.value.problems == [
        f"config.yaml: {missing}; generate it with 'sengen build STL_DIR --out gen_none' first"
    ]
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config(inside / "config.yaml"))
    assert caught.value.problems == [
        f"{inside / 'config.yaml'}: {missing}; generate it with 'sengen build' in"
        f" {(tmp_path / 'proj').resolve()} first"
    ]


@pytest.mark.parametrize(
    ("word", "candidates", "found"),
    [
        ("freqhz", ["freqHz", "imports"], "freqHz"),
        ("salutaton", ["salutation", "times"], "salutation"),
        ("colour", ["runMode", "bus"], None),
        ("freqHz", ["freqHz"], None),  # the word itself is no suggestion
        ("OPNE", ["open", "ls"], "open"),
    ],
)
def test_suggestion(word: str, candidates: list[str], found: str | None) -> None:
    assert suggestion(word, candidates) == found
    assert did_you_mean(word, candidates) == (f" (did you mean '{found}'?)" if found else "")


def test_dotted_names_compare_their_last_part_within_a_package() -> None:
    names = ["hello.Greeter", "hello.CountingGreeter", "other.Nope"]
    assert dotted_suggestion("hello.Nope", names) is None  # not 'other.Nope', not by prefix
    assert dotted_suggestion("hello.CountingGreter", names) == "hello.CountingGreeter"
    assert dotted_suggestion("helo.Greeter", names) == "hello.Greeter"


@pytest.mark.parametrize(
    ("name", "content", "lines"),
    [
        (
            "greeter.stl",
            "package hello;\n",
            [
                "greeter.stl: not a configuration: 'sengen run' takes a YAML file (.yaml); this is"
                " an STL file: compile it with 'sengen build'"
            ],
        ),
        (
            "impl.py",
            "import os\n",
            [
                "impl.py: not a configuration: 'sengen run' takes a YAML file (.yaml); this is a"
                " Python file: a configuration names its modules in 'imports:' or a 'load:' entry"
            ],
        ),
        (
            "notes.txt",
            "hello\n",
            [
                "notes.txt: the configuration must be a map",
                "notes.txt: note: 'sengen run' takes a YAML configuration file (.yaml)",
            ],
        ),
    ],
)
def test_run_refuses_a_file_that_is_not_a_configuration(
    tmp_path: Path, name: str, content: str, lines: list[str]
) -> None:
    (tmp_path / name).write_text(content)
    done = subprocess.run(
        [sys.executable, "-m", "sengen", "run", name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines() == lines
