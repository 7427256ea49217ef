"""The ``replayer`` component (issue 23, part 5): an archive's objects published again, as
objects of classes this process does not import, with their recorded states at their recorded
times and their events; the ``Replay`` control object; the bad input it refuses.

The archives are written here with :class:`ArchiveWriter` for a class described in the test
(``replaytest.Sensor``), which no generated package defines: the replay builds it from the
archive's description alone. The values are random, so that a replay that ignored them fails.
"""

from __future__ import annotations

import json
import logging
import random
import re
from pathlib import Path
from typing import Any

import pytest

from sengen.cli.main import main
from sengen.runtime import CallError, CallFailed, Component, Duration, RunApi, TimeStamp
from sengen.runtime.archive import ArchiveWriter
from sengen.runtime.kernel.extension import ReplayState, describe, values
from sengen.runtime.sen.kernel import VirtualKernelClock
from sengen.testing import TestKernel

MS = 1_000_000
CLASS = "replaytest.Sensor"


def _prop(stl: str, py: str, type_name: str, category: str) -> list[Any]:
    return [stl, py, type_name, category, "MULTICAST", False, [], ""]


def _description() -> bytes:
    """A class with a static, two dynamic properties, a method and an event."""
    document = {
        "class": CLASS,
        "types": {},
        "classes": [
            {
                "name": CLASS,
                "description": "A sensor that only an archive knows.",
                "source": "replaytest.stl:1",
                "parent": None,
                "abstract": False,
                "instantiable": True,
                "hash": 0x5E5502,
                "properties": [
                    _prop("unit", "unit", "string", "STATIC_RW"),
                    _prop("value", "value", "f64", "DYNAMIC_RO"),
                    _prop("count", "count", "u32", "DYNAMIC_RO"),
                    _prop("gain", "gain", "f64", "DYNAMIC_RW"),
                ],
                "methods": [["reset", "reset", [], None, False, "CONFIRMED", False, False, ""]],
                "events": [["alarm", "alarm", [["level", "level", "f64", ""]], "CONFIRMED", ""]],
                "constructor": [["unit", "unit", "string", ""]],
            }
        ],
    }
    return json.dumps(document).encode()


SENSOR = describe.read(_description())


