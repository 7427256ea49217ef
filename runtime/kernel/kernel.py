"""The kernel under real time: lifecycle, groups and the internal component (runtime.md §2).

Construction is preload of the configuration: every ``load:`` component is found and its own
keys validated, every ``build:`` entry imported, its classes resolved and its objects built;
all problems are reported together before anything starts (:class:`PreloadError`). ``run()``
calls the components' ``preload`` hooks in runner order, then per group, ascending, loads,
initialises (with ``Retry``) and starts every component, waits for a stop request, and shuts the
groups down highest first within ``kernel.shutdownTimeout``. Recorders drain once more after
everything else has stopped.
"""

from __future__ import annotations

import functools
import gc
import importlib
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from sengen.runtime.errors import SengenError
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.builtin import KernelComponent
from sengen.runtime.kernel.buses import BusSpace
from sengen.runtime.kernel.component import Component, Retry
from sengen.runtime.kernel.config import Config
from sengen.runtime.kernel.config.loader import keys_at, validation_messages
from sengen.runtime.kernel.config.models import BuildEntry, LoadEntry, QueueConfig
from sengen.runtime.kernel.config.tree import format_path
from sengen.runtime.kernel.imports import (
    ClassLookupError,
    import_packages,
    resolve_class,
    user_traceback,
)
from sengen.runtime.kernel.processes import ProcessInfo
from sengen.runtime.kernel.readiness import wait_for
from sengen.runtime.kernel.runner import EXIT_COMPONENT_FAILED, Runner
from sengen.runtime.objects.duration import Duration
from sengen.runtime.objects.objects import ConfigError, NativeObject, object_id
from sengen.runtime.objects.proxies import RemoteProxy
from sengen.runtime.objects.suggest import did_you_mean
from sengen.runtime.time.stepping import Clock, KernelClock, Stepper
from sengen.runtime.time.tracing import Tracers

if TYPE_CHECKING:
    from sengen.runtime.sen.kernel.monitoring import KernelMonitoringInfo

_log = logging.getLogger("sengen.kernel")

EXIT_OK = 0
EXIT_BAD_CONFIG = 1

# The entry-point group under which packages register the components a ``load:`` entry names;
# sengen registers its own (recorder, tracer, shell, transport) there too (runtime.md §9).
COMPONENTS_GROUP = "sengen.components"
START_AND_STOP = Duration(100_000_000)  # how long runMode startAndStop runs (runtime.md §6.6)


class PreloadError(SengenError, ValueError):
    """Problems found before start-up, one ``<file>: <key path>: <message>`` line each.
    ``tracebacks`` holds, by problem line, the traceback of a user module that failed to import:
    its author needs the file and line the one-liner cannot give. They are notes of the exception
    too, so that an uncaught one (a script, a test) shows them below its message."""

    def __init__(self, problems: list[str], tracebacks: Mapping[str, str] | None = None) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
        self.tracebacks = dict(tracebacks or {})
        for line, shown in self.tracebacks.items():
            self.add_note(f"{line}\n{shown.rstrip()}")


class BuildComponent(Component):
    """A ``build:`` entry: its objects published on their buses and cycled at its period."""

    def __init__(self, period: int, objects: list[tuple[NativeObject, str | None]]) -> None:
        self.period = period
        self.objects = objects

    def run(self, api: RunApi) -> None:
        # Objects without a bus are built but neither published nor updated (§1.7).
        for obj, bus in self.objects:
            if bus is not None:
                api.get_source(bus).add(obj)
        api.exec_loop(self.period)


