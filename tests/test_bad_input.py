"""Hostile and mistaken input (issue 21 items 6 and 7): every case is one clear line and exit 1,
in bounded time and memory, never a traceback, an internal error or a hang. Configuration files,
the ``sengen run`` plumbing and the query parser here; the STL front end's deep chains in
test_bad_input_stl.py."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from sengen.cli.main import main
from sengen.runtime import Duration
from sengen.runtime.kernel.config import ConfigurationError, load_config, load_config_text
from sengen.runtime.kernel.config.envsubst import MAX_NESTING, EnvError, substitute_env
from sengen.runtime.kernel.config.tree import MAX_INCLUDE_DEPTH
from sengen.runtime.kernel.config.yamlread import MAX_DEPTH, MAX_VALUES
from sengen.runtime.kernel.kernel import Kernel
from sengen.runtime.kernel.query import QueryError, parse_query
from sengen.runtime.kernel.query.parse import MAX_DEPTH as QUERY_DEPTH
from sengen.runtime.kernel.query.parse import MAX_NESTING as QUERY_NESTING


def problems(text: str, name: str = "c.yaml") -> list[str]:
    with pytest.raises(ConfigurationError) as caught:
        load_config_text(text, name)
    return caught.value.problems


def run_check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """``sengen run PATH --check`` in this process: the exit code and the stderr lines."""
    code = main(["run", str(path), "--check", "-q"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err.splitlines()


# -- YAML ----------------------------------------------------------------------------------------

LAUGHS = (
    "a: &a ["
    + ",".join(["lol"] * 9)
    + "]\n"
    + "".join(
        f"{b}: &{b} [" + ",".join([f"*{a}"] * 9) + "]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


def test_nested_aliases_are_refused_within_a_budget() -> None:
    assert len(LAUGHS) < 1024  # a kilobyte that would expand to 9**9 values
    begin = time.monotonic()
    (problem,) = problems(LAUGHS)
    assert time.monotonic() - begin < 5
    assert problem.startswith(f"c.yaml: invalid YAML: more than {MAX_VALUES:,} values once")
    assert problem.endswith("(line 7, column 8)")


def test_aliases_within_the_budget_still_work() -> None:
    config = load_config_text("base: &b {appName: a, bus: s.k}\nkernel: {<<: *b, bus: s.l}\n")
    assert (config.kernel.app_name, config.kernel.bus) == ("a", "s.l")


def test_a_recursive_alias_is_named_where_it_is() -> None:
    assert problems("a: &a\n  b: *a\n") == [
        "c.yaml: invalid YAML: recursive alias '*a' (line 2, column 6)"
    ]
    assert problems("x: &x [1, [2, *x]]\n") == [
        "c.yaml: invalid YAML: recursive alias '*x' (line 1, column 15)"
    ]


def test_deep_yaml_is_reported_as_deep_not_as_a_recursive_alias() -> None:
    (problem,) = problems("a: " + "[" * 3000 + "]" * 3000 + "\n")
    assert problem == (
        f"c.yaml: invalid YAML: nested more than {MAX_DEPTH} levels deep (line 1, column"
        f" {3 + MAX_DEPTH})"
    )


def test_duplicate_keys_are_errors_with_their_position() -> None:
    assert problems("kernel:\n  appName: x\n  bus: a.b\n  appName: y\n") == [
        "c.yaml: invalid YAML: duplicate key 'appName' (line 4, column 3)"
    ]
    # A key brought in by a << merge may be overridden: that is what merges are for.
    config = load_config_text("d: &d {appName: x}\nkernel:\n  <<: *d\n  appName: y\n")
    assert config.kernel.app_name == "y"


# -- @env ----------------------------------------------------------------------------------------


def test_a_nested_env_default_is_substituted_only_when_used() -> None:
    env = {"SET": "outer", "INNER": "inner"}
    assert substitute_env("a: @env(NOPE, @env(INNER))\n", env) == ("a: inner\n", [])
    assert substitute_env("a: @env(SET, @env(UNSET_TOO))\n", env) == ("a: outer\n", [])
    assert substitute_env("a: @env(NOPE, @env(NOPE2, x y) z)\n", env) == ("a: x y z\n", [])
    assert substitute_env("a: @env(NOPE, @env(MISSING))\n", env) == ("a: \n", ["MISSING"])
    # the rules of runtime.md §1.2 around it are unchanged
    assert substitute_env(r"a: \@env(SET) \\@env(SET) @env(SET,d)", env) == (
        r"a: @env(SET) \outer outer",
        [],
    )


def test_env_defaults_nested_too_deeply_are_one_error(tmp_path: Path) -> None:
    text = "a: " + "@env(N, " * 3000 + "x" + ")" * 3000 + "\n"
    with pytest.raises(EnvError):
        substitute_env(text, {})
    assert problems(text) == [f"c.yaml: @env defaults nested more than {MAX_NESTING} deep"]


# -- files ---------------------------------------------------------------------------------------


def test_include_chains_are_bounded_and_named(tmp_path: Path) -> None:
    depth = MAX_INCLUDE_DEPTH + 10
    for i in range(depth):
        (tmp_path / f"c{i}.yaml").write_text(f"include: c{i + 1}.yaml\n")
    (tmp_path / f"c{depth}.yaml").write_text("kernel: {appName: deep}\n")
    with pytest.raises(ConfigurationError) as caught:
        load_config(tmp_path / "c0.yaml")
    last, folder = MAX_INCLUDE_DEPTH - 1, tmp_path.as_posix()
    assert caught.value.problems == [
        f"{folder}/c{last}.yaml: include: includes nested more than {MAX_INCLUDE_DEPTH} files"
        f" deep ({folder}/c0.yaml -> ... -> {folder}/c{last}.yaml -> c{last + 1}.yaml)"
    ]


@pytest.mark.parametrize(
    ("target", "reason"),
    [("sub", "is a folder, not a file"), ("/dev/zero", "is not a regular file")],
)
def test_folders_and_devices_are_named_for_what_they_are(
    tmp_path: Path, target: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub").mkdir()
    if not Path(target).is_absolute():
        target = str(tmp_path / target)
    top = tmp_path / "top.yaml"
    top.write_text(f"include: {target}\n")
    with pytest.raises(ConfigurationError) as caught:
        load_config(top)
    assert caught.value.problems == [
        f"{top.as_posix()}: include: included file '{target}' {reason}"
    ]
    code, err = run_check(Path(target), capsys)
    assert code == 1
    assert err[0] == f"{target}: cannot read configuration file '{target}': {reason}"
    assert problems("include: missing.yaml\n", str(tmp_path / "x.yaml")) == [
        f"{(tmp_path / 'x.yaml').as_posix()}: include: included file 'missing.yaml' not found"
    ]


def test_a_log_file_that_is_a_folder_is_refused_before_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "log.yaml"
    config.write_text(f"kernel:\n  logConfig:\n    file: {tmp_path}\n")
    assert run_check(config, capsys) == (
        1,
        [f"{config}: kernel.logConfig.file: '{tmp_path.as_posix()}' is a folder, not a file"],
    )
    config.write_text(f"kernel:\n  logConfig:\n    file: {{path: {config}/x.log}}\n")
    code, err = run_check(config, capsys)
    assert code == 1 and err == [
        f"{config}: kernel.logConfig.file.path: '{config}/x.log' cannot be created:"
        f" '{config}' is not a folder"
    ]
    config.write_text(f"kernel:\n  logConfig:\n    file: {tmp_path}/new/run.log\n")
    assert run_check(config, capsys) == (0, [])


# -- what sengen run loads -----------------------------------------------------------------------


def test_zenoh_values_are_refused_in_one_plain_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "z.yaml"
    cases = {
        "zenoh: {transport: {link: {tx: {lease: abc}}}}": (
            "load[0].zenoh: 'transport/link/tx/lease': Zenoh refuses \"abc\": error parsing number"
        ),
        "zenoh: {nosuchkey: 1}": "load[0].zenoh: 'nosuchkey': Zenoh refuses 1: unknown key",
        "listen: [nowhere]": 'load[0].listen: Zenoh refuses ["nowhere"]: Endpoints must be of'
        " the form <protocol>/<address>[?<metadata>][#<config>]: nowhere",
        "rendezvous: 127.0.0.1": 'load[0].rendezvous: Zenoh refuses ["127.0.0.1"]: Endpoints'
        " must be of the form <protocol>/<address>[?<metadata>][#<config>]: 127.0.0.1",
    }
    for keys, message in cases.items():
        config.write_text(f"load:\n  - name: transport\n    {keys}\n")
        assert run_check(config, capsys) == (1, [f"{config}: {message}"]), keys


def test_a_module_that_exits_at_import_is_a_preload_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "quitter_h8.py").write_text("import sys\n\nsys.exit(0)\n")
    config = tmp_path / "q.yaml"
    config.write_text(
        "build:\n  - name: c\n    freqHz: 10\n    imports: [quitter_h8]\n"
        "    objects: [{name: o, class: X, bus: s.b}]\n"
    )
    try:
        code, err = (main(["run", str(config), "--check", "-q"]), capsys.readouterr().err)
    finally:
        sys.path.remove(str(tmp_path))
    assert code == 1
    assert err.splitlines()[0] == (
        f"{config}: build[0].imports: could not import package 'quitter_h8': it called sys.exit(0)"
    )
    assert 'quitter_h8.py", line 3' in err  # the traceback points at the call


def test_the_call_timeout_is_a_kernel_key() -> None:
    assert load_config_text("").kernel.call_timeout == Duration(30 * 10**9)
    config = load_config_text("kernel: {callTimeout: 250 ms}\n")
    assert config.kernel.call_timeout == Duration(250_000_000)
    kernel = Kernel(config)
    assert {r.context.call_timeout for r in kernel.runners} == {250_000_000}
    assert {
        r.context.call_timeout
        for r in Kernel(load_config_text("kernel: {callTimeout: 0 s}\n")).runners
    } == {None}
    assert problems("kernel: {callTimeout: -1 s}\n") == [
        "c.yaml: kernel.callTimeout: callTimeout must be >= 0 (0: no default timeout)"
    ]


def test_ignored_sen_keys_are_printed_as_info(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "sen.yaml"
    config.write_text("kernel:\n  crashReportDisabled: true\n")
    assert run_check(config, capsys) == (
        0,
        [
            f"{config}: kernel.crashReportDisabled: ignoring Sen key"
            " 'kernel.crashReportDisabled' (not supported by sengen)"
        ],
    )
    config.write_text("kernel:\n  crashReportDisabled: true\n  logConfig: {level: warn}\n")
    assert run_check(config, capsys) == (0, [])


# -- queries -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "limit", "column"),
    [
        ("(" * 3000 + "x" + ")" * 3000, QUERY_NESTING, 25 + QUERY_NESTING),
        ("NOT " * 3000 + "x", QUERY_NESTING, 25 + 4 * QUERY_NESTING),
        ("- " * 3000 + "x", QUERY_NESTING, 25 + 2 * QUERY_NESTING),
        (" OR ".join(["x = 1"] * 3000), QUERY_DEPTH, None),
    ],
)
def test_deep_queries_are_refused_clearly(where: str, limit: int, column: int | None) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(f"SELECT * FROM s.b WHERE {where}")
    message, shown, caret = str(caught.value).splitlines()
    assert message.startswith(f"query nested too deeply (more than {limit} levels) at column ")
    if column is not None:
        assert message.endswith(f"column {column}")
    assert len(shown) < 120 and caret.strip() == "^"  # the long line is shown around the place


def test_long_but_shallow_queries_still_parse() -> None:
    query = parse_query("SELECT * FROM s.b WHERE " + " OR ".join(["x = 1"] * (QUERY_DEPTH - 1)))
    assert str(query).count(" OR ") == QUERY_DEPTH - 2
    nested = "(" * (QUERY_NESTING - 1) + "x" + ")" * (QUERY_NESTING - 1)
    assert str(parse_query(f"SELECT * FROM s.b WHERE {nested}")) == "SELECT * FROM s.b WHERE x"


def test_a_launch_file_is_read_with_the_same_bounds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    launch = tmp_path / "launch.yaml"
    launch.write_text(LAUGHS)
    assert main(["launch", str(launch)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{launch}: invalid YAML: more than {MAX_VALUES:,} values once aliases")
    assert main(["launch", "/dev/zero"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "/dev/zero: cannot read launch file '/dev/zero': is not a regular file"
    ]
