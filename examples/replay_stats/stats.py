"""A component that computes statistics of the thermometers it finds, and writes them as CSV.

It imports no generated package: beside a replay (``sengen replay station.mcap stats.yaml``)
the thermometers are objects of a class the process only knows from the archive, whose members
go by their STL names (``on_changed("temperature", ...)``). It cycles at the station's rate, so
that its drains see every committed temperature (a proxy shows the latest value at each drain).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sengen.runtime import Component, Duration, RunApi


class StatsConfig(BaseModel):
    """The ``stats`` entry's own keys."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    file: str = "stats.csv"
    freq_hz: float = Field(default=10.0, alias="freqHz", gt=0)


@dataclass
class Summary:
    """One thermometer's temperatures so far."""

    samples: int = 0
    total: float = 0.0
    low: float = float("inf")
    high: float = float("-inf")
    frosts: int = 0

    def add(self, temperature: float) -> None:
        self.samples += 1
        self.total += temperature
        self.low = min(self.low, temperature)
        self.high = max(self.high, temperature)

    def frost(self, temperature: float) -> None:
        self.frosts += 1


class TemperatureStats(Component):
    """Minimum, mean and maximum temperature and frost count of every thermometer."""

    config_model = StatsConfig

    def __init__(self, config: StatsConfig) -> None:
        self.config = config
        self.summaries: dict[str, Summary] = {}

    def run(self, api: RunApi) -> None:
        api.select("SELECT weather.Thermometer FROM local.weather", on_added=self._found)
        api.exec_loop(Duration.from_hz(self.config.freq_hz))

    def _found(self, thermometers: list[Any]) -> None:
        for thermometer in thermometers:
            summary = self.summaries.setdefault(thermometer.name, Summary())
            summary.add(thermometer.temperature)  # its state when it was found
            thermometer.on_changed("temperature", summary.add)
            thermometer.events.frost.connect(summary.frost)

    def unload(self, api: RunApi) -> None:
        with open(self.config.file, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["thermometer", "samples", "min", "mean", "max", "frosts"])
            for name, s in sorted(self.summaries.items()):
                mean = s.total / s.samples if s.samples else 0.0
                writer.writerow([name, s.samples, s.low, round(mean, 3), s.high, s.frosts])
        api.logger.info("wrote %s (%d thermometers)", self.config.file, len(self.summaries))
