"""The shell's commands, run as ``sengen shell -c`` runs them, in a kernel in this process
(runtime.md §9.1; acceptance S1, S2, S6 of §11).

Each run is a real kernel on the wall clock (or stepped by the shell through the master clock)
with a producer of ``kbus`` sensors at 100 Hz and a shell at 100 Hz; a watchdog bounds every run.
The scripted mode stops at the first failure and exits 1, so each error case is a run of its own.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from types import ModuleType

import pytest
from kernel_support import make_package, producer

from sengen.runtime import Duration
from sengen.runtime.components.shell.commands import COMMANDS
from sengen.runtime.components.shell.launch import shell_of
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel, PreloadError
from sengen.runtime.objects.objects import object_id

WATCHDOG = 20.0  # seconds: a run that is still going then is a failure (exit 99)


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_shell")


def system(impls: ModuleType, shell: str = "", kernel: str = "") -> str:
    """Sensors s1 (counting), s2 and boiler.temp (still) on local.b; a shell opening local.b."""
    return (
        kernel
        + "load:\n  - name: shell\n    freqHz: 100\n    open: [local.b]\n"
        + "".join(f"    {line}\n" for line in shell.splitlines())
        + "build:\n"
        + producer(
            impls,
            "{name: s1, class: kbus.Counting, bus: local.b, serial: 15}\n"
            "{name: s2, class: kbus.Still, bus: local.b, serial: 7, reading: 2.5}\n"
            "{name: boiler.temp, class: kbus.Still, bus: local.b, serial: 3}",
        )
    )


def run_shell(
    capsys: pytest.CaptureFixture[str], yaml_text: str, commands: str, wait: str = "2 s"
) -> tuple[int, str, str]:
    kernel = Kernel(load_config_text(yaml_text))
    shell = shell_of(kernel)
    assert shell is not None
    shell.use_script(commands, Duration.parse(wait))
    watchdog = threading.Timer(WATCHDOG, kernel.request_stop, (99,))
    watchdog.start()
    try:
        code = kernel.run()
    finally:
        watchdog.cancel()
        watchdog.join()
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# -- reading, calling, setting -----------------------------------------------------------------


def test_calls_reads_and_sets_print_their_results(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    script = """
        s2.add 2, 40
        s2.reading
        s1.serial
        s2.setpoint = 4.5
        s2.setNextMode 'manual'
        s2.add -7, 3
        sleep 50 ms
        s2.setpoint
        s2.mode
        local.b.boiler.temp.serial
    """
    code, out, err = run_shell(capsys, system(impls), script)
    assert (code, err) == (0, "")
    assert out.splitlines() == ["42", "2.5", "15", "-4", "4.5", '"manual"', "3"]


def test_print_shows_every_property_and_the_last_commit(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "s2.print")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "local.b.s2"
    rows = dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in lines[1:])
    assert rows["serial"] == "7" and rows["reading"] == "2.5" and rows["mode"] == '"idle"'
    assert rows["limits"] == '{"low": 0.0, "high": 0.0}'
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}", rows["last commit"])


def test_a_string_argument_may_be_written_unquoted(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_shell(capsys, system(impls), "s2.fail it went wrong")
    assert code == 1
    assert err.strip() == "call error: ValueError: it went wrong"


def test_info_of_an_object_lists_values_categories_and_members(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "info s2")
    assert code == 0
    assert re.search(r"^object\s+local\.b\.s2$", out, re.M)
    assert re.search(rf"^id\s+{object_id('local.b.s2'):#018x}$", out, re.M)
    assert re.search(r"^class\s+kbus\.Sensor$", out, re.M)
    assert re.search(r"^owner\s+producer \(local\)$", out, re.M)
    assert re.search(r"^\s+serial\s+7\s+u32\s+static$", out, re.M)
    assert re.search(r"^\s+setpoint\s+0\.0\s+f64\s+writable$", out, re.M)
    assert re.search(r"^\s+reading\s+2\.5\s+f64\s+dynamic$", out, re.M)
    assert "  add(x: i32, y: i32) -> i64\n" in out
    assert "  peek() -> f64  [const]\n" in out
    assert "  twice(x: i32) -> i32  [local]\n" in out
    assert "  ticked(count: u32)\n" in out


def test_info_of_types(impls: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_shell(capsys, system(impls), "info kbus.Limits; info kbus.Mode")
    assert code == 0
    assert out.splitlines() == [
        "struct kbus.Limits",
        "  low   f64",
        "  high  f64",
        "enum kbus.Mode",
        "  idle       0",
        "  automatic  1",
        "  manual     2",
    ]


# -- sources -------------------------------------------------------------------------------------


def test_ls_groups_objects_by_session_bus_and_dots(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    # ``s1.serial`` first: the script waits until the objects are discovered.
    code, out, _ = run_shell(capsys, system(impls), "s1.serial; s2.serial; boiler.temp.a; ls")
    assert code == 0
    tree = out.splitlines()[3:]
    assert tree[:2] == ["local", "  b"]
    assert [line.split() for line in tree[2:6]] == [
        ["s1", "kbus.Sensor", "local"],
        ["s2", "kbus.Sensor", "local"],
        ["boiler"],
        ["temp", "kbus.Sensor", "local"],
    ]
    # The kernel's bus, never opened. The kernel component publishes its objects from its own
    # thread, started with the group's other components, so on a busy machine the script can get
    # here first: then the bus is not detected yet, and not listed.
    assert [line.split() for line in tree[6:]] in (
        [["kernel", "(detected,", "not", "open)"]],
        [],
    )
    assert tree[4].startswith("    boiler") and tree[5].startswith("      temp")


def test_open_a_session_opens_each_of_its_buses_as_it_is_detected(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "close local.b; open local; s1.serial")
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == ["closed local.b", "watching session local"]
    assert sorted(line for line in lines if line.startswith("opened")) == [
        "opened local.b",
        "opened local.kernel",
    ]
    assert "detected local.kernel.api" in lines and lines[-1] == "15"


def test_named_queries_are_sources_of_their_own(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    script = """
        query hot "SELECT kbus.Sensor FROM local.b WHERE serial > 5"
        hot.s1.serial
        hot.s2.serial
        src
        ls hot
        close local.b
        src
        close hot
        src
    """
    code, out, _ = run_shell(capsys, system(impls), script)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "opened hot"
    detected = sorted(line for line in lines if line.startswith("detected"))
    assert detected == ["detected hot.s1", "detected hot.s2"]  # boiler.temp (serial 3) is not
    rest = [line for line in lines[1:] if not line.startswith("detected")]
    query = "SELECT kbus.Sensor FROM local.b WHERE serial > 5"
    assert rest[:2] == ["15", "7"]
    assert [line.split(maxsplit=1) for line in rest[2:4]] == [
        ["local.b", "SELECT * FROM local.b"],
        ["hot", query],
    ]
    assert rest[4] == f"hot  ({query})"
    assert [line.split() for line in rest[5:7]] == [
        ["s1", "kbus.Sensor", "local"],
        ["s2", "kbus.Sensor", "local"],
    ]
    assert rest[7:] == ["closed local.b", f"hot  {query}", "closed hot", "no open sources"]


def test_open_announces_what_it_detects(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_shell(capsys, system(impls), "open local.kernel; api.getConfig")
    assert code == 0
    assert out.splitlines() == [
        "opened local.kernel",
        "detected local.kernel.api",
        '{"runMode": "realTime", "clockMaster": false, "clockName": "clock",'
        ' "clockBus": "local.kernel"}',
    ]


def test_many_detections_print_one_line(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    many = "\n".join(
        f"{{name: n{i}, class: kbus.Still, bus: local.many, serial: {i}}}" for i in range(51)
    )
    text = system(impls) + producer(impls, many, name="crowd")
    code, out, _ = run_shell(capsys, text, "open local.many; n50.serial")
    assert code == 0
    assert out.splitlines() == ["opened local.many", "detected 51 objects in local.many", "50"]


# -- listening -----------------------------------------------------------------------------------


def test_listen_and_watch_print_until_stopped(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    script = (
        "listen s1.ticked; watch s1.a; sleep 150 ms; unlisten s1; unwatch; s2.peek; sleep 50 ms"
    )
    code, out, _ = run_shell(capsys, system(impls), script)
    assert code == 0
    lines = out.splitlines()
    assert lines[:2] == ["listening to local.b.s1.ticked", "watching local.b.s1.a"]
    stop = lines.index("stopped listening to s1")
    assert lines[stop : stop + 3] == ["stopped listening to s1", "stopped watching all", "2.5"]
    assert len(lines) == stop + 3  # nothing printed once stopped
    ticked = r"\[[\d:.]+\] local\.b\.s1\.ticked\(count=(\d+)\)"
    events = [re.fullmatch(ticked, x) for x in lines[2:stop]]
    changes = [re.fullmatch(r"\[[\d:.]+\] local\.b\.s1\.a = (\d+)", x) for x in lines[2:stop]]
    counts = [int(m.group(1)) for m in events if m]
    assert len(counts) >= 2
    assert counts == list(range(counts[0], counts[0] + len(counts)))  # every emission, in order
    values = [int(m.group(1)) for m in changes if m]
    assert values and values == sorted(set(values))  # the latest value at each drain
    assert all(e or c for e, c in zip(events, changes, strict=True))


# -- the master clock ------------------------------------------------------------------------------


def test_step_advance_and_time_drive_the_master_clock(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    kernel = "kernel: {runMode: virtualTime, clockMaster: true}\n"
    script = """
        open local.kernel
        time
        step
        listen s1.ticked
        s1.reading
        step 2
        s1.reading
        advance 30 ms
        time
    """
    code, out, _ = run_shell(capsys, system(impls, kernel=kernel), script)
    assert code == 0
    lines = [x for x in out.splitlines() if not x.startswith(("opened", "detected"))]
    # 100 Hz: the first step runs every component at t = 0; steps are 10 ms apart.
    assert lines == [
        "time 0.000000000",
        "time 0.010000000",
        "listening to local.b.s1.ticked",
        "1.0",
        "[0.010000000] local.b.s1.ticked(count=2)",
        "[0.020000000] local.b.s1.ticked(count=3)",
        "time 0.030000000",
        "3.0",
        "[0.030000000] local.b.s1.ticked(count=4)",
        "[0.040000000] local.b.s1.ticked(count=5)",
        "[0.050000000] local.b.s1.ticked(count=6)",
        "time 0.060000000",
        "time 0.060000000",
    ]


def test_help_history_and_clear(impls: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_shell(capsys, system(impls), "s1.serial; clear; help; history")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "15"  # clear writes nothing when the output is not a terminal
    usages = [line.split("  ")[0] for line in lines[1 : 1 + len(COMMANDS)]]
    assert usages == [c.usage for c in COMMANDS.values()]
    assert lines[-3:] == ["   1  s1.serial", "   2  clear", "   3  help"]


# -- ending ----------------------------------------------------------------------------------------


def test_shutdown_stops_before_the_remaining_commands(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_shell(capsys, system(impls), "s1.serial; shutdown; s2.serial")
    assert (code, out, err) == (0, "15\n", "")


def test_an_empty_script_ends_at_once(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_shell(capsys, system(impls), " ; \n") == (0, "", "")


# -- errors: a clear message, exit 1, nothing after the failure runs ----------------------------

ERRORS = [
    ("nosuch.add 1, 2", "could not find object nosuch"),
    ("info nosuch", "could not find object or type nosuch"),
    ("listen nosuch", "could not find object nosuch"),
    (
        "s2.add 'a', 2",
        "error parsing the arguments: argument 'x': expected i32, got 'a'\n"
        "  add(x: i32, y: i32) -> i64",
    ),
    ("s2.add 1", "not enough arguments for method add\n  add(x: i32, y: i32) -> i64"),
    ("s2.add 1, 2, 3", "too many arguments for method add\n  add(x: i32, y: i32) -> i64"),
    ("s2.peek 1", "the method peek takes no arguments\n  peek() -> f64"),
    (
        "s2.add 1,, 2",
        "error parsing the arguments: unexpected ',' at column 3\n  add(x: i32, y: i32) -> i64",
    ),
    (
        "s2.add 3000000000, 1",
        "error parsing the arguments: argument 'x': value 3000000000 does"
        " not fit in i32\n  add(x: i32, y: i32) -> i64",
    ),
    ("s2.launch", "property or method 'launch' not found in local.b.s2 (kbus.Sensor)"),
    ("s2.launch 1", "method 'launch' not found in local.b.s2 (kbus.Sensor)"),
    ("s2.twice 2", "calling local methods is not permitted across component boundaries (twice)"),
    ("s2.fail 'boom'", "call error: ValueError: boom"),
    ("s2.reading = 3.0", "property 'reading' of 'local.b.s2' is not writable"),
    ("s2.serial = 3", "property 'serial' of 'local.b.s2' is not writable"),
    ("s2.setpoint = 'high'", "invalid value for property 'setpoint': expected f64, got 'high'"),
    (
        "s2.setNextMode 'fast'",
        "invalid value for property 'mode': invalid value 'fast'"
        " (expected one of idle, automatic, manual)",
    ),
    ("s2.setpoint = ", "error parsing the value: expected a value"),
    ("watch s2.serial", "property 'serial' of local.b.s2 is static: it never changes"),
    ("listen s2.boom", "event 'boom' not found in local.b.s2"),
    ("unlisten", "not listening to anything"),
    ("open local.", "incomplete bus address 'local.'"),
    ("open 1x", "invalid session name '1x'"),
    ("open local.b", "source 'local.b' is already open"),
    ("close nothing", "no open source 'nothing'"),
    ('query q.1 "SELECT * FROM local.b"', "invalid query name 'q.1' (no spaces or dots)"),
    (
        'query q "SELECT * FRM local.b"',
        "expected 'FROM', found name 'FRM' at column 10\n  SELECT * FRM local.b\n           ^",
    ),
    ("frobnicate", "unknown command 'frobnicate': expected a command or <object>.<member>"),
    ("step", "no master clock on the open sources (open the clock bus, e.g. 'open local.kernel')"),
    ("step many", "step takes a number of steps, got 'many'"),
    ("advance 3", "advance: Duration needs a unit, e.g. '100 ms'"),
    (
        "sleep soon",
        "sleep: invalid Duration 'soon' (expected a number followed by ns, us, ms, s, min or h)",
    ),
]


@pytest.mark.parametrize(("command", "message"), ERRORS, ids=[c for c, _ in ERRORS])
def test_a_failing_command_prints_its_error_and_stops_the_script(
    impls: ModuleType, capsys: pytest.CaptureFixture[str], command: str, message: str
) -> None:
    code, out, err = run_shell(capsys, system(impls), f"{command}; s1.serial", wait="300 ms")
    assert code == 1
    assert err == message + "\n"
    assert "15" not in out  # the command after the failure never ran


def test_two_objects_of_one_name_must_be_named_by_their_path(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    query = "query: [{name: q, selection: 'SELECT * FROM local.c'}]"
    text = system(impls, shell=query) + producer(
        impls, "{name: s1, class: kbus.Still, bus: local.c, serial: 99}", name="other"
    )
    code, out, err = run_shell(capsys, text, "q.s1.serial; local.b.s1.serial; s1.serial")
    assert code == 1
    assert out == "99\n15\n"
    assert err == "object name 's1' is ambiguous: local.b.s1, q.s1\n"


def test_a_result_that_never_comes_fails_after_the_wait(
    impls: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    # Under virtual time, a call on a stepped object runs only at that object's next step.
    kernel = "kernel: {runMode: virtualTime, clockMaster: true}\n"
    script = "open local.kernel; step; s1.add 1, 2; s1.serial"
    code, out, err = run_shell(capsys, system(impls, kernel=kernel), script, wait="300 ms")
    assert code == 1
    assert err == "call error: no result from local.b.s1.add in time\n"
    assert "15" not in out


# -- configuration ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("open: [nodot]", "load[0].open[0]: invalid bus address 'nodot'"),
        ("open: [local.b, local.b]", "load[0].open: source 'local.b' is opened twice"),
        (
            "query: [{name: a.b, selection: 'SELECT * FROM local.b'}]",
            "load[0].query[0].name: invalid query name 'a.b' (no spaces or dots)",
        ),
        (
            "query: [{name: q, selection: 'SELECT * FROM *'}]",
            "load[0].query[0].selection: a subscription needs a bus",
        ),
        ("prompt_: x", "load[0].prompt_: unknown key"),
    ],
)
def test_configuration_errors_name_the_key(entry: str, message: str) -> None:
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(f"load:\n  - name: shell\n    {entry}\n"))
    assert any(message in problem for problem in caught.value.problems), caught.value.problems
