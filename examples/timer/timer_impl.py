"""Implementations of the ``timer`` STL classes (stl/timer/timer.stl) for timer.yaml.

- :class:`KitchenTimer` (``timer.KitchenTimer``) counts down by the time that passed since its
  previous cycle, ``now - last`` of ``api.get_time()``, never by its configured period: a cycle
  that follows skipped ones covers all of them, and a stepped run counts exactly the same.
- :class:`ImpatientCook` (``timer.ImpatientCook``) programs the timer through a proxy, switches
  it on, tries once to shorten it while it runs (the timer refuses) and waits for ``expired``.

The package ``gen.timer`` is generated from the STL with the settings that make ``program`` a
checked property: ``sengen build stl --out gen --settings codegen_settings.json``.
"""

from __future__ import annotations

import logging
from typing import Any

from gen.timer import CookBase, Running, Timer, TimerBase

from sengen.runtime import Call, CallError, Duration, RunApi, TimeStamp

ZERO = Duration(0)


class KitchenTimer(TimerBase):
    """Off: shows its program. On: counts down and, at zero, expires and switches off."""

    _last: TimeStamp | None
    _counting: bool

    def registered(self, api: RunApi) -> None:
        self._last = None
        self._counting = False

    def program_accepts_set(self, value: Duration) -> bool:
        # The checked property's hook: it runs for the owner's writes, for setter calls from
        # proxies and for the configuration. A switch-on pending in this cycle counts as on.
        return self.get_next_state() is Running.off and value >= ZERO

    def update(self, api: RunApi) -> None:
        now = api.get_time()
        # The first cycle has nothing to difference against: it contributes nothing, rather
        # than the whole time since the kernel started. `last` moves on every cycle, also
        # while the timer is off, so switching on never counts the time spent off.
        elapsed = now - (now if self._last is None else self._last)
        self._last = now
        if self.state is not Running.on:
            self._counting = False
            self.set_next_countdown(self.program)
            return
        # On since the previous commit: the first cycle that sees it counts from the program
        # (which may have changed in that same commit), later ones from the countdown.
        left = (self.countdown if self._counting else self.program) - elapsed
        self._counting = left > ZERO
        if self._counting:
            self.set_next_countdown(left)
            return
        self.set_next_countdown(ZERO)
        self.set_next_state(Running.off)
        self.events.expired.emit(self.program)


class ImpatientCook(CookBase):
    """Starts the first timer it finds, and tries to shorten it once while it runs."""

    _timer: Timer | None
    _started: bool
    _tried: bool
    _log: logging.Logger
    _api: RunApi

    def registered(self, api: RunApi) -> None:
        self._timer = None
        self._started = False
        self._tried = False
        self._log = api.logger
        self._api = api
        api.select("SELECT timer.Timer FROM local.kitchen", self._found)

    def _found(self, timers: list[Any]) -> None:
        if self._timer is None and timers:
            self._timer = timers[0]
            timers[0].events.expired.connect(self._expired)

    def update(self, api: RunApi) -> None:
        timer = self._timer
        if timer is None:
            return
        if not self._started and timer.state is Running.off:
            # Two setter calls, run by the timer's owner in this order: the program is
            # accepted because the timer is still off when it arrives.
            timer.set_next_program(self.cooking_time)
            timer.set_next_state(Running.on)
            self._started = True
        elif timer.state is Running.on and not self._tried:
            self._tried = True
            call = timer.set_next_program(self.cooking_time - Duration.parse("100 ms"))
            if call is not None:  # None only for the owner itself
                call.add_done_callback(self._refused)

    def _refused(self, call: Call[None]) -> None:
        try:
            call.result()
        except CallError as error:
            self.set_next_refusals(self.get_next_refusals() + 1)
            self._log.info("%s: the timer refused a shorter program: %s", self.name, error)

    def _expired(self, program: Duration) -> None:
        self.set_next_ready(True)
        seconds = (self._api.get_time() - self._api.get_start_time()).to_seconds()
        self._log.info(
            "%s: %s is ready after %s (heard at %.2f s)", self.name, self.dish, program, seconds
        )
