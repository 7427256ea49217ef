"""The kernel under real time: ``build:`` components on their own threads (runtime.md §2, §5).

This first kernel runs pipelines: it preloads every entry (imports, classes, object
configurations; all problems before anything starts), starts the groups in ascending order,
cycles each component on the real-time loop of :mod:`sengen.runtime.realtime` (drain, the
objects' ``update()``, commit), and shuts down in reverse group order within
``kernel.shutdownTimeout``. Subscriptions, ``load:`` components, virtual time and the transport
build on it in later work; a configuration that needs them is refused with a clear message.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field

from sengen.runtime.buses import BusSpace, Source
from sengen.runtime.config import Config
from sengen.runtime.config.models import BuildEntry
from sengen.runtime.context import Context
from sengen.runtime.duration import Duration, TimeStamp
from sengen.runtime.objects import ConfigError, NativeObject
from sengen.runtime.realtime import RealTimeLoop
from sengen.runtime.resolve import ClassLookupError, import_packages, resolve_class

_log = logging.getLogger("sengen.kernel")

EXIT_OK = 0
EXIT_BAD_CONFIG = 1
EXIT_COMPONENT_FAILED = 3


class PreloadError(ValueError):
    """Problems found before start-up, one ``<file>: <key path>: <message>`` line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class RunApi:
    """What a component and its objects' ``update(run_api)`` see (runtime.md §5.3)."""

    def __init__(self, component: Pipeline) -> None:
        self._component = component
        self.logger = logging.getLogger(f"sengen.component.{component.name}")

    def get_time(self) -> TimeStamp:
        """The cycle time: constant during a cycle."""
        return TimeStamp(self._component.context.time)

    def get_start_time(self) -> TimeStamp:
        return TimeStamp(self._component.anchor)

    def get_target_cycle_time(self) -> Duration | None:
        return Duration(self._component.period)

    def stop_requested(self) -> bool:
        return self._component.stop.is_set()

    def request_kernel_stop(self, code: int = EXIT_OK) -> None:
        self._component.kernel.request_stop(code)

    def get_config(self) -> dict[str, object]:
        return dict(self._component.settings)

    def get_app_name(self) -> str:
        return self._component.kernel.config.kernel.app_name

    def get_source(self, bus: str) -> Source:
        return self._component.source(bus)


@dataclass
class Pipeline:
    """A ``build:`` component: its objects, cycled at its period on its own thread."""

    kernel: Kernel
    name: str
    group: int
    period: int
    settings: dict[str, object]
    objects: list[tuple[NativeObject, str | None]]
    context: Context = field(init=False)
    stop: threading.Event = field(default_factory=threading.Event)
    anchor: int = 0
    thread: threading.Thread | None = None
    loop: RealTimeLoop | None = None
    _sources: dict[str, Source] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.context = Context(self.name)
        self.api = RunApi(self)
        # Objects without a bus are built but neither published nor updated (§1.7).
        self.published = [obj for obj, bus in self.objects if bus is not None]

    def source(self, bus: str) -> Source:
        found = self._sources.get(bus)
        if found is None:
            found = self._sources[bus] = Source(self.kernel.space, self.context, bus, self.api)
        return found

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.anchor = time.time_ns()
        self.context.time = self.anchor
        try:
            with self.context.active():
                for obj, bus in self.objects:
                    if bus is not None:
                        self.source(bus).add(obj)
                self.loop = RealTimeLoop(self.name, self.period, stop=self.stop)
                self.loop.run(self._drain, self._update, self._commit, anchor=self.anchor)
        except Exception as error:
            text = "".join(traceback.format_exception(error))
            _log.error("component '%s' failed: %s\n%s", self.name, error, text.rstrip())
            self.kernel.request_stop(EXIT_COMPONENT_FAILED)
        finally:
            self._remove_objects()

    def _drain(self, cycle_time: int) -> int:
        self.context.time = cycle_time
        before = time.thread_time_ns()
        self.context.drain()
        return time.thread_time_ns() - before

    def _update(self, cycle_time: int) -> None:
        for obj in self.published:
            obj.update(self.api)

    def _commit(self, cycle_time: int) -> None:
        self.context.commit(cycle_time)

    def _remove_objects(self) -> None:
        for obj, bus in self.objects:
            if bus is not None and obj.bus == bus and not obj._removed:
                try:
                    self.source(bus).remove(obj)
                except Exception as error:
                    _log.error(
                        "while removing '%s' of component '%s': %s", obj.name, self.name, error
                    )
                    self.kernel.request_stop(EXIT_COMPONENT_FAILED)
        self.context.stop()


