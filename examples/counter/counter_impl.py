"""The implementation of the ``counter`` STL class (stl/counter/counter.stl) for counter.yaml.

:class:`StepCounter` registers itself as ``counter.StepCounter``, the name the configuration
uses. The package ``gen.counter`` is generated from the STL by ``sengen build stl --out gen``
(see README.md).
"""

from __future__ import annotations

from gen.counter import CounterBase

from sengen.runtime import RunApi


class StepCounter(CounterBase):
    """Adds ``step`` to ``value`` on every cycle and announces each multiple of ``milestone``
    that ``value`` passes."""

    _cycles: int
    _milestones: int

    def registered(self, api: RunApi) -> None:
        self._cycles = 0
        self._milestones = 0

    def update(self, api: RunApi) -> None:
        self._cycles += 1
        # `value` is what the previous cycle committed; the new value becomes visible (to this
        # object too) at this cycle's commit.
        value = self.value + self.step
        self.set_next_value(value)
        reached = value // self.milestone
        if reached != self.value // self.milestone:
            self._milestones += 1
            self.events.milestone_reached.emit(reached * self.milestone, value)

    def describe_impl(self) -> str:
        return f"{self.name} counts by {self.step} and is at {self.value}"

    def unregistered(self, api: RunApi) -> None:
        api.logger.info(
            "%s after %d cycle(s), %d milestone(s)",
            self.describe_impl(),
            self._cycles,
            self._milestones,
        )
