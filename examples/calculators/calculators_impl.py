"""Implementations of the ``calculators`` STL classes (stl/calculators/calculators.stl) for
calculators.yaml.

- :class:`PocketCalculator` (``calculators.PocketCalculator``) answers calls in its owner's
  drain, in the order they arrived.
- :class:`CheckingClient` (``calculators.CheckingClient``) finds every calculator on its
  ``calculatorBus`` by subscription and, in each of its cycles, sends every calculator one
  round of three calls without waiting for any answer. Each answer arrives later, in a drain
  of the client, and is checked against the client's own arithmetic.

The package ``gen.calculators`` is generated from the STL by ``sengen build stl --out gen``
(see README.md).
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from gen.calculators import Calculator, CalculatorBase, ClientBase

from sengen.runtime import Call, CallError, RunApi


class PocketCalculator(CalculatorBase):
    """Shows each result on its display and counts its operations."""

    def _show(self, value: float) -> float:
        self.set_next_display(value)
        self.set_next_operations(self.get_next_operations() + 1)
        return value

    def add_impl(self, a: float, b: float) -> float:
        return self._show(a + b)

    def add_to_display_impl(self, a: float) -> float:
        # `display` is what the last commit showed; an earlier call of this same drain may
        # have shown something since, which only get_next_display() sees.
        return self._show(self.get_next_display() + a)

    def divide_impl(self, a: float, b: float) -> float:
        if b == 0:
            self.set_next_operations(self.get_next_operations() + 1)
            self.events.division_by_zero.emit(a)
            # The caller receives this as CallFailed; the calculator keeps running.
            raise ZeroDivisionError(f"{a:g} / 0")
        return self._show(a / b)

    def unregistered(self, api: RunApi) -> None:
        api.logger.info(
            "%s (%s): %d operation(s), display %g",
            self.name,
            self.model,
            self.operations,
            self.display,
        )


class CheckingClient(ClientBase):
    """Keeps every calculator it finds busy, and counts what comes back."""

    _calculators: list[Calculator]
    _rounds: int
    _log: logging.Logger

    def registered(self, api: RunApi) -> None:
        self._calculators = []
        self._rounds = 0
        self._log = api.logger
        api.select(
            f"SELECT calculators.Calculator FROM {self.calculator_bus}", self._found, self._lost
        )

    def _found(self, calculators: list[Any]) -> None:
        for calculator in calculators:
            self._calculators.append(calculator)
            calculator.events.division_by_zero.connect(self._alarm)
        self.set_next_calculators(len(self._calculators))

    def _lost(self, calculators: list[Any]) -> None:
        self._calculators = [c for c in self._calculators if c not in calculators]
        self.set_next_calculators(len(self._calculators))

    def _alarm(self, dividend: float) -> None:
        self.set_next_alarms(self.get_next_alarms() + 1)

    def update(self, api: RunApi) -> None:
        if not self._calculators:
            return
        self._rounds += 1
        k = float(self._rounds)
        divisor = float(self._rounds % 3)  # every third round divides by zero
        for calc in self._calculators:
            # Sent at this cycle's commit; each calculator runs them in its next drain, in
            # this order, so addToDisplay continues from the add just before it.
            calc.add(k, k, on_result=partial(self._check, calc.name, f"{k:g} + {k:g}", 2 * k))
            calc.add_to_display(
                0.5, on_result=partial(self._check, calc.name, "+ 0.5", 2 * k + 0.5)
            )
            quotient = k / divisor if divisor else None
            calc.divide(
                k,
                divisor,
                on_result=partial(self._check, calc.name, f"{k:g} / {divisor:g}", quotient),
            )

    def _check(
        self, calculator: str, question: str, expected: float | None, call: Call[float]
    ) -> None:
        """An answer, in the drain where it arrived; ``expected`` None: the call must fail."""
        answer: float | None
        try:
            answer = call.result()
            self.set_next_answered(self.get_next_answered() + 1)
        except CallError:
            answer = None
            self.set_next_failed(self.get_next_failed() + 1)
        if answer != expected:
            self.set_next_wrong(self.get_next_wrong() + 1)
            self._log.error("%s: %s gave %s, expected %s", calculator, question, answer, expected)

    def unregistered(self, api: RunApi) -> None:
        api.logger.info(
            "%s: %d round(s) of calls, %d answered, %d failed, %d alarm(s), %d wrong",
            self.name,
            self._rounds,
            self.answered,
            self.failed,
            self.alarms,
            self.wrong,
        )
