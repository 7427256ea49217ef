"""The quantity unit registry (spec stl.md §10): 179 units, looked up by exact abbreviation.

Quantities travel as raw numbers in their declared unit; the factors serve conversions of unit
strings in configuration and display. Three factors deliberately differ from Sen, where Sen's are
physically wrong: prefixed ``m_sq`` (the prefix is squared), ``deg_per_s`` and ``rpm``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True, slots=True)
class Unit:
    """``reference = (value + offset_y) * factor + offset_x`` in the category's reference unit."""

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


_PREFIXES = (
    ("f", "femto", 1e-15),
    ("p", "pico", 1e-12),
    ("n", "nano", 1e-9),
    ("u", "micro", 1e-6),
    ("m", "milli", 1e-3),
    ("c", "centi", 1e-2),
    ("d", "deci", 1e-1),
    ("da", "deca", 1e1),
    ("h", "hecto", 1e2),
    ("k", "kilo", 1e3),
    ("M", "mega", 1e6),
    ("G", "giga", 1e9),
    ("T", "tera", 1e12),
    ("P", "peta", 1e15),
)

# (abbreviation, name, plural, category, exponent applied to the prefix factor)
_BASES = (
    ("m", "meter", "meters", "length", 1),
    ("s", "second", "seconds", "time", 1),
    ("rad", "radian", "radians", "angle", 1),
    ("k", "kelvin", "kelvin", "temperature", 1),
    ("g", "gram", "grams", "mass", 1),
    ("rad_per_s", "radians_per_second", "radians_per_second", "angularVelocity", 1),
    ("g_per_cm3", "grams_per_centimeters_cube", "grams_per_centimeters_cube", "density", 1),
    ("pa", "pascals", "pascals", "pressure", 1),
    ("m_sq", "square_meter", "square_meter", "area", 2),  # sengen rule: km_sq is 1e6 m_sq
    ("nw", "newton", "newton", "force", 1),
)

_OTHERS = (
    Unit("hz", "hertz", "hertz", "frequency", 1.0),
    Unit("m_per_s", "meters_per_second", "meters_per_second", "velocity", 1.0),
    Unit("dm_per_s", "decimeters_per_second", "decimeters_per_second", "velocity", 0.1),
    Unit(
        "m_per_s_sq", "meters_per_second_squared", "meters_per_second_squared", "acceleration", 1.0
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
    Unit("degF", "fahrenheit", "fahrenheit", "temperature", 5 / 9, 273.15, -32.0),
    Unit("kph", "km_per_hour", "km_per_hour", "velocity", 5 / 18),
    Unit("mph", "miles_per_hour", "miles_per_hour", "velocity", 0.44704),
    Unit("kn", "knot", "knots", "velocity", 1852 / 3600),
    Unit("ft_per_s", "feet_per_second", "feets_per_second", "velocity", 0.3048),
    Unit("ft_per_min", "feet_per_minute", "feets_per_minute", "velocity", 0.3048 / 60),
    Unit("deg_per_s", "degrees_per_second", "degrees_per_second", "angularVelocity", math.pi / 180),
    Unit("rpm", "revolutions_per_min", "revolutions_per_min", "angularVelocity", 2 * math.pi / 60),
    Unit("lb", "pound", "pounds", "mass", 453.59237),
    Unit("kg_per_m3", "kilograms_per_meters_cube", "kilograms_per_meters_cube", "density", 0.001),
)


def _build() -> dict[str, Unit]:
    units: dict[str, Unit] = {}
    for abbreviation, name, plural, category, exponent in _BASES:
        units[abbreviation] = Unit(abbreviation, name, plural, category, 1.0)
        for prefix, prefix_name, factor in _PREFIXES:
            units[prefix + abbreviation] = Unit(
                prefix + abbreviation,
                prefix_name + name,
                prefix_name + plural,
                category,
                factor**exponent,
            )
    for unit in _OTHERS:
        units[unit.abbreviation] = unit
    return units


UNITS: Mapping[str, Unit] = MappingProxyType(_build())
_BY_ANY_NAME = {key: u for u in UNITS.values() for key in (u.plural, u.name, u.abbreviation)}
_BY_FOLDED: dict[str, str] = {}
for _abbreviation in UNITS:
    _BY_FOLDED.setdefault(_abbreviation.lower(), _abbreviation)


def find_unit(abbreviation: str) -> Unit | None:
    """Exact, case-sensitive lookup by abbreviation, as STL does."""
    return UNITS.get(abbreviation)


def suggest_unit(abbreviation: str) -> str | None:
    """A registered abbreviation equal to ``abbreviation`` ignoring case (``MPa`` → ``Mpa``)."""
    if abbreviation in UNITS:
        return None
    return _BY_FOLDED.get(abbreviation.lower())


def find_unit_by_any_name(text: str) -> Unit | None:
    """By abbreviation, name or plural: the forms configuration strings may use."""
    return _BY_ANY_NAME.get(text)


def units_of_category(category: str) -> tuple[Unit, ...]:
    return tuple(u for u in UNITS.values() if u.category == category)


def convert(value: float, source: Unit, target: Unit) -> float:
    """Convert between two units of one category, through the reference unit."""
    if source.category != target.category:
        raise ValueError(
            f"cannot convert {source.abbreviation} ({source.category}) to "
            f"{target.abbreviation} ({target.category})"
        )
    return target.from_reference(source.to_reference(value))
