"""The quantity unit registry of STL (spec: stl.md §10).

Units are looked up by exact abbreviation; names and plurals only serve configuration strings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit; ``ref = (v + offset_y) * factor + offset_x`` gives its category's reference unit."""

    abbreviation: str
    name: str
    plural: str
    category: str
    factor: float
    offset_x: float = 0.0
    offset_y: float = 0.0

    def to_reference(self, value: float) -> float:
        return (value + self.offset_y) * self.factor + self.offset_x

    def from_reference(self, value: float) -> float:
        return (value - self.offset_x) / self.factor - self.offset_y


# (abbreviation, name, power of ten), in the spec's table order.
_PREFIXES: tuple[tuple[str, str, int], ...] = (
    ("f", "femto", -15),
    ("p", "pico", -12),
    ("n", "nano", -9),
    ("u", "micro", -6),
    ("m", "milli", -3),
    ("c", "centi", -2),
    ("d", "deci", -1),
    ("da", "deca", 1),
    ("h", "hecto", 2),
    ("k", "kilo", 3),
    ("M", "mega", 6),
    ("G", "giga", 9),
    ("T", "tera", 12),
    ("P", "peta", 15),
)

# (abbreviation, name, plural, category, prefix exponent multiplier).
# The multiplier is 2 for m_sq: sengen squares the prefix where Sen applies it linearly.
_BASES: tuple[tuple[str, str, str, str, int], ...] = (
    ("m", "meter", "meters", "length", 1),
    ("s", "second", "seconds", "time", 1),
    ("rad", "radian", "radians", "angle", 1),
    ("k", "kelvin", "kelvin", "temperature", 1),
    ("g", "gram", "grams", "mass", 1),
    ("rad_per_s", "radians_per_second", "radians_per_second", "angularVelocity", 1),
    (
        "g_per_cm3",
        "grams_per_centimeters_cube",
        "grams_per_centimeters_cube",
        "density",
        1,
    ),
    ("pa", "pascals", "pascals", "pressure", 1),
    ("m_sq", "square_meter", "square_meter", "area", 2),
    ("nw", "newton", "newton", "force", 1),
)

_OTHERS: tuple[Unit, ...] = (
    Unit("hz", "hertz", "hertz", "frequency", 1.0),
    Unit("m_per_s", "meters_per_second", "meters_per_second", "velocity", 1.0),
    Unit("dm_per_s", "decimeters_per_second", "decimeters_per_second", "velocity", 0.1),
    Unit(
        "m_per_s_sq",
        "meters_per_second_squared",
        "meters_per_second_squared",
        "acceleration",
        1.0,
    ),
    Unit(
        "rad_per_s_sq",
        "radians_per_second_squared",
        "radians_per_second_squared",
        "angularAcceleration",
        1.0,
    ),
    Unit("min", "min", "minutes", "time", 60.0),
    Unit("hour", "hour", "hours", "time", 3600.0),
    Unit("day", "day", "days", "time", 86400.0),
    Unit("week", "week", "weeks", "time", 604800.0),
    Unit("month", "month", "months", "time", 2.628e6),
    Unit("year", "year", "years", "time", 3.154e7),
    Unit("Nm", "newton_meter", "newton_meters", "torque", 1.0),
    Unit("ft", "foot", "feet", "length", 0.3048),
    Unit("mi", "mile", "miles", "length", 1609.344),
    Unit("nmi", "nauticalMile", "nauticalMiles", "length", 1852.0),
    Unit("deg", "degree", "degrees", "angle", math.pi / 180),
    Unit("arcmin", "arcminute", "arcminutes", "angle", math.pi / 10800),
    Unit("arcsec", "arcsecond", "arcseconds", "angle", math.pi / 648000),
    Unit("degC", "centigrade", "centigrades", "temperature", 1.0, offset_x=273.15),
    Unit(
        "degF",
        "fahrenheit",
        "fahrenheit",
        "temperature",
        5 / 9,
        offset_x=273.15,
        offset_y=-32.0,
    ),
    Unit("kph", "km_per_hour", "km_per_hour", "velocity", 5 / 18),
    Unit("mph", "miles_per_hour", "miles_per_hour", "velocity", 0.44704),
    Unit("kn", "knot", "knots", "velocity", 1852 / 3600),
    Unit("ft_per_s", "feet_per_second", "feets_per_second", "velocity", 0.3048),
    Unit("ft_per_min", "feet_per_minute", "feets_per_minute", "velocity", 0.3048 / 60),
    # sengen rule: Sen has the inverse factors 180/pi and 60/(2*pi), which are physically wrong.
    Unit("deg_per_s", "degrees_per_second", "degrees_per_second", "angularVelocity", math.pi / 180),
    Unit(
        "rpm",
        "revolutions_per_min",
        "revolutions_per_min",
        "angularVelocity",
        2 * math.pi / 60,
    ),
    Unit("lb", "pound", "pounds", "mass", 453.59237),
    Unit(
        "kg_per_m3",
        "kilograms_per_meters_cube",
        "kilograms_per_meters_cube",
        "density",
        0.001,
    ),
)


