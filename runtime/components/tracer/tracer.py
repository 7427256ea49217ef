"""The shipped ``tracer`` component (runtime.md §7.4, §9): a Chrome-trace file of every cycle.

It installs a :class:`~sengen.runtime.time.tracing.ChromeTracer` at preload, has no loop of its own,
and writes the file when it unloads, after the components it traced have stopped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, field_validator

from sengen.runtime import ChromeTracer, Component
from sengen.runtime.kernel.extension import fail, writable_file_problem

if TYPE_CHECKING:
    from sengen.runtime import RunApi


class TracerConfig(BaseModel):
    """The ``tracer`` entry's own keys."""

    model_config = ConfigDict(extra="forbid", strict=True)

    file: str = "trace.json"

    @field_validator("file")
    @classmethod
    def _writable(cls, file: str) -> str:
        # Checked before start: the file is written when the run ends, too late to say so.
        problem = writable_file_problem(Path(file))
        if problem is not None:
            raise fail(problem)
        return file


class TracerComponent(Component):
    config_model = TracerConfig

    def __init__(self, config: TracerConfig) -> None:
        self.path = Path(config.file)
        self.tracer = ChromeTracer()

    def preload(self, api: RunApi) -> None:
        api.install_tracer(self.tracer)

    def run(self, api: RunApi) -> None:
        api.wait_for_stop()

    def unload(self, api: RunApi) -> None:
        self.tracer.write(self.path)
