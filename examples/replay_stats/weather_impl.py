"""The implementation of ``weather.Thermometer`` (stl/weather/weather.stl) for ``station.yaml``.

A thermometer follows a daily swing (one "day" lasts ``dayLength`` seconds of run time) plus
noise from a random generator seeded by its site, so that every run of the station gives the
same temperatures; it emits ``frost`` each time the temperature falls below zero.
"""

from __future__ import annotations

import math
import random
from typing import Any

from gen.weather import ThermometerBase


class StationThermometer(ThermometerBase):
    """Reads the weather every cycle of its component."""

    mean = 4.0  # degrees
    swing = 6.0  # degrees either side of the mean
    day_length = 20.0  # seconds of run time per day

    def registered(self, api: Any) -> None:
        self._noise = random.Random(self.site)

    def update(self, api: Any) -> None:
        seconds = (api.get_time().ns - api.get_start_time().ns) / 1e9
        daily = math.sin(2 * math.pi * seconds / self.day_length)
        reading = round(self.mean + self.swing * daily + self._noise.gauss(0, 0.5), 2)
        if reading < 0 <= self.temperature:
            self.events.frost.emit(reading)
        self.set_next_temperature(reading)
