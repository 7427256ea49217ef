"""What the kernel makes of user code that fails or dawdles at start-up (issue 21 item 7, the
conformance suite's findings): an object constructor that raises is a preload error naming the
component and the object, with the traceback, and exit 1; a component's real-time schedule is
anchored when its thread starts, before ``run()`` (runtime.md §5.5)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from kernel_support import IMPLEMENTATIONS, make_package, run_kernel

from sengen.cli.main import main
from sengen.runtime import Duration
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component

ROOT = "kb_badinput"
BROKEN = '''

class Broken(Counting):
    """Its constructor fails, as one whose hardware is missing would."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("no sensor attached")
'''


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(
        tmp_path_factory.mktemp("kbus"), ROOT, implementations=IMPLEMENTATIONS + BROKEN
    )


def test_a_constructor_that_raises_names_component_and_object(
    impls: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text(
        f"build:\n  - name: sensors\n    freqHz: 10\n    imports: [{ROOT}.kbus, {ROOT}_impls]\n"
        "    objects:\n      - {name: fine, class: kbus.Counting, bus: local.b, serial: 1}\n"
        "      - {name: s2, class: kbus.Broken, bus: local.b, serial: 2}\n"
    )
    assert main(["run", str(config), "--check"]) == 1
    err = capsys.readouterr().err
    first, *rest = err.splitlines()
    assert first == (
        f"{config}: build[0].objects[1]: could not create object 's2' of class 'kbus.Broken' in"
        " component 'sensors': RuntimeError: no sensor attached"
    )
    assert rest[0] == "Traceback (most recent call last):"
    assert f'{ROOT}_impls.py", line' in err and rest[-1] == "RuntimeError: no sensor attached"
    assert "internal error" not in err


def test_the_real_time_schedule_is_anchored_when_the_thread_starts() -> None:
    period = 50_000_000
    seen: dict[str, int] = {}

    class Late(Component):
        """Spends time in run() before its loop: its first cycles are late, not shifted."""

        def run(self, api: RunApi) -> None:
            seen["run"] = time.time_ns()
            seen["start"] = api.get_start_time().ns
            api.exec_loop(Duration(period), lambda: self.cycle(api))

        def cycle(self, api: RunApi) -> None:
            seen.setdefault("first", api.get_time().ns)
            seen["count"] = seen.get("count", 0) + 1
            if seen["count"] == 3:
                seen["third"] = api.get_time().ns
                api.request_kernel_stop(0)

    _, code = run_kernel("", [("late", Late(), 1)])
    assert code == 0
    # Taken before run() was entered: the first cycle's time is the thread's start.
    assert seen["first"] == seen["start"] <= seen["run"]
    assert (seen["third"] - seen["first"]) % period == 0
