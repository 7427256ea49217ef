"""The shell's pieces without a kernel: what it reads (command lists, JSON values), what Tab
completion offers, and the configuration ``sengen shell`` builds (runtime.md §9.1, §1.12;
acceptance S3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from kernel_support import make_package
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from sengen.runtime.components.shell.commands import COMMANDS
from sengen.runtime.components.shell.completion import Index, candidates, names_of
from sengen.runtime.components.shell.launch import shell_config
from sengen.runtime.components.shell.literals import (
    LiteralError,
    parse_value,
    parse_values,
    split_commands,
)
from sengen.runtime.components.shell.prompt import ShellCompleter


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_shell_parts")


# -- what the shell reads -----------------------------------------------------------------------


def test_commands_split_on_newlines_and_semicolons_outside_quotes() -> None:
    text = "open local.b; a.say \"x; y\"\n  b.say 'it\\'s; fine' ;;\n\nls"
    assert split_commands(text) == [
        "open local.b",
        'a.say "x; y"',
        "b.say 'it\\'s; fine'",
        "ls",
    ]


def test_values_are_json_with_single_quotes_and_bare_keys() -> None:
    assert parse_values("") == []
    assert parse_values(" 1, -2.5, 1e3, \"a\\\"b\\u00e9\", 'c\\'d', true, null ") == [
        1,
        -2.5,
        1000.0,
        'a"bé',
        "c'd",
        True,
        None,
    ]
    assert parse_values("{low: 1, 'high': [2, {}], \"x\": []}") == [
        {"low": 1, "high": [2, {}], "x": []}
    ]
    assert type(parse_value("3")) is int and type(parse_value("3.0")) is float


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 2", "unexpected text at column 3"),
        ('"open', "unterminated string starting at column 1"),
        ('"\\q"', "invalid escape '\\q' at column 3"),
        ("fast", "unexpected 'f' at column 1 (strings need quotes)"),
        ("[1, 2", "expected ',' or ']' at column 6, found the end"),
        ("{a: 1 b: 2}", "expected ',' or '}' at column 7, found 'b'"),
        ("{1: 2}", "expected a key at column 2"),
        ("", "expected a value"),
    ],
)
def test_malformed_values_name_the_column(text: str, message: str) -> None:
    with pytest.raises(LiteralError) as caught:
        parse_value(text)
    assert str(caught.value) == message


# -- completion ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index(impls: ModuleType) -> Index:
    names = names_of(impls.Counting.META)
    return Index(
        commands=tuple(COMMANDS),
        sources=("local.b", "hot"),
        objects={
            "local.b.s1": names,
            "local.b.boiler.temp": names,
            "hot.s1": names,
            "boiler.temp": names,
        },
        buses=("local.b", "local.kernel"),
        types=("kbus.Limits", "kbus.Mode", "kbus.Sensor"),
        listening=("local.b.s1", "local.b.s1.ticked"),
    )


@pytest.mark.parametrize(
    ("line", "offered"),
    [
        ("h", ["help", "history", "hot.", "hz"]),
        ("lo", ["local."]),
        ("local.b.", ["local.b.boiler.", "local.b.s1."]),
        ("local.b.bo", ["local.b.boiler."]),
        ("local.b.boiler.", ["local.b.boiler.temp."]),
        ("bo", ["boiler."]),
        ("local.b.s1.re", ["local.b.s1.reading"]),
        ("local.b.s1.p", ["local.b.s1.peek", "local.b.s1.print"]),
        # Setters only for writable properties: setpoint and mode, not reading or limits.
        ("local.b.s1.setN", ["local.b.s1.setNextMode", "local.b.s1.setNextSetpoint"]),
        ("info local.b.b", ["local.b.boiler."]),
        ("info local.b.boiler.", ["local.b.boiler.temp"]),
        ("info kbus.", ["kbus.Limits", "kbus.Mode", "kbus.Sensor"]),
        ("listen local.b.s1", ["local.b.s1", "local.b.s1."]),
        ("listen local.b.s1.", ["local.b.s1.noted", "local.b.s1.pinged", "local.b.s1.ticked"]),
        (
            "watch hot.s1.",
            [f"hot.s1.{p}" for p in ("a", "b", "limits", "mode", "reading", "setpoint")],
        ),
        ("echo hot.s1.re", ["hot.s1.reading"]),
        ("bw local.b.s", ["local.b.s1", "local.b.s1."]),
        ("unlisten local.b.s1.", ["local.b.s1.ticked"]),
        ("unwatch ", []),
        ("open local.k", ["local.kernel"]),
        ("close h", ["hot"]),
        ("help li", ["listen"]),
        ("info local.b.s1 ", []),
        ("frobnicate x", []),
    ],
)
def test_completion_offers_group_by_group(index: Index, line: str, offered: list[str]) -> None:
    assert candidates(index, line)[1] == offered


def test_the_completer_replaces_the_word_before_the_cursor(index: Index) -> None:
    completer = ShellCompleter(lambda: index)
    document = Document("info local.b.bo")
    found = list(completer.get_completions(document, CompleteEvent(completion_requested=True)))
    assert [(c.text, c.start_position) for c in found] == [("local.b.boiler.", -len("local.b.bo"))]


# -- sengen shell's configuration ------------------------------------------------------------------

PIPELINE = "build:\n  - {name: p, group: 3, imports: [x], objects: [{name: o, class: x.C}]}\n"


def test_sengen_shell_merges_its_files_and_starts_the_shell_last(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(PIPELINE)
    (tmp_path / "b.yaml").write_text("load:\n  - {name: shell, open: [local.b]}\n")
    config = shell_config([tmp_path / "a.yaml", tmp_path / "b.yaml"])
    entries = {e.name: e for e in config.load}  # the preset: a transport and the shell (1.12)
    assert entries.keys() == {"transport", "shell"} and entries["transport"].group == 1
    shell = entries["shell"]
    assert (shell.name, shell.group, shell.settings) == ("shell", 3, {"open": ["local.b"]})
    assert config.kernel.log_config.level == "warn"


def test_a_file_may_place_the_shell_and_set_the_log_level(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        PIPELINE + "kernel: {logConfig: {level: debug}}\nload: [{name: shell, group: 2}]\n"
    )
    config = shell_config([tmp_path / "a.yaml"])
    assert sorted((e.name, e.group) for e in config.load) == [("shell", 2), ("transport", 1)]
    assert config.kernel.log_config.level == "debug"
    bare = shell_config([])
    assert sorted((e.name, e.group) for e in bare.load) == [("shell", 1), ("transport", 1)]
    assert not bare.build
    (tmp_path / "own.yaml").write_text("load: [{name: zenoh, rendezvous: null}]\n")
    own = shell_config([tmp_path / "own.yaml"])  # a file's own transport is the only one
    assert sorted(e.name for e in own.load) == ["shell", "zenoh"]
