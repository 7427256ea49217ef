"""Tests of the quantity unit registry (stl.md §10)."""

from __future__ import annotations

import math

import pytest

from sengen.stl.units import (
    UNITS,
    Unit,
    convert,
    find_unit,
    find_unit_by_any_name,
    suggest_unit,
    units_of_category,
)

PREFIXES = ("f", "p", "n", "u", "m", "c", "d", "da", "h", "k", "M", "G", "T", "P")
BASES = ("m", "s", "rad", "k", "g", "rad_per_s", "g_per_cm3", "pa", "m_sq", "nw")


def unit(abbreviation: str) -> Unit:
    found = find_unit(abbreviation)
    assert found is not None, abbreviation
    return found


def test_total_count() -> None:
    assert len(UNITS) == 179


def test_prefixed_family_has_150_units() -> None:
    family = [p + b for b in BASES for p in ("", *PREFIXES)]
    assert len(family) == 150
    assert all(a in UNITS for a in family)
    assert list(UNITS)[:150] == family
    assert len(UNITS) - len(family) == 29


def test_keys_match_abbreviations() -> None:
    assert all(key == u.abbreviation for key, u in UNITS.items())


def test_abbreviations_names_plurals_unique() -> None:
    units = list(UNITS.values())
    assert len({u.abbreviation for u in units}) == len(units)
    assert len({u.name for u in units}) == len(units)
    assert len({u.plural for u in units}) == len(units)


def test_no_other_prefixes() -> None:
    assert find_unit("Em") is None
    assert find_unit("am") is None
    assert find_unit("kft") is None


def test_pascal_spelling() -> None:
    assert find_unit("Mpa") is not None
    assert find_unit("MPa") is None
    assert suggest_unit("MPa") == "Mpa"


def test_kelvin_is_lowercase() -> None:
    assert unit("k").category == "temperature"
    assert find_unit("K") is None
    assert suggest_unit("K") == "k"


def test_suggest_only_for_unregistered_and_deterministic() -> None:
    assert suggest_unit("mm") is None
    assert suggest_unit("Mm") is None
    # 'MPa' matches 'mpa' and 'Mpa'; the one agreeing in more letters wins.
    assert suggest_unit("MPA") == "Mpa"
    assert suggest_unit("MM") == "Mm"
    assert suggest_unit("mM") == "mm"
    assert suggest_unit("NM") == "Nm"
    assert suggest_unit("nM") == "nm"
    assert suggest_unit("KM") == "km"
    assert suggest_unit("Kg") == "kg"
    assert suggest_unit("u16") is None
    assert suggest_unit("meter") is None


def test_prefixed_names() -> None:
    km = unit("km")
    assert (km.name, km.plural, km.category) == ("kilometer", "kilometers", "length")
    ms = unit("ms")
    assert (ms.name, ms.plural) == ("millisecond", "milliseconds")
    assert unit("kpa").plural == "kilopascals"
    assert unit("km_sq").name == "kilosquare_meter"
    assert unit("dak").name == "decakelvin"


def test_prefix_factors() -> None:
    assert unit("km").factor == pytest.approx(1e3)
    assert unit("fm").factor == pytest.approx(1e-15)
    assert unit("Pm").factor == pytest.approx(1e15)
    assert unit("dam").factor == pytest.approx(10.0)
    assert unit("Mpa").factor == pytest.approx(1e6)


def test_area_prefixes_are_squared() -> None:
    assert unit("m_sq").factor == 1.0
    assert unit("km_sq").factor == pytest.approx(1e6)
    assert unit("cm_sq").factor == pytest.approx(1e-4)
    assert convert(1.0, unit("km_sq"), unit("m_sq")) == pytest.approx(1e6)


def test_gram_is_mass_reference() -> None:
    assert unit("g").factor == 1.0
    assert unit("kg").factor == pytest.approx(1000.0)
    assert unit("lb").factor == pytest.approx(453.59237)
    assert convert(1.0, unit("lb"), unit("kg")) == pytest.approx(0.45359237)


def test_angular_velocity_factors() -> None:
    assert unit("deg_per_s").factor == pytest.approx(math.pi / 180)
    assert unit("rpm").factor == pytest.approx(2 * math.pi / 60)
    assert convert(60.0, unit("rpm"), unit("rad_per_s")) == pytest.approx(2 * math.pi)
    assert convert(180.0, unit("deg_per_s"), unit("rad_per_s")) == pytest.approx(math.pi)


def test_temperature_offsets() -> None:
    assert convert(0.0, unit("degC"), unit("k")) == pytest.approx(273.15)
    assert convert(212.0, unit("degF"), unit("degC")) == pytest.approx(100.0)
    assert convert(32.0, unit("degF"), unit("degC")) == pytest.approx(0.0, abs=1e-9)
    assert convert(373.15, unit("k"), unit("degF")) == pytest.approx(212.0)


def test_round_trip_through_reference() -> None:
    for u in UNITS.values():
        assert u.from_reference(u.to_reference(12.5)) == pytest.approx(12.5), u.abbreviation


def test_velocity_and_other_conversions() -> None:
    assert convert(36.0, unit("kph"), unit("m_per_s")) == pytest.approx(10.0)
    assert convert(1.0, unit("kn"), unit("kph")) == pytest.approx(1.852)
    assert convert(1.0, unit("hour"), unit("s")) == pytest.approx(3600.0)
    assert convert(90.0, unit("deg"), unit("rad")) == pytest.approx(math.pi / 2)
    assert convert(1.0, unit("mi"), unit("ft")) == pytest.approx(5280.0)


def test_convert_across_categories_raises() -> None:
    with pytest.raises(ValueError, match="length"):
        convert(1.0, unit("m"), unit("s"))


def test_lookup_by_any_name() -> None:
    assert find_unit_by_any_name("kilometers") is unit("km")
    assert find_unit_by_any_name("meter") is unit("m")
    assert find_unit_by_any_name("km") is unit("km")
    assert find_unit_by_any_name("feet") is unit("ft")
    assert find_unit_by_any_name("minutes") is unit("min")
    assert find_unit_by_any_name("Meter") is None
    assert find_unit_by_any_name("parsec") is None
    # Long names are not accepted as abbreviations.
    assert find_unit("meter") is None


def test_reference_units_have_factor_one() -> None:
    references = {
        "length": "m",
        "time": "s",
        "angle": "rad",
        "temperature": "k",
        "mass": "g",
        "angularVelocity": "rad_per_s",
        "density": "g_per_cm3",
        "pressure": "pa",
        "area": "m_sq",
        "force": "nw",
        "frequency": "hz",
        "velocity": "m_per_s",
        "acceleration": "m_per_s_sq",
        "angularAcceleration": "rad_per_s_sq",
        "torque": "Nm",
    }
    assert {u.category for u in UNITS.values()} == set(references)
    for category, abbreviation in references.items():
        ref = unit(abbreviation)
        assert ref.category == category
        assert (ref.factor, ref.offset_x, ref.offset_y) == (1.0, 0.0, 0.0)


def test_units_of_category() -> None:
    time_units = [u.abbreviation for u in units_of_category("time")]
    assert len(time_units) == 21
    assert time_units[0] == "s"
    assert time_units[-6:] == ["min", "hour", "day", "week", "month", "year"]
    assert [u.abbreviation for u in units_of_category("torque")] == ["Nm"]
    assert units_of_category("nonsense") == ()