class Kernel:
    """A process's kernel: preload at construction, then :meth:`run`."""

    def __init__(
        self,
        config: Config,
        components: Sequence[tuple[str, Component, int]] = (),
    ) -> None:
        """``components`` are added programmatically as (name, component, group)."""
        self.config = config
        self.app_name = config.kernel.app_name or (
            Path(config.source).stem if config.source.endswith((".yaml", ".yml")) else ""
        )
        self.space = BusSpace()
        self.tracers = Tracers()
        mode = config.kernel.run_mode
        self.clock: KernelClock | None = None
        if mode in ("virtualTime", "virtualTimeRunning"):
            settings = config.kernel
            address = f"{settings.effective_clock_bus}.{settings.clock_name}"
            self.clock = KernelClock(object_id(address), settings.clock_name)
        if self.clock is not None:
            self.clock.self_stepping = mode == "virtualTimeRunning"
        self.parked_writes = False  # the test kernel writes to parked components' objects
        self._started: list[int] = []
        self._stop = threading.Event()
        self._code: int | None = None
        self._lock = threading.Lock()
        self.runners: list[Runner] = []
        self._preload(components)

    @property
    def components(self) -> list[Runner]:
        """The configured components in runner order (the internal ``kernel`` one excluded)."""
        return [r for r in self.runners if not isinstance(r.component, KernelComponent)]

    def runner(self, name: str) -> Runner:
        return next(r for r in self.runners if r.name == name)

    # -- preload ---------------------------------------------------------------------------------

    def _preload(self, extra: Sequence[tuple[str, Component, int]]) -> None:
        config = self.config
        problems: list[str] = []
        tracebacks: dict[str, str] = {}
        if config.kernel.run_mode == "virtualTimeRunning" and config.kernel.clock_master:
            problems.append(
                f"{config.source}: kernel.clockMaster: a virtualTimeRunning kernel steps itself"
                " and cannot be a clock master"
            )
        found: list[tuple[str, Component, int, dict[str, object], QueueConfig | None]] = []
        for index, entry in enumerate(config.load):
            component = self._loaded(index, entry, problems, tracebacks)
            if component is not None:
                config_of = entry.component_config()
                found.append((entry.name, component, entry.group, config_of, entry.in_queue))
        for name, component, group in extra:
            found.append((name, component, group, {"name": name, "group": group}, None))
        owners: dict[tuple[str, str], str] = {}  # (bus, name): component, §3.13 at start-up
        for index, build in enumerate(config.build):
            pipeline = self._pipeline(index, build, problems, tracebacks)
            config_of = build.component_config()
            found.append((build.name, pipeline, build.group, config_of, build.in_queue))
            for number, (obj, bus) in enumerate(pipeline.objects):
                if bus is None:
                    continue
                owner = owners.setdefault((bus, obj.name), build.name)
                if owner != build.name:
                    problems.append(
                        f"{config.source}: build[{index}].objects[{number}].name: object name"
                        f" '{obj.name}' is already used on bus '{bus}' by component '{owner}'"
                    )
        if problems:
            raise PreloadError(problems, tracebacks)
        kernel_part = KernelComponent(self)
        found.append(("kernel", kernel_part, 1, {"name": "kernel", "group": 1}, None))
        for index, (name, component, group, settings, queue) in enumerate(found):
            runner = Runner(self, index, name, group, component, settings, queue)
            runner.context.call_timeout = config.kernel.call_timeout.ns or None
            runner.state = "preloaded"
            self.runners.append(runner)
            self.space.interests.publishers.append(runner.publisher)

    def _loaded(
        self, index: int, entry: LoadEntry, problems: list[str], tracebacks: dict[str, str]
    ) -> Component | None:
        where = f"{self.config.source}: load[{index}]"
        spec = entry.component
        if spec is None:
            spec = registered_components().get(entry.name)
            if spec is None:
                hint = did_you_mean(entry.name, registered_components())
                problems.append(f"{where}.name: unknown component '{entry.name}'{hint}")
                return None
        try:
            cls = _import_component(spec)
        except ImportError as error:
            key = "component" if entry.component is not None else "name"
            problem = f"{where}.{key}: cannot import component '{spec}': {error}"
            problems.append(problem)
            shown = None if error.__cause__ is None else user_traceback(error.__cause__)
            if shown is not None:
                tracebacks[problem] = shown
            return None
        model: type[BaseModel] | None = getattr(cls, "config_model", None)
        settings = entry.settings
        try:
            if model is not None:
                return cls(model.model_validate(settings))  # type: ignore[call-arg]
            return cls()
        except ValidationError as error:
            # The entry's own keys are candidates too: ``grup`` means the entry's ``group``.
            own = keys_at(LoadEntry, ())
            for path, message in validation_messages(error, model, own):  # type: ignore[arg-type]
                problems.append(f"{where}.{format_path(path)}: {message}")
        except Exception as error:
            problems.append(f"{where}: cannot create component '{spec}': {error}")
        return None

    def _pipeline(
        self, index: int, entry: BuildEntry, problems: list[str], tracebacks: dict[str, str]
    ) -> BuildComponent:
        where = f"{self.config.source}: build[{index}]"
        source = self.config.source
        failed = import_packages(
            entry.imports, None if source.startswith("<") else Path(source).parent
        )
        for failure in failed:
            problem = f"{where}.imports: {failure.problem}"
            problems.append(problem)
            if failure.traceback is not None:
                tracebacks[problem] = failure.traceback
        objects: list[tuple[NativeObject, str | None]] = []
        for number, item in enumerate([] if failed else entry.objects):
            at = f"{where}.objects[{number}]"
            try:
                cls = resolve_class(item.class_name, entry.imports)
                objects.append((cls.from_config(item.name, item.properties), item.bus))
            except ClassLookupError as error:
                problems.append(f"{at}.class: {error}")
            except ConfigError as error:
                problems.extend(f"{at}: {problem}" for problem in error.problems)
            except Exception as error:  # the user's constructor raised: bad input, not a crash
                problem = (
                    f"{at}: could not create object '{item.name}' of class '{item.class_name}'"
                    f" in component '{entry.name}': {type(error).__name__}: {error}"
                )
                problems.append(problem)
                tracebacks[problem] = "".join(
                    traceback.format_exception(type(error), error, error.__traceback__)
                )
        return BuildComponent(entry.period_ns, objects)

    # -- running ---------------------------------------------------------------------------------

    def request_stop(self, code: int = EXIT_OK) -> None:
        """The first request fixes the exit code; a later failure turns a 0 into its code."""
        with self._lock:
            if self._code is None or (self._code == EXIT_OK and code != EXIT_OK):
                self._code = code
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(
        self, until: Duration | None = None, progress: Callable[[int], None] | None = None
    ) -> int:
        """Start the groups in ascending order, run until a stop request or ``until``, shut
        down in reverse order; returns the exit code. Under real time ``until`` is wall time
        after start-up; under virtual time it is the virtual time to reach (runtime.md §1.12),
        as fast as the machine allows, ``progress`` being told the time after each step."""
        if self.config.kernel.run_mode == "startAndStop":
            until = START_AND_STOP
        try:
            if self.start():
                # What exists once started (modules, types, the built objects) lives as long
                # as the process: full collections, which stop every thread, skip it
                # (docs/guide/web.md, "Latency": 100-200 ms pauses otherwise).
                gc.freeze()
                if self.clock is not None and until is not None:
                    self._drive(until.ns, progress)
                else:
                    self._wait(until)
            self.request_stop(EXIT_OK)
        finally:
            self.shutdown()
            gc.unfreeze()
        return self.exit_code

    @property
    def exit_code(self) -> int:
        return self._code if self._code is not None else EXIT_OK

    def start(self) -> bool:
        """Preload hooks, then every group; False when a hook failed (the exit code says so)."""
        ok = self._start(self._started)
        if ok:
            count, groups = len(self.runners), len(self._started)
            _log.info("started %d component(s) in %d group(s)", count, groups)
        return ok

    def shutdown(self) -> None:
        """Stop the started groups, highest first (idempotent)."""
        self.request_stop(EXIT_OK)
        started, self._started = self._started, []
        self._shutdown(started)

    def local_clocks(self) -> list[KernelClock]:
        """The kernel clocks a master in this process steps directly."""
        return [self.clock] if self.clock is not None else []

    def master_clocks(self) -> list[Clock]:
        """What this process's master steps: its own clock, called directly, and the clocks of
        other processes that its subscription found on the clock bus (runtime.md §6.3)."""
        clocks: list[Clock] = list(self.local_clocks())
        link = self.space.clock_link
        if link is not None:
            found = self.kernel_component.clock_proxies()
            clocks += [link.remote_clock(p) for p in found if isinstance(p, RemoteProxy)]
        return clocks

    def stepper(self) -> Stepper:
        """The master's stepper when this kernel is the master, else one over this kernel."""
        master = self.kernel_component.master
        return master.stepper if master is not None else Stepper(self.local_clocks)

    @property
    def kernel_component(self) -> KernelComponent:
        component = self.runners[-1].component
        assert isinstance(component, KernelComponent)
        return component

    def wait_ready(self, timeout: float = 5.0) -> bool:
        """Until every component that will be stepped is (or has parked, finished or failed)
        and the clock objects are published, so that the first step finds everyone."""
        deadline = time.monotonic() + timeout
        clock = self.clock
        while not self._stop.is_set() and time.monotonic() < deadline:
            stepped = clock.stepped() if clock is not None else []
            waiting = [r.name for r in self.runners if not r.settled(stepped)]
            if not waiting and (clock is None or self.kernel_component.clock_object is not None):
                return True
            time.sleep(0.001)
        if not self._stop.is_set():
            _log.warning("still waiting for %s to start: stepping anyway", ", ".join(waiting))
        return False

    def wait_for(
        self,
        process: str | None = None,
        component: str | None = None,
        object: str | None = None,  # the word users know, as in the shell
        timeout: float = 10.0,
    ) -> ProcessInfo:
        """Until the transport sees a process (app name or ``app/pid``) with ``component``
        and owning ``object`` (``session.bus.name``), each criterion optional; that process.
        Raises :class:`~sengen.runtime.NotSeen` after ``timeout`` s or when the kernel stops,
        naming what it waited for and what it saw. Not from a component's cycle: it blocks."""
        space = self.space
        return wait_for(lambda: space.processes, self._stop, process, component, object, timeout)

    def _drive(self, until: int, progress: Callable[[int], None] | None) -> None:
        clock = self.clock
        assert clock is not None
        if clock.self_stepping:  # virtualTimeRunning: the kernel component steps, up to until
            clock.limit = until
            while not self._stop.is_set() and not clock.reached.wait(0.01):
                if progress is not None:
                    progress(clock.time)
            return
        self.wait_ready()
        self.stepper().advance_time(until, progress, cancel=self._stop.is_set)

    def _wait(self, until: Duration | None) -> None:
        deadline = None if until is None else time.monotonic() + until.ns / 1e9
        # Short waits keep the main thread responsive to signals.
        while not self._stop.is_set():
            left = 0.2 if deadline is None else min(deadline - time.monotonic(), 0.2)
            if left <= 0:
                return
            self._stop.wait(left)

    def _start(self, started: list[int]) -> bool:
        for runner in self.runners:
            if not self._hook(runner, "preloading", runner.component.preload):
                return False
            runner.state = "preloaded"
        for group in sorted({r.group for r in self.runners}):
            members = [r for r in self.runners if r.group == group]
            started.append(group)
            for runner in members:
                if not self._hook(runner, "loading", runner.component.load):
                    return False
                runner.state = "loaded"
            if not self._initialise(members):
                return False
            for runner in members:
                runner.start()
        return True

    def _hook(self, runner: Runner, doing: str, hook: Callable[[RunApi], object]) -> bool:
        runner.state = doing
        try:
            hook(runner.api)
        except Exception as error:
            # Bad input (a SengenError: an archive that cannot be created, ...) is one line; a
            # bug shows its traceback.
            text = "".join(traceback.format_exception(error)).rstrip()
            text = "" if isinstance(error, SengenError) else f"\n{text}"
            _log.error("error while %s component %s: %s%s", doing, runner.name, error, text)
            runner.state = "error"
            self.request_stop(EXIT_BAD_CONFIG)
            return False
        return True

    def _initialise(self, members: list[Runner]) -> bool:
        waiting = list(members)
        last_note = time.monotonic()
        while waiting:
            again: list[tuple[Runner, Retry]] = []
            for runner in waiting:
                runner.state = "initializing"
                try:
                    answer = runner.component.init(runner.api)
                except Exception as error:
                    text = "".join(traceback.format_exception(error)).rstrip()
                    _log.error(
                        "error while initializing component %s: %s\n%s", runner.name, error, text
                    )
                    runner.state = "error"
                    self.request_stop(EXIT_BAD_CONFIG)
                    return False
                if isinstance(answer, Retry):
                    again.append((runner, answer))
                else:
                    runner.state = "initialized"
            waiting = [r for r, _ in again]
            if waiting:
                if time.monotonic() - last_note >= 10:
                    names = ", ".join(r.name for r in waiting)
                    _log.info("waiting for component(s) %s to initialise", names)
                    last_note = time.monotonic()
                if self._stop.wait(max(retry.wait_hint.ns for _, retry in again) / 1e9):
                    return False
        return True

    def _shutdown(self, groups: list[int]) -> None:
        budget = self.config.kernel.shutdown_timeout
        deadline = time.monotonic() + budget.ns / 1e9
        deferred: list[Runner] = []
        for group in reversed(groups):
            members = [r for r in self.runners if r.group == group]
            for runner in members:
                runner.request_stop()
            hung = set()
            for runner in members:
                thread = runner.thread
                if thread is None:
                    continue
                thread.join(max(deadline - time.monotonic(), 0))
                if thread.is_alive():
                    hung.add(runner)
                    _log.error(
                        "component '%s' did not stop within %s\n%s",
                        runner.name,
                        budget,
                        _stack_of(thread),
                    )
                    self.request_stop(EXIT_COMPONENT_FAILED)
            for runner in members:
                if runner in hung or runner.state in ("unloaded", "error"):
                    continue
                if runner.keeps_inputs:
                    deferred.append(runner)
                else:
                    self._unload(runner)
        for runner in deferred:  # recorders: one last drain after everyone else stopped
            with runner.context.active():
                try:
                    runner.drain(runner.cycle_time)
                except Exception as error:
                    runner.fail(error)
                runner.close_inputs()
            self._unload(runner)

    def _unload(self, runner: Runner) -> None:
        if runner.state not in ("loaded", "initialized", "stopped", "running", "stopping"):
            return
        try:
            runner.component.unload(runner.api)
        except Exception as error:
            text = "".join(traceback.format_exception(error)).rstrip()
            _log.error("error while unloading component %s: %s\n%s", runner.name, error, text)
            self.request_stop(EXIT_COMPONENT_FAILED)
        runner.state = "unloaded"

    # -- inspection ------------------------------------------------------------------------------

    def objects(self, bus: str) -> list[NativeObject]:
        return self.space.objects(bus)

    def monitoring(self) -> KernelMonitoringInfo:
        from sengen.runtime.sen.kernel.basic_types import RunMode
        from sengen.runtime.sen.kernel.monitoring import KernelMonitoringInfo

        return KernelMonitoringInfo(
            run_mode=RunMode[self.config.kernel.run_mode],
            transport_stats=None,
            components=tuple(r.monitoring() for r in self.runners),
        )


@functools.cache
def registered_components() -> Mapping[str, str]:
    """``module.path:ClassName`` of every component the installed packages register, sengen's
    own included, by name; the first registration of a name wins. Read once per process:
    scanning the installed distributions costs milliseconds, and they do not change under a
    running process (a test that installs one clears the cache)."""
    found: dict[str, str] = {}
    for point in entry_points(group=COMPONENTS_GROUP):
        found.setdefault(point.name, point.value)
    return found


def _import_component(spec: str) -> type[Component]:
    module_name, _, class_name = spec.partition(":")
    if not class_name:
        raise ImportError("expected 'module.path:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # a broken module is a configuration problem, not a crash
        raise ImportError(str(error) or type(error).__name__) from error
    except SystemExit as error:  # exiting at import would end the run with the module's code
        raise ImportError(f"it called sys.exit({error.code!r}) at import") from error
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not issubclass(cls, Component):
        raise ImportError(f"'{class_name}' is not a component class in module '{module_name}'")
    return cls


def _stack_of(thread: threading.Thread) -> str:
    frame = sys._current_frames().get(thread.ident or -1)
    return "".join(traceback.format_stack(frame)) if frame is not None else ""
