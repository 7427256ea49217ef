"""Errors that keep their cause: an implementation that raises is logged at its owner with its
traceback besides the error its caller receives (runtime.md §3.9), and a user module that fails
to import keeps its traceback under the unchanged one-line preload problem.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from objects_support import Tree, cycle, imported_tree

from sengen.runtime import Call, CallFailed, Kernel, PreloadError, Promise, load_config_text
from sengen.runtime.objects.context import Context

ROOT = "objgen_causes"
BUS = "local.bus"
MS = 1_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("causes"), ROOT) as generated:
        yield generated


def _raising_fail(self: Any, message: str) -> str:
    raise KeyError(message)


def _raising_compute(self: Any, n: int, promise: Promise[int]) -> None:
    raise ZeroDivisionError(f"nothing to compute for {n}")


@pytest.fixture(scope="module")
def worker_class(tree: Tree) -> Any:
    hooks = ("add", "peek", "sneak", "shout", "twice", "bad_result", "nothing")
    namespace: dict[str, Any] = {f"{hook}_impl": lambda self, *args: None for hook in hooks}
    namespace.update(
        __module__=__name__,
        fail_impl=_raising_fail,
        compute_impl=_raising_compute,
        limit_accepts_set=lambda self, value: True,
    )
    return type("CausesWorker", (tree.devices.WorkerBase,), namespace)


@pytest.fixture
def contexts(tree: Tree, worker_class: Any) -> tuple[Context, Context, Any]:
    """A caller and an owner, and a proxy in the caller of the owner's worker."""
    owner, caller = Context("owner"), Context("caller")
    worker = worker_class("w", serial="W-1")
    worker.set_tag_id(1)
    worker.set_slot(1)
    worker._bind_(owner, BUS, 0)
    return owner, caller, tree.devices.WorkerLocalProxy(worker, caller)


def _exchange(owner: Context, caller: Context, make: Any) -> Call[Any]:
    """The caller makes the call in a cycle, the owner executes it, the caller receives."""
    calls: list[Call[Any]] = []
    cycle(caller, 1 * MS, update=lambda: calls.append(make()))
    cycle(owner, 2 * MS)
    cycle(caller, 3 * MS)
    return calls[0]


def _owner_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sengen.calls" and "raised in" in r.message]


def _formatted(record: logging.LogRecord) -> str:
    return logging.Formatter().format(record)


def test_a_raising_implementation_is_logged_at_debug_with_its_traceback(
    contexts: tuple[Context, Context, Any], caplog: pytest.LogCaptureFixture
) -> None:
    owner, caller, proxy = contexts
    caplog.set_level(logging.DEBUG, logger="sengen.calls")
    received: list[BaseException | None] = []
    call = _exchange(
        owner, caller, lambda: proxy.fail("x", on_result=lambda c: received.append(c.exception()))
    )
    (record,) = _owner_records(caplog)
    assert record.levelno == logging.DEBUG
    text = _formatted(record)
    assert f"call {call.label} raised in component 'owner': KeyError: 'x'" in text
    assert "Traceback (most recent call last)" in text and "in _raising_fail" in text
    # The caller receives the same error as ever.
    (error,) = received
    assert isinstance(error, CallFailed) and error.type_name == "KeyError"
    assert call.exception() is error and isinstance(error.__cause__, KeyError)


def test_a_raising_implementation_nobody_waits_for_is_logged_at_warning(
    contexts: tuple[Context, Context, Any], caplog: pytest.LogCaptureFixture
) -> None:
    owner, caller, proxy = contexts
    caplog.set_level(logging.DEBUG, logger="sengen.calls")
    call = _exchange(owner, caller, lambda: proxy.fail("lost"))  # the result is discarded
    (record,) = _owner_records(caplog)
    assert record.levelno == logging.WARNING
    text = _formatted(record)
    assert f"call {call.label} raised in component 'owner': KeyError: 'lost'" in text
    assert "Traceback (most recent call last)" in text and "in _raising_fail" in text
    error = call.exception()
    assert isinstance(error, CallFailed) and error.type_name == "KeyError"


