"""Implementations of the ``pc`` STL classes (stl/pc/pc.stl) for the two processes.

- the producer process (``producer.yaml``) cycles :class:`CounterModel` objects: each adds its
  writable ``step`` to ``count`` every cycle, emits ``reached`` when ``count`` passes a multiple
  of ``every``, answers ``scaled(factor)`` with ``count * factor``, and logs the watchers it
  discovers on its bus (the other direction of discovery);
- the consumer process (``consumer.yaml``) publishes a :class:`WatcherModel` that subscribes to
  every ``pc.Counter`` on its own bus. It reads the counters through remote proxies, listens to
  their ``reached`` events, calls ``scaled`` every ``callEvery`` cycles and, once per counter,
  sets the counter's ``step`` to ``newStep`` through the proxy (a call to the other process).

Everything the consumer learns is logged by ``sengen.component.<component>``, one line per
fact, so that the run can be checked from the log (``tests/test_example_remote.py``). The
package ``gen.pc`` is generated from the STL by ``sengen build stl --out gen`` (see README.md).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from gen.pc import Counter, CounterBase, Watcher, WatcherBase

from sengen.runtime import Call


class CounterModel(CounterBase):
    """Adds ``step`` to ``count`` every cycle; ``reached`` at every multiple of ``every``."""

    _log: logging.Logger
    _step_seen: int
    _reached: int
    _served: int
    _watchers: int

    def registered(self, api: Any) -> None:
        self._log = api.logger
        self._step_seen = self.step
        self._reached = 0
        self._served = 0
        self._watchers = 0
        api.select(f"SELECT pc.Watcher FROM {self.bus}", self._joined, self._left)

    def _joined(self, watchers: list[Watcher]) -> None:
        for watcher in watchers:
            self._watchers += 1
            self._log.info("counter %s: watcher %s joined", self.name, watcher.name)

    def _left(self, watchers: list[Watcher]) -> None:
        for watcher in watchers:
            self._log.info("counter %s: watcher %s left", self.name, watcher.name)

    def update(self, api: Any) -> None:
        step = self.step  # a setter call of the consumer is committed by now
        if step != self._step_seen:
            self._log.info(
                "counter %s: step changed from %d to %d", self.name, self._step_seen, step
            )
            self._step_seen = step
        before = self.count
        count = before + step
        self.set_next_count(count)
        if count // self.every > before // self.every:
            self._reached += 1
            self.events.reached.emit(count)

    def scaled_impl(self, factor: int) -> int:
        self._served += 1
        return self.count * factor

    def unregistered(self, api: Any) -> None:
        api.logger.info(
            "counter %s summary: count %d, step %d, %d event(s), %d call(s) served,"
            " %d watcher(s) seen",
            self.name,
            self.count,
            self.step,
            self._reached,
            self._served,
            self._watchers,
        )


class WatcherModel(WatcherBase):
    """Watches every ``pc.Counter`` on its bus and logs what it sees."""

    _log: logging.Logger
    _factor: int
    _new_step: int
    _call_every: int
    _cycles: int
    _discovered: int
    _counters: dict[str, Counter]
    _found_at: dict[str, int]
    _asked: set[str]
    _last: dict[str, int]
    _heard: int
    _results: int

    def registered(self, api: Any) -> None:
        config = api.get_config()
        self._log = api.logger
        self._factor = int(config.get("factor", 3))
        self._new_step = int(config.get("newStep", 2))
        self._call_every = int(config.get("callEvery", 5))
        self._cycles = 0
        self._discovered = 0
        self._counters = {}
        self._found_at = {}
        self._asked = set()
        self._last = {}
        self._heard = 0
        self._results = 0
        api.select(f"SELECT pc.Counter FROM {self.bus}", self._found, self._gone)

    # -- discovery, properties and events (in the consumer's drain) ---------------------------

    def _found(self, counters: list[Counter]) -> None:
        for counter in counters:
            name = counter.name
            self._log.info(
                "discovered counter %s on %s: label '%s', every %d, step %d, count %d",
                name,
                counter.bus,
                counter.label,
                counter.every,
                counter.step,
                counter.count,
            )
            self._discovered += 1
            self._counters[name] = counter
            self._found_at[name] = self._cycles
            self._last[name] = counter.count
            counter.on_count_changed(functools.partial(self._counted, name))
            counter.on_step_changed(functools.partial(self._stepped, name))
            counter.events.reached.connect(functools.partial(self._reached, name))

    def _gone(self, counters: list[Counter]) -> None:
        for counter in counters:
            name = counter.name
            self._counters.pop(name, None)
            self._asked.discard(name)  # a counter published again under this name is new
            self._log.info("counter %s removed (last count %d)", name, self._last.get(name, 0))

    def _counted(self, name: str, count: int) -> None:
        self._last[name] = count

    def _stepped(self, name: str, step: int) -> None:
        self._log.info("counter %s now steps by %d", name, step)

    def _reached(self, name: str, count: int) -> None:
        self._heard += 1
        self._log.info("counter %s reached %d", name, count)

    # -- calls to the other process ------------------------------------------------------------

    def update(self, api: Any) -> None:
        self._cycles += 1
        for name, counter in self._counters.items():
            age = self._cycles - self._found_at[name]
            if name not in self._asked and age >= 2:
                self._asked.add(name)
                self._log.info("asking counter %s to step by %d", name, self._new_step)
                counter.set_next_step(self._new_step)
            if age % self._call_every == 0:
                seen = counter.count
                counter.scaled(self._factor, on_result=functools.partial(self._result, name, seen))
        self.set_next_counters(self._discovered)
        self.set_next_heard(self._heard)
        self.set_next_results(self._results)

    def _result(self, name: str, seen: int, call: Call[int]) -> None:
        error = call.exception()
        if error is not None:
            self._log.info("counter %s: scaled(%d) failed: %s", name, self._factor, error)
            return
        self._results += 1
        self._log.info(
            "counter %s: scaled(%d) = %d (count %d when called)",
            name,
            self._factor,
            call.result(),
            seen,
        )

    def unregistered(self, api: Any) -> None:
        api.logger.info(
            "watcher %s summary: %d counter(s) discovered, %d event(s) heard, %d result(s),"
            " last counts %s",
            self.name,
            self._discovered,
            self._heard,
            self._results,
            ", ".join(f"{n}={c}" for n, c in sorted(self._last.items())) or "none",
        )
