"""Implementations of the ``plant`` STL classes (stl/plant/plant.stl) for ``plant.yaml``.

Three components on the bus ``local.plant``, each at its own rate:

- ``pumps`` (10 Hz): a :class:`PumpModel` that clamps the commanded ``flowRate`` (a writable
  property, set by the controller through a proxy) to ``[0, maxFlow]`` and counts the
  controller's ``levelCrossed`` events;
- ``physics`` (50 Hz): a :class:`TankModel` that integrates its level from the pump's flow minus a
  constant drain over ``now - last`` of ``api.get_time()`` (0 on its first cycle);
- ``control`` (20 Hz): a :class:`LevelController` that discovers the tank and the pump through
  subscriptions, switches the pump between ``fillFlow`` and 0 to keep the level between
  ``lowLevel`` and ``highLevel``, and emits ``levelCrossed`` each time the level rises above
  ``highLevel``.

Each object logs one summary line when it leaves its bus at shut-down. The package ``gen.plant``
is generated from the STL by ``sengen build stl --out gen`` (see README.md).
"""

from __future__ import annotations

from typing import Any

from gen.plant import ControllerBase, Pump, PumpBase, Tank, TankBase

from sengen.runtime import RunApi

BUS = "local.plant"


def _seconds(api: RunApi) -> float:
    """The cycle time, in seconds since the component started."""
    return (api.get_time().ns - api.get_start_time().ns) / 1e9


class PumpModel(PumpBase):
    """Delivers the commanded flow, clamped to what the pump can do."""

    _alarms: int
    _cycles: int

    def registered(self, api: Any) -> None:
        self._alarms = 0
        self._cycles = 0
        api.select(f"SELECT plant.Controller FROM {BUS}", self._controllers_added)

    def _controllers_added(self, controllers: list[Any]) -> None:
        for controller in controllers:
            controller.events.level_crossed.connect(self._heard)

    def _heard(self, level: float, crossing: int) -> None:
        self._alarms += 1

    def update(self, api: Any) -> None:
        self._cycles += 1
        commanded = self.get_next_flow_rate()
        clamped = min(max(commanded, 0.0), self.max_flow)
        if clamped != commanded:
            self.set_next_flow_rate(clamped)
        if self._alarms != self.alarms:
            self.set_next_alarms(self._alarms)

    def unregistered(self, api: Any) -> None:
        api.logger.info(
            "pump %s summary: %d cycle(s), flow %.3f m3/s, %d alarm(s) heard",
            self.name,
            self._cycles,
            self.flow_rate,
            self._alarms,
        )


class TankModel(TankBase):
    """The level integrates (inflow - drain) / area over each cycle's time step."""

    _pump: Pump | None
    _last: int | None
    _cycles: int

    def registered(self, api: Any) -> None:
        self._pump = None
        self._last = None
        self._cycles = 0
        api.select(f"SELECT plant.Pump FROM {BUS}", self._pumps_added, self._pumps_removed)

    def _pumps_added(self, pumps: list[Any]) -> None:
        for pump in pumps:
            if isinstance(pump, Pump) and self._pump is None:
                self._pump = pump

    def _pumps_removed(self, pumps: list[Any]) -> None:
        if self._pump in pumps:
            self._pump = None

    def update(self, api: Any) -> None:
        now = api.get_time().ns
        dt = 0.0 if self._last is None else (now - self._last) / 1e9
        self._last = now
        self._cycles += 1
        inflow = self._pump.flow_rate if self._pump is not None else 0.0
        level = self.level + (inflow - self.drain) * dt / self.area
        self.set_next_level(max(level, 0.0))
        self.set_next_inflow(inflow)

    def unregistered(self, api: Any) -> None:
        api.logger.info(
            "tank %s summary: %d cycle(s), level %.3f m", self.name, self._cycles, self.level
        )


class LevelController(ControllerBase):
    """On/off control with hysteresis: fill below ``lowLevel``, stop above ``highLevel``."""

    _tank: Tank | None
    _pump: Pump | None
    _command: float | None
    _commands: int
    _above: bool
    _cycles: int

    def registered(self, api: Any) -> None:
        self._cycles = 0
        self._tank = None
        self._pump = None
        self._command = None
        self._commands = 0
        self._above = False
        api.select(f"SELECT plant.Tank FROM {BUS}", self._found, self._lost)
        api.select(f"SELECT plant.Pump FROM {BUS}", self._found, self._lost)

    def _found(self, objects: list[Any]) -> None:
        for obj in objects:
            if isinstance(obj, Tank) and self._tank is None:
                self._tank = obj
            elif isinstance(obj, Pump) and self._pump is None:
                self._pump = obj

    def _lost(self, objects: list[Any]) -> None:
        if self._tank in objects:
            self._tank = None
        if self._pump in objects:
            self._pump = None

    def _set_pump(self, api: RunApi, flow: float) -> None:
        if self._pump is None or flow == self._command:
            return
        self._pump.set_next_flow_rate(flow)
        self._command = flow
        self._commands += 1
        api.logger.debug("pump -> %.3f m3/s at %.3f s", flow, _seconds(api))

    def update(self, api: Any) -> None:
        self._cycles += 1
        if self._tank is None:
            return
        level = self._tank.level
        if level > self.get_next_max_level():
            self.set_next_max_level(level)
        if level >= self.high_level and not self._above:
            self._above = True
            crossings = self.get_next_crossings() + 1
            self.set_next_crossings(crossings)
            self.events.level_crossed.emit(level, crossings)
            if crossings == 1:
                api.logger.info(
                    "level %.3f m crossed the threshold %.3f m at %.3f s",
                    level,
                    self.high_level,
                    _seconds(api),
                )
        elif level <= self.low_level:
            self._above = False
        self._set_pump(api, 0.0 if self._above else self.fill_flow)

    def unregistered(self, api: Any) -> None:
        api.logger.info(
            "controller %s summary: %d cycle(s), %d crossing(s), max level %.3f m,"
            " threshold %.3f m, %d pump command(s)",
            self.name,
            self._cycles,
            self.get_next_crossings(),
            self.get_next_max_level(),
            self.high_level,
            self._commands,
        )
