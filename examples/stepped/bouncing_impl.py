"""Implementations of the ``bouncing`` STL classes (stl/bouncing/bouncing.stl) for
stepped.yaml.

- :class:`FallingBall` (``bouncing.FallingBall``) integrates its motion over ``now - last`` of
  ``api.get_time()``. Under virtual time that is exactly one period per cycle, 10 ms at 100 Hz,
  whatever the wall clock does, so every run is the same.
- :class:`SamplingAltimeter` (``bouncing.SamplingAltimeter``) finds the balls by subscription,
  samples their heights at its own rate through proxies and logs each bounce it hears.

The package ``gen.bouncing`` is generated from the STL by ``sengen build stl --out gen`` (see
README.md).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from gen.bouncing import AltimeterBase, Ball, BallBase

from sengen.runtime import EventInfo, RunApi, TimeStamp


class FallingBall(BallBase):
    """Semi-implicit Euler: the velocity first, then the height with the new velocity."""

    _last: TimeStamp | None
    _cycles: int

    def registered(self, api: RunApi) -> None:
        self._last = None
        self._cycles = 0

    def update(self, api: RunApi) -> None:
        now = api.get_time()
        # The first cycle has nothing to difference against, so it moves nothing.
        dt = (now - (now if self._last is None else self._last)).to_seconds()
        self._last = now
        self._cycles += 1
        velocity = self.velocity - self.gravity * dt
        height = self.height + velocity * dt
        if height < 0.0:  # reached the floor during this step: back up, slower
            self.events.bounced.emit(-velocity)
            self.set_next_bounces(self.bounces + 1)
            height, velocity = 0.0, -velocity * self.restitution
        self.set_next_height(height)
        self.set_next_velocity(velocity)

    def unregistered(self, api: RunApi) -> None:
        seconds = 0.0 if self._last is None else (self._last - api.get_start_time()).to_seconds()
        api.logger.info(
            "%s: %d cycle(s) up to %.3f s, height %.4f m, %d bounce(s)",
            self.name,
            self._cycles,
            seconds,
            self.height,
            self.bounces,
        )


class SamplingAltimeter(AltimeterBase):
    """Samples every ball once per cycle; the highest height resets at each bounce."""

    _balls: list[Ball]
    _log: logging.Logger
    _start: TimeStamp

    def registered(self, api: RunApi) -> None:
        self._balls = []
        self._log = api.logger
        self._start = api.get_start_time()
        api.select(f"SELECT bouncing.Ball FROM {self.ball_bus}", self._found, self._lost)

    def _found(self, balls: list[Any]) -> None:
        for ball in balls:
            self._balls.append(ball)
            ball.events.bounced.connect(partial(self._bounced, ball.name), with_info=True)

    def _lost(self, balls: list[Any]) -> None:
        self._balls = [b for b in self._balls if b not in balls]

    def update(self, api: RunApi) -> None:
        # A proxy holds what its owner last committed, refreshed in this component's drain:
        # the ball's height as of the latest ball cycle at or before this one.
        for ball in self._balls:
            self.set_next_samples(self.get_next_samples() + 1)
            self.set_next_highest(max(self.get_next_highest(), ball.height))

    def _bounced(self, ball: str, info: EventInfo, speed: float) -> None:
        at = (TimeStamp(info.creation_time) - self._start).to_seconds()
        self._log.info(
            "%s bounced at %.3f s at %.3f m/s, after a highest sample of %.4f m",
            ball,
            at,
            speed,
            self.get_next_highest(),
        )
        self.set_next_highest(0.0)

    def unregistered(self, api: RunApi) -> None:
        api.logger.info("%s: %d sample(s)", self.name, self.samples)
