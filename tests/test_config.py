"""The configuration front half of ``sengen run`` (runtime.md §1): data-driven cases and units.

Each ``tests/config_cases/<case>/`` folder holds ``config.yaml`` (plus the files it includes) and
``expected.txt``: every problem and warning, exactly, in output order, one per line as
``error|warning|info <file>: <key path>: <message>``. An optional ``env.txt`` sets variables
(``NAME=VALUE``) or unsets them (``-NAME``) for the case. The case is loaded from inside its
folder, so file names are relative to it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sengen.runtime.kernel.config import (
    BuildEntry,
    Config,
    ConfigurationError,
    KernelConfig,
    LoadEntry,
    LogConfig,
    ObjectEntry,
    QueueConfig,
    bus_address_problem,
    load_config,
    load_config_text,
    object_name_problem,
    substitute_env,
)
from sengen.runtime.objects.duration import Duration

CASES_DIR = Path(__file__).resolve().parent / "config_cases"
CASES = sorted(p.name for p in CASES_DIR.iterdir() if p.is_dir())
_LINE = re.compile(r"(error|warning|info) [^:]+: .+")


def _apply_env(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = folder / "env.txt"
    if env.exists():
        for item in env.read_text(encoding="utf-8").split():
            if item.startswith("-"):
                monkeypatch.delenv(item[1:], raising=False)
            else:
                name, value = item.split("=", 1)
                monkeypatch.setenv(name, value)


def _load_case(case: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Config | None, list[str]]:
    folder = CASES_DIR / case
    _apply_env(folder, monkeypatch)
    monkeypatch.chdir(folder)
    try:
        config = load_config("config.yaml")
    except ConfigurationError as exc:
        lines = [f"error {p}" for p in exc.problems]
        lines += [f"warning {w}" for w in exc.warnings] + [f"info {i}" for i in exc.infos]
        assert exc.problems, "a ConfigurationError must hold at least one problem"
        return None, lines
    return config, [f"warning {w}" for w in config.warnings] + [f"info {i}" for i in config.infos]


@pytest.mark.parametrize("case", CASES)
def test_config_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = (CASES_DIR / case / "expected.txt").read_text(encoding="utf-8").splitlines()
    config, found = _load_case(case, monkeypatch)
    assert "\n".join(found) == "\n".join(expected)
    assert (config is None) == any(line.startswith("error ") for line in expected)
    for line in found:
        assert "Traceback" not in line and "pydantic" not in line.lower(), line
        assert "For further information" not in line and "Input should" not in line, line


def test_case_folders_are_well_formed() -> None:
    assert len(CASES) >= 15
    for name in CASES:
        assert (CASES_DIR / name / "config.yaml").is_file(), name
        lines = (CASES_DIR / name / "expected.txt").read_text(encoding="utf-8").splitlines()
        for line in lines:
            assert _LINE.fullmatch(line), f"{name}: malformed expected line {line!r}"


# Every message of the runtime.md §1.10 catalogue that this front half reports (step 6, imports
# and classes, belongs to the kernel), plus the warnings, must be asserted by some case.
CATALOGUE = [
    "cannot read configuration file '",
    "invalid YAML: ",
    "the configuration must be a map",
    "invalid include (expecting a file name or a list of file names)",
    "included file '",
    "include cycle: a.yaml -> b.yaml -> a.yaml",
    "environment variable SENGEN_CFG_UNSET_A not found and no default value provided",
    "invalid value 'fast' (expected one of realTime, virtualTime, virtualTimeRunning,"
    " startAndStop)",
    "unknown key 'runmode' (did you mean 'runMode'?)",
    "components need a name",
    "pipelines need a name",
    "component 'shell' is repeated in the load section",
    "component 'p' is repeated in the build section",
    "component 'shell' is defined in both load and build",
    "invalid group 0 (groups start at 1)",
    "invalid frequency value '0' for pipeline 'zero'",
    "missing imports",
    "no objects defined for pipeline 'zero'",
    "missing object name",
    "cannot create objects with empty names",
    "object names cannot contain whitespace ('a b')",
    "repeated object name 'ok' in component 'neg'",
    "missing class name",
    "invalid bus address 'x'",
    "incomplete bus address 's.'",
    "invalid value 'dropAll' (expected one of dropOldest, dropNewest)",
    "maxSize must be >= 0",
    "clockMaster cannot be used with runMode virtualTimeRunning",
    "build[1].freqHz: component frequency not set, defaulting to 30 Hz",
    "unknown top-level key, ignored",
    "has no bus: it will not be published or updated",
    "ignoring Sen key 'kernel.crashReportDisabled' (not supported by sengen)",
]


@pytest.mark.parametrize("message", CATALOGUE)
def test_catalogue_row_is_covered(message: str) -> None:
    texts = [(CASES_DIR / c / "expected.txt").read_text(encoding="utf-8") for c in CASES]
    assert any(message in text for text in texts), message


def test_missing_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError) as info:
        load_config("nothere.yaml")
    assert info.value.problems == [
        "nothere.yaml: cannot read configuration file 'nothere.yaml': No such file or directory"
    ]
    assert isinstance(info.value, ValueError)
    assert str(info.value) == info.value.problems[0]


# -- models and their defaults ---------------------------------------------------------------------


def test_empty_configuration_defaults() -> None:
    config = load_config_text("")
    kernel = config.kernel
    assert kernel.run_mode == "realTime"
    assert kernel.app_name == ""
    assert kernel.bus == "local.kernel"
    assert kernel.clock_bus == "local.kernel"
    assert kernel.clock_name == "clock"
    assert kernel.clock_master is False
    assert kernel.log_config.level == "info" and kernel.log_config.file is None
    assert kernel.shutdown_timeout == Duration(5 * 10**9)
    assert config.load == [] and config.build == [] and config.warnings == []


def test_model_defaults() -> None:
    queue = QueueConfig()
    assert (queue.eviction_policy, queue.max_size) == ("dropNewest", 0)
    assert LogConfig().level == "info"
    assert KernelConfig().run_mode == "realTime"
    entry = LoadEntry.model_validate({"name": "shell"})
    assert entry.group == 1 and entry.component is None
    assert entry.in_queue == QueueConfig() and entry.out_queue == QueueConfig()
    assert entry.component_config() == {"name": "shell", "group": 1}
    obj = ObjectEntry.model_validate({"name": "o", "class": "m.C", "x": None})
    assert obj.bus is None and obj.class_name == "m.C" and obj.properties == {"x": None}


def test_frequency_default_and_period() -> None:
    text = "build: [{name: p, imports: [m], objects: [{name: o, class: m.C, bus: a.b}]}]"
    config = load_config_text(text, "c.yaml")
    (entry,) = config.build
    assert entry.freq_hz == 30.0 and entry.period_ns == 33_333_333
    assert config.warnings == [
        "c.yaml: build[0].freqHz: component frequency not set, defaulting to 30 Hz"
    ]
    explicit = BuildEntry.model_validate(
        {"name": "p", "freqHz": 3, "imports": ["m"], "objects": [{"name": "o", "class": "C"}]}
    )
    assert explicit.period_ns == 333_333_333 and explicit.group == 1


def test_null_restores_default() -> None:
    config = load_config_text("kernel: {runMode: null, bus: null, logConfig: null}")
    assert config.kernel.run_mode == "realTime" and config.kernel.bus == "local.kernel"


def test_log_level_aliases_and_file_level() -> None:
    text = "kernel: {logConfig: {level: warning, file: out.log}}"
    log = load_config_text(text).kernel.log_config
    assert log.level == "warn"
    assert log.file is not None and log.file.path == "out.log"
    assert log.file.level == "warn" and log.file.truncate is False


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("local.kernel", None),
        ("_s-1.b_2", None),
        ("x", "invalid bus address 'x'"),
        ("a.b.c", "invalid bus address 'a.b.c'"),
        ("1a.b", "invalid bus address '1a.b'"),
        ("s.", "incomplete bus address 's.'"),
        (".b", "incomplete bus address '.b'"),
    ],
)
def test_bus_addresses(address: str, problem: str | None) -> None:
    assert bus_address_problem(address) == problem


def test_object_names() -> None:
    assert object_name_problem("boiler.temp") is None
    assert object_name_problem("") == "cannot create objects with empty names"
    assert object_name_problem("a\tb") == "object names cannot contain whitespace ('a\tb')"


# -- @env (runtime.md §1.2) ------------------------------------------------------------------------


def test_env_forms() -> None:
    env = {"V": "val", "EMPTY": ""}
    text, missing = substitute_env(
        "a: @env(V)\nb: @env(U,d)\nc: @env(U,  d e )\nd: @env(EMPTY, x)\ne: [@env(U,)]\n", env
    )
    assert text == "a: val\nb: d\nc: d e\nd: \ne: []\n" and missing == []


def test_env_backslashes_and_comments() -> None:
    env = {"V": "val"}
    text, missing = substitute_env(
        "a: \\@env(V)\nb: \\\\@env(V)\nc: \\\\\\@env(V)\n  # @env(NOPE)\n", env
    )
    assert text == "a: @env(V)\nb: \\val\nc: \\@env(V)\n  # @env(NOPE)\n"
    assert missing == []
    assert substitute_env("x: @env(NOPE) @env(NOPE) @env(NOPE2)", {})[1] == ["NOPE", "NOPE2"]


def test_env_typed_by_yaml_and_in_includes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SENGEN_CFG_GROUP", "3")
    monkeypatch.setenv("SENGEN_CFG_INC", "inc.yaml")
    monkeypatch.delenv("SENGEN_CFG_UNSET", raising=False)
    (tmp_path / "inc.yaml").write_text("kernel: {appName: '@env(SENGEN_CFG_UNSET, from inc)'}\n")
    (tmp_path / "config.yaml").write_text(
        "include: @env(SENGEN_CFG_INC)\nload: [{name: a, group: @env(SENGEN_CFG_GROUP)}]\n"
        "kernel: {bus: '\\@env(X)'}\n"
    )
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError) as info:
        load_config("config.yaml")
    assert info.value.problems == ["config.yaml: kernel.bus: invalid bus address '@env(X)'"]
    (tmp_path / "config.yaml").write_text(
        "include: @env(SENGEN_CFG_INC)\nload: [{name: a, group: @env(SENGEN_CFG_GROUP)}]\n"
    )
    config = load_config("config.yaml")
    assert config.load[0].group == 3
    assert config.kernel.app_name == "from inc"


# -- include and merging (runtime.md §1.3) ---------------------------------------------------------


def test_later_wins_named_merge_and_provenance(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.yaml").write_text(
        "include: nested.yaml\nkernel: {appName: a, runMode: virtualTime}\n"
        "load: [{name: shell, group: 2, open: [x]}, {name: transport}]\n"
        "build: [{name: p, freqHz: 10, imports: [m], objects: [{name: o, class: m.C, n: 1}]}]\n"
    )
    (tmp_path / "sub" / "nested.yaml").write_text("kernel: {appName: z, clockName: nested}\n")
    (tmp_path / "config.yaml").write_text(
        "include: [sub/base.yaml]\nkernel: {appName: b}\n"
        "load: [{name: shell, open: [y]}, {name: recorder, group: 3}]\n"
        "build: [{name: p, objects: [{name: o, n: 2}, {name: q, class: m.D}]}]\n"
    )
    monkeypatch.chdir(tmp_path)
    config = load_config("config.yaml")
    assert config.kernel.app_name == "b"
    assert config.kernel.run_mode == "virtualTime" and config.kernel.clock_name == "nested"
    assert [e.name for e in config.load] == ["shell", "transport", "recorder"]
    shell = config.load[0]
    assert shell.group == 2 and shell.settings == {"open": ["y"]}
    (pipeline,) = config.build
    assert pipeline.freq_hz == 10.0 and pipeline.imports == ["m"]
    assert [(o.name, o.class_name, o.properties) for o in pipeline.objects] == [
        ("o", "m.C", {"n": 2}),
        ("q", "m.D", {}),
    ]
    assert "include" not in config.tree
    assert config.warnings == [
        "sub/base.yaml: build[0].objects[0]: object 'o' has no bus: it will not be published or"
        " updated",
        "config.yaml: build[0].objects[1]: object 'q' has no bus: it will not be published or"
        " updated",
    ]
    assert "appName: b" in config.to_yaml()


# -- the complete example (runtime.md §1.11) -------------------------------------------------------


def test_complete_example_values(monkeypatch: pytest.MonkeyPatch) -> None:
    config, _ = _load_case("complete_example", monkeypatch)
    assert config is not None
    kernel = config.kernel
    assert kernel.run_mode == "virtualTime" and kernel.app_name == "plant-demo"
    assert kernel.clock_master is True and kernel.clock_bus == "plant.clocks"
    assert kernel.bus == "local.kernel"
    assert kernel.log_config.level == "debug"
    log_file = kernel.log_config.file
    assert log_file is not None
    assert (log_file.path, log_file.level, log_file.truncate) == ("logs/plant.log", "debug", True)
    assert [(e.name, e.group) for e in config.load] == [
        ("transport", 1),
        ("shell", 2),
        ("recorder", 3),
    ]
    assert config.load[1].component_config() == {
        "name": "shell",
        "group": 2,
        "open": ["plant.sensors", "plant.clocks"],
    }
    recorder = config.load[2].settings
    assert recorder["freqHz"] == 10 and isinstance(recorder["recordings"], list)
    sensors, controller = config.build
    assert (sensors.group, sensors.freq_hz, sensors.period_ns) == (3, 50.0, 20_000_000)
    assert sensors.imports == ["gen.plant", "plant_impl"]
    assert sensors.component_config() == {"name": "sensors", "freqHz": 50.0, "seed": 1234}
    assert sensors.in_queue == QueueConfig.model_validate(
        {"evictionPolicy": "dropOldest", "maxSize": 1000}
    )
    assert sensors.out_queue == QueueConfig()
    (temp,) = sensors.objects
    assert (temp.name, temp.class_name, temp.bus) == (
        "boiler.temp",
        "plant_impl.TemperatureSensor",
        "plant.sensors",
    )
    assert temp.properties == {
        "location": "hall A",
        "noiseStdDev": 0.2,
        "samplePeriod": "20 ms",
        "alarm": {"threshold": 95.0, "hysteresis": 2.5},
    }
    assert (controller.group, controller.freq_hz, controller.period_ns) == (4, 30.0, 33_333_333)
    assert controller.objects[0].properties == {"mode": "automatic"}


def test_complete_example_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    _apply_env(CASES_DIR / "complete_example", monkeypatch)
    monkeypatch.setenv("PLANT_MODE", "virtualTimeRunning")
    monkeypatch.chdir(CASES_DIR / "complete_example")
    with pytest.raises(ConfigurationError) as info:
        load_config("config.yaml")
    assert info.value.problems == [
        "config.yaml: kernel.clockMaster: clockMaster cannot be used with runMode"
        " virtualTimeRunning"
    ]