class Kernel:
    """A process's kernel: preload at construction, then :meth:`run`."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.space = BusSpace()
        self._stop = threading.Event()
        self._code: int | None = None
        self._lock = threading.Lock()
        self.components = self._preload()

    # -- preload --------------------------------------------------------------------------------

    def _preload(self) -> list[Pipeline]:
        config = self.config
        problems: list[str] = []
        if config.kernel.run_mode != "realTime":
            problems.append(
                f"{config.source}: kernel.runMode: runMode '{config.kernel.run_mode}' needs"
                " virtual time, which this kernel does not run yet"
            )
        for index, loaded in enumerate(config.load):
            problems.append(
                f"{config.source}: load[{index}].name: unknown component '{loaded.name}'"
            )
        pipelines = []
        owners: dict[tuple[str, str], str] = {}  # (bus, name): component, §3.13 at start-up
        for index, entry in enumerate(config.build):
            pipeline = self._pipeline(index, entry, problems)
            if pipeline is None:
                continue
            pipelines.append(pipeline)
            for number, (obj, bus) in enumerate(pipeline.objects):
                if bus is None:
                    continue
                owner = owners.setdefault((bus, obj.name), entry.name)
                if owner != entry.name:
                    problems.append(
                        f"{config.source}: build[{index}].objects[{number}].name: object name"
                        f" '{obj.name}' is already used on bus '{bus}' by component '{owner}'"
                    )
        if problems:
            raise PreloadError(problems)
        return pipelines

    def _pipeline(self, index: int, entry: BuildEntry, problems: list[str]) -> Pipeline | None:
        where = f"{self.config.source}: build[{index}]"
        failed = [f"{where}.imports: {p}" for p in import_packages(entry.imports)]
        problems.extend(failed)
        if failed:
            return None
        objects: list[tuple[NativeObject, str | None]] = []
        for number, item in enumerate(entry.objects):
            at = f"{where}.objects[{number}]"
            try:
                cls = resolve_class(item.class_name, entry.imports)
                objects.append((cls.from_config(item.name, item.properties), item.bus))
            except ClassLookupError as error:
                problems.append(f"{at}.class: {error}")
            except ConfigError as error:
                problems.extend(f"{at}: {problem}" for problem in error.problems)
        settings = {**entry.settings, "name": entry.name, "freqHz": entry.freq_hz}
        return Pipeline(self, entry.name, entry.group, entry.period_ns, settings, objects)

    # -- running --------------------------------------------------------------------------------

    def request_stop(self, code: int = EXIT_OK) -> None:
        """The first request fixes the exit code; a later failure turns a 0 into its code."""
        with self._lock:
            if self._code is None or (self._code == EXIT_OK and code != EXIT_OK):
                self._code = code
        self._stop.set()

    def run(self, until: Duration | None = None) -> int:
        """Start the groups in ascending order, run until a stop request (or ``until`` of wall
        time after start-up), shut down in reverse order; returns the exit code."""
        groups = sorted({c.group for c in self.components})
        started: list[int] = []
        try:
            for group in groups:
                for component in self.components:
                    if component.group == group:
                        component.start()
                started.append(group)
            self._stop.wait(None if until is None else until.ns / 1e9)
            self.request_stop(EXIT_OK)
        finally:
            self._shutdown(started)
        return self._code if self._code is not None else EXIT_OK

    def _shutdown(self, groups: list[int]) -> None:
        deadline = time.monotonic() + self.config.kernel.shutdown_timeout.ns / 1e9
        for group in reversed(groups):
            members = [c for c in self.components if c.group == group]
            for component in members:
                component.stop.set()
            for component in members:
                thread = component.thread
                if thread is None:
                    continue
                thread.join(max(deadline - time.monotonic(), 0))
                if thread.is_alive():
                    timeout = self.config.kernel.shutdown_timeout
                    stack = _stack_of(thread)
                    _log.error(
                        "component '%s' did not stop within %s\n%s", component.name, timeout, stack
                    )
                    self.request_stop(EXIT_COMPONENT_FAILED)

    def objects(self, bus: str) -> list[NativeObject]:
        return self.space.objects(bus)


def _stack_of(thread: threading.Thread) -> str:
    frame = sys._current_frames().get(thread.ident or -1)
    return "".join(traceback.format_stack(frame)) if frame is not None else ""