def test_a_raising_deferred_implementation_is_logged_too(
    contexts: tuple[Context, Context, Any], caplog: pytest.LogCaptureFixture
) -> None:
    owner, caller, proxy = contexts
    caplog.set_level(logging.DEBUG, logger="sengen.calls")
    call = _exchange(owner, caller, lambda: proxy.compute(3))
    (record,) = _owner_records(caplog)
    assert record.levelno == logging.WARNING
    assert "in _raising_compute" in _formatted(record)
    error = call.exception()
    assert isinstance(error, CallFailed) and error.type_name == "ZeroDivisionError"


def test_a_thread_outside_any_component_counts_as_waiting(
    contexts: tuple[Context, Context, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """It may block in ``result()`` only after the owner ran the call."""
    owner, _, proxy = contexts
    caplog.set_level(logging.DEBUG, logger="sengen.calls")
    call = proxy.fail("later")  # outside any cycle: sent at once
    cycle(owner, 1 * MS)
    (record,) = _owner_records(caplog)
    assert record.levelno == logging.DEBUG
    with pytest.raises(CallFailed, match="KeyError"):
        call.result(timeout=5)


def test_a_successful_call_logs_nothing(
    contexts: tuple[Context, Context, Any], caplog: pytest.LogCaptureFixture
) -> None:
    owner, caller, proxy = contexts
    caplog.set_level(logging.DEBUG, logger="sengen.calls")
    call = _exchange(owner, caller, lambda: proxy.nothing())
    assert call.done() and call.exception() is None
    assert _owner_records(caplog) == []


# -- user modules that fail to import ----------------------------------------------------------

BROKEN = {
    # A NameError on line 4, inside a function called at import.
    "causes_name_error": "import os\n\ndef setup():\n    return undefined_name\n\nsetup()\n",
    # A SyntaxError on line 2.
    "causes_syntax_error": "x = 1\ndef broken(:\n    pass\n",
}


@pytest.fixture
def broken_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name, text in BROKEN.items():
        (tmp_path / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in BROKEN:
        sys.modules.pop(name, None)


def test_a_load_component_that_fails_to_import_keeps_its_traceback(broken_modules: Path) -> None:
    text = "load:\n  - {name: b, component: 'causes_name_error:Broken'}\n"
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    (problem,) = caught.value.problems
    assert problem == (
        "<yaml text>: load[0].component: cannot import component 'causes_name_error:Broken':"
        " name 'undefined_name' is not defined"
    )
    shown = caught.value.tracebacks[problem]
    assert shown.startswith("Traceback (most recent call last):\n")
    assert f'File "{broken_modules / "causes_name_error.py"}", line 4, in setup' in shown
    assert shown.rstrip().endswith("NameError: name 'undefined_name' is not defined")
    # Only the user's frames: the import machinery and the kernel say nothing to its author.
    assert "importlib" not in shown and "kernel.py" not in shown


def test_a_build_import_that_fails_keeps_its_traceback(broken_modules: Path) -> None:
    text = textwrap.dedent("""\
        build:
          - name: p
            imports: [causes_syntax_error, causes_not_there]
            objects: [{name: x, class: causes_syntax_error.X}]
        """)
    with pytest.raises(PreloadError) as caught:
        Kernel(load_config_text(text))
    syntax, missing = caught.value.problems
    assert syntax.startswith(
        "<yaml text>: build[0].imports: could not import package 'causes_syntax_error':"
        " SyntaxError: "
    )
    assert missing == (
        "<yaml text>: build[0].imports: could not import package 'causes_not_there':"
        " ModuleNotFoundError: No module named 'causes_not_there'"
    )
    shown = caught.value.tracebacks[syntax]
    assert f'File "{broken_modules / "causes_syntax_error.py"}", line 2' in shown
    assert "def broken(:" in shown and "SyntaxError" in shown
    assert missing not in caught.value.tracebacks  # no code of its own ran: the line says all


def test_sengen_run_prints_the_traceback_below_the_problem(broken_modules: Path) -> None:
    config = broken_modules / "broken.yaml"
    config.write_text("load:\n  - {name: b, component: 'causes_name_error:Broken'}\n")
    result = subprocess.run(
        [sys.executable, "-m", "sengen", "run", str(config), "--check"],
        cwd=broken_modules,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"{config}: load[0].component: cannot import component 'causes_name_error:Broken':"
        " name 'undefined_name' is not defined"
    )
    assert lines[1] == "Traceback (most recent call last):"
    assert f'  File "{broken_modules / "causes_name_error.py"}", line 4, in setup' in lines
    assert lines[-1] == "NameError: name 'undefined_name' is not defined"