class Timeline:
    """A random recording of two sensors, and what a replay must show of it."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed)
        self.values = [round(rng.uniform(-100, 100), 6) for _ in range(6)]
        self.counts = [rng.randrange(1, 10**6) for _ in range(3)]
        self.alarm = round(rng.uniform(100, 200), 6)

    def write(self, path: Path) -> Path:
        v, c = self.values, self.counts
        with_writer = ArchiveWriter(path, name="test", selections=["SELECT * FROM local.sensors"])
        with_writer.added(0, "local/sensors/a", SENSOR, {"unit": "m", "value": v[0], "count": 0})
        with_writer.changed(10 * MS, "local/sensors/a", {"value": v[1]})
        with_writer.added(
            20 * MS, "local/sensors/b", SENSOR, {"unit": "K", "value": v[2], "count": c[0]}
        )
        with_writer.changed(30 * MS, "local/sensors/a", {"value": v[3], "count": c[1]})
        with_writer.event(30 * MS, "local/sensors/a", "alarm", {"level": self.alarm})
        with_writer.changed(40 * MS, "local/sensors/b", {"value": v[4]})
        with_writer.removed(50 * MS, "local/sensors/a")
        with_writer.changed(60 * MS, "local/sensors/b", {"value": v[5], "count": c[2]})
        with_writer.close()
        return path


class Watcher(Component):
    """Sees the replayed objects through proxies, as any component of the process would."""

    def __init__(self) -> None:
        self.alarms: list[tuple[str, float]] = []
        self.seen: dict[str, Any] = {}

    def run(self, api: RunApi) -> None:
        def added(objects: list[Any]) -> None:
            for obj in objects:
                self.seen[obj.name] = obj
                obj.events.alarm.connect(
                    lambda level, name=obj.name: self.alarms.append((name, level))
                )

        api.select("SELECT replaytest.Sensor FROM local.sensors", on_added=added)
        api.exec_loop(Duration(10 * MS))


def _replay(
    test_kernel: Any, archive: Path, extra: str = "", watcher: Watcher | None = None
) -> TestKernel:
    config = f"load:\n  - name: replayer\n    archive: '{archive}'\n{extra}"
    components = [("watcher", watcher)] if watcher is not None else []
    kernel: TestKernel = test_kernel(config, components=components)
    return kernel


def _config(stamp: TimeStamp) -> Any:
    """A time stamp as the recorder writes it (its configuration form)."""
    return values.to_config(VirtualKernelClock.META.property("time").type, stamp)  # type: ignore[union-attr]


def _state(control: Any) -> ReplayState:
    state: ReplayState = control.state
    return state


def _values(tk: TestKernel, name: str) -> tuple[float, int]:
    obj: Any = tk.object(f"local.sensors.{name}")
    return obj.value, obj.count


def test_a_replay_publishes_objects_of_a_class_it_only_knows_from_the_archive(
    test_kernel: Any, tmp_path: Path
) -> None:
    line = Timeline(random.randrange(2**32))
    watcher = Watcher()
    tk = _replay(test_kernel, line.write(tmp_path / "a.mcap"), watcher=watcher)
    tk.step()  # t = 0
    a: Any = tk.object("local.sensors.a")
    assert a.META.qualified_name == CLASS and a.unit == "m"
    assert _values(tk, "a") == (line.values[0], 0)
    tk.step()  # 10 ms
    assert _values(tk, "a") == (line.values[1], 0)
    with pytest.raises(LookupError):
        tk.object("local.sensors.b")
    tk.step(2)  # 20, 30 ms
    assert _values(tk, "b") == (line.values[2], line.counts[0])
    assert _values(tk, "a") == (line.values[3], line.counts[1])
    tk.step(3)  # 40, 50, 60 ms
    with pytest.raises(LookupError):
        tk.object("local.sensors.a")
    assert _values(tk, "b") == (line.values[5], line.counts[2])
    # The watcher's proxies saw the same (in its next drain), and the re-emitted event.
    tk.step()
    assert watcher.alarms == [("a", line.alarm)]
    assert (watcher.seen["b"].value, watcher.seen["b"].count) == (line.values[5], line.counts[2])


def test_calls_to_a_replayed_object_fail_with_a_clear_error(
    test_kernel: Any, tmp_path: Path
) -> None:
    tk = _replay(test_kernel, Timeline(1).write(tmp_path / "a.mcap"))
    tk.step()
    a: Any = tk.object("local.sensors.a")
    with pytest.raises(
        CallError,
        match=re.escape("local.sensors.a.reset' cannot be called: the object is replayed"),
    ):
        tk.call(a, "call", "reset")
    with pytest.raises(CallError, match=re.escape("local.sensors.a.gain' cannot be called")):
        tk.call(a, "set_next", "gain", 2.0)


def test_a_looping_replay_starts_again_with_the_state_of_the_start(
    test_kernel: Any, tmp_path: Path
) -> None:
    line = Timeline(random.randrange(2**32))
    tk = _replay(test_kernel, line.write(tmp_path / "a.mcap"), "    loop: true\n")
    tk.step(7)  # 0 .. 60 ms: the end, then the start again
    assert _values(tk, "a") == (line.values[0], 0)
    assert [o.name for o in tk.objects("local.sensors")] == ["a"]
    tk.step()
    assert _values(tk, "a") == (line.values[1], 0)


def test_the_control_object_seeks_pauses_advances_and_stops(
    test_kernel: Any, tmp_path: Path
) -> None:
    line = Timeline(random.randrange(2**32))
    tk = _replay(test_kernel, line.write(tmp_path / "a.mcap"), "    paused: true\n")
    tk.step()
    control: Any = tk.object("local.kernel.replay")
    assert (control.start_time, control.end_time) == (TimeStamp(0), TimeStamp(60 * MS))
    assert _state(control) is ReplayState.paused
    tk.step(3)
    assert _values(tk, "a") == (line.values[0], 0)  # paused: nothing moves
    tk.call(control, "seek", TimeStamp(40 * MS))
    tk.step()
    assert _values(tk, "a") == (line.values[3], line.counts[1])
    assert _values(tk, "b") == (line.values[4], line.counts[0])
    assert control.time == TimeStamp(40 * MS)
    tk.call(control, "advance", Duration(10 * MS))
    tk.step()
    with pytest.raises(LookupError):
        tk.object("local.sensors.a")
    assert _state(control) is ReplayState.paused
    tk.call(control, "seek", TimeStamp(10 * MS))  # back in time: a comes back
    tk.call(control, "play")
    tk.step(2)
    assert _values(tk, "a") == (line.values[3], line.counts[1])
    tk.call(control, "stop")
    tk.step()
    assert tk.objects("local.sensors") == []
    assert _state(control) is ReplayState.stopped
    with pytest.raises(CallFailed, match="outside the archive, which runs from 0 to 60000000 ns"):
        tk.call(control, "seek", TimeStamp(61 * MS))
    with pytest.raises(CallFailed, match="greater than 0"):
        tk.call(control, "set_rate", 0.0)


def test_a_bus_map_and_a_rate(test_kernel: Any, tmp_path: Path) -> None:
    line = Timeline(random.randrange(2**32))
    extra = "    rate: 2.0\n    freqHz: 100\n    busMap: {local.sensors: local.other}\n"
    tk = _replay(test_kernel, line.write(tmp_path / "a.mcap"), extra)
    tk.step(2)  # kernel 10 ms: archive 20 ms
    assert tk.objects("local.sensors") == []
    b: Any = tk.object("local.other.b")
    assert (b.value, b.count) == (line.values[2], line.counts[0])


def test_a_replay_onto_names_in_use_is_one_error_and_the_rest_runs(
    test_kernel: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    archive = Timeline(2).write(tmp_path / "a.mcap")
    watcher = Watcher()
    # A second replayer of the same archive, under another name, after the first.
    second = (
        "  - name: second\n"
        "    component: sengen.runtime.components.replayer.replayer:Replayer\n"
        f"    archive: '{archive}'\n"
        "    controlName: second\n"
    )
    tk = _replay(test_kernel, archive, second, watcher)
    tk.step(3)
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, errors
    assert "object name 'a' is already used on bus 'local.sensors'" in errors[0].getMessage()
    assert "--bus" in errors[0].getMessage()
    assert "a" in watcher.seen  # the other replay runs on


def test_an_unreadable_archive_is_one_line(test_kernel: Any, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.mcap"
    foreign.write_text("not an archive\n")
    with pytest.raises(Exception) as raised:
        _replay(test_kernel, foreign)
    assert "foreign.mcap" in str(raised.value) and "\n" not in str(raised.value)


def test_a_class_the_process_imports_is_replayed_as_its_generated_class(
    test_kernel: Any, tmp_path: Path
) -> None:
    at = random.randrange(1, 10**12)
    writer = ArchiveWriter(tmp_path / "c.mcap", name="c", selections=["SELECT * FROM local.c"])
    writer.added(0, "local/c/k", VirtualKernelClock.META, {"time": _config(TimeStamp(at))})
    writer.close()
    tk = _replay(test_kernel, tmp_path / "c.mcap")
    tk.step()
    clock = tk.object("local.c.k")
    assert isinstance(clock, VirtualKernelClock) and clock.time == TimeStamp(at)


def test_a_class_that_clashes_with_the_loaded_one_is_one_error(
    test_kernel: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    document = json.loads(describe.describe(VirtualKernelClock.META))
    for entry in document["classes"]:
        entry["hash"] += 1  # as after an STL change
    clashing = describe.read(json.dumps(document).encode())
    writer = ArchiveWriter(tmp_path / "c.mcap", name="c", selections=["SELECT * FROM local.c"])
    writer.added(0, "local/c/k", clashing, {"time": _config(TimeStamp(5))})
    writer.close()
    tk = _replay(test_kernel, tmp_path / "c.mcap")
    tk.step(2)
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert (
        len(errors) == 1
        and "class 'sen.kernel.VirtualKernelClock' of the archive differs" in errors[0]
    )
    assert tk.objects("local.c") == []


# -- sengen replay ----------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``sengen replay`` in this process; the log handlers it installs are removed after it."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    try:
        code = main(["replay", *args])
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
    return code, capsys.readouterr().err


def test_the_command_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = str(Timeline(3).write(tmp_path / "a.mcap"))
    foreign = tmp_path / "foreign.mcap"
    foreign.write_bytes(bytes(random.randrange(256) for _ in range(300)))
    empty = tmp_path / "empty.mcap"
    ArchiveWriter(empty, name="empty", selections=["SELECT * FROM local.sensors"]).close()
    for args, code, says in [
        ((str(tmp_path / "missing.mcap"),), 1, "missing.mcap"),
        ((str(foreign),), 1, "foreign.mcap"),
        ((str(empty),), 1, "the archive holds no records"),
        ((archive, "--start", "61ms"), 1, "start 61ms is past the end of the archive (60 ms)"),
        ((archive, "--start", "soon"), 2, "--start:"),
        ((archive, "--bus", "local.sensors"), 2, "--bus: expected FROM=TO"),
        ((archive, "--rate", "0"), 2, "--rate: expected a number greater than 0"),
    ]:
        found, err = _cli(capsys, *args, "--local")
        assert (found, err.count("\n")) == (code, 1), (args, err)
        assert says in err and "Traceback" not in err, (args, err)


def test_the_command_replays_to_the_end_and_a_clash_is_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = Timeline(4).write(tmp_path / "a.mcap")
    assert _cli(capsys, str(archive), "--local", "--virtual") == (0, "")
    other = tmp_path / "other.yaml"
    other.write_text(
        "load:\n  - name: other\n"
        "    component: sengen.runtime.components.replayer.replayer:Replayer\n"
        f"    archive: '{archive}'\n    controlName: other\n"
    )
    code, err = _cli(capsys, str(archive), str(other), "--local", "--virtual")
    assert code == 1 and err.count("\n") == 1, err
    assert "object name 'a' is already used on bus 'local.sensors'" in err
    # Under the wall clock, at four times the rate: the 60 ms archive is over in 15 ms.
    assert _cli(capsys, str(archive), "--local", "--rate", "4") == (0, "")
    remapped = _cli(
        capsys,
        str(archive),
        str(other),
        "--local",
        "--virtual",
        "--bus",
        "local.sensors=local.copy",
    )
    assert remapped == (0, "")