def _power_of_ten(exponent: int) -> float:
    # Parsing the decimal literal is correctly rounded; 10.0 ** e depends on the platform's pow().
    return float(f"1e{exponent}")


def _build() -> dict[str, Unit]:
    units: list[Unit] = []
    for abbreviation, name, plural, category, power in _BASES:
        units.append(Unit(abbreviation, name, plural, category, 1.0))
        for p_abbreviation, p_name, exponent in _PREFIXES:
            units.append(
                Unit(
                    p_abbreviation + abbreviation,
                    p_name + name,
                    p_name + plural,
                    category,
                    _power_of_ten(exponent * power),
                )
            )
    units.extend(_OTHERS)

    registry: dict[str, Unit] = {}
    names: set[str] = set()
    plurals: set[str] = set()
    for unit in units:
        # A clash would make lookups ambiguous, so it is a bug in the tables above.
        if unit.abbreviation in registry or unit.name in names or unit.plural in plurals:
            raise AssertionError(f"duplicate unit {unit.abbreviation!r}")
        registry[unit.abbreviation] = unit
        names.add(unit.name)
        plurals.add(unit.plural)
    return registry


UNITS: Mapping[str, Unit] = MappingProxyType(_build())

_BY_LOWER: dict[str, list[str]] = {}
_BY_NAME: dict[str, Unit] = {}
_BY_PLURAL: dict[str, Unit] = {}
_BY_CATEGORY: dict[str, list[Unit]] = {}
for _unit in UNITS.values():
    _BY_LOWER.setdefault(_unit.abbreviation.lower(), []).append(_unit.abbreviation)
    _BY_NAME[_unit.name] = _unit
    _BY_PLURAL[_unit.plural] = _unit
    _BY_CATEGORY.setdefault(_unit.category, []).append(_unit)
del _unit


def find_unit(abbreviation: str) -> Unit | None:
    """The unit with exactly this (case-sensitive) abbreviation, or None."""
    return UNITS.get(abbreviation)


def suggest_unit(abbreviation: str) -> str | None:
    """For an unregistered abbreviation, a registered one equal to it ignoring case, else None."""
    if abbreviation in UNITS:
        return None
    candidates = _BY_LOWER.get(abbreviation.lower())
    if not candidates:
        return None
    # Several units can differ only in case ('mpa', 'Mpa'): prefer the one agreeing with the input
    # in the most letters, so 'MPa' suggests 'Mpa'; max() keeps the first in registration order.
    return max(candidates, key=lambda c: sum(a == b for a, b in zip(c, abbreviation, strict=False)))


def find_unit_by_any_name(text: str) -> Unit | None:
    """The unit whose abbreviation, name or plural (in that priority) is exactly ``text``."""
    return UNITS.get(text) or _BY_NAME.get(text) or _BY_PLURAL.get(text)


def convert(value: float, source: Unit, target: Unit) -> float:
    """Convert ``value`` from ``source`` to ``target`` through their category's reference unit."""
    if source.category != target.category:
        raise ValueError(
            f"cannot convert from '{source.abbreviation}' ({source.category}) "
            f"to '{target.abbreviation}' ({target.category})"
        )
    if source == target:
        return value
    return target.from_reference(source.to_reference(value))


def units_of_category(category: str) -> tuple[Unit, ...]:
    """All units of ``category`` in registration order (empty for an unknown category)."""
    return tuple(_BY_CATEGORY.get(category, ()))
