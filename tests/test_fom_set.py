"""The hla_fom and dummy_entities sets of the FOM corpus (fom.md §12.3, §12.4, §12.6): per-module
counts, dependencies and exact facts, independent of the order folders are listed in.

Expected values are the spec's tables, never what the implementation prints.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import program_of
from corpus_layout import (
    FOM_CORPUS_VARIABLE,
    FOM_MISSING,
    REQUIRE_VARIABLE,
    corpus_root,
    fom_corpus_root,
)

from sengen.stl import model as m
from sengen.stl.fom.fomset import FomSet
from sengen.stl.loader import Loader, LoadResult
from sengen.stl.settings import Settings

HLA_FOM = "examples/packages/hla_fom"
W3 = "'ignore' has no effect here: the interaction's whole struct 'rpr.MunitionDetonation' is used"

# §12.3: classes, structs (record + interaction), aliases, quantities, sequences, variants,
# enums, optionals; then the total.
TABLE = """
link16/Link_16_v2.0.xml 0 16 4 0 4 0 0 0 24
netn/NETN-AIS.xml 5 29 9 0 2 0 5 3 53
netn/NETN-BASE.xml 0 5 11 0 11 3 9 14 53
netn/NETN-CBRN.xml 15 22 6 0 11 0 7 0 61
netn/NETN-COM.xml 7 9 1 0 6 3 4 3 33
netn/NETN-ETR.xml 0 53 0 0 5 1 9 0 68
netn/NETN-LOG.xml 0 24 0 0 2 0 2 2 30
netn/NETN-METOC.xml 8 22 3 0 0 1 9 14 57
netn/NETN-MRM.xml 1 18 1 0 3 0 5 3 31
netn/NETN-ORG.xml 6 9 1 0 15 1 9 9 50
netn/NETN-Physical.xml 11 0 0 0 0 0 0 0 11
netn/NETN-SE.xml 6 0 0 0 0 1 0 0 7
netn/NETN-TMR.xml 0 6 0 0 1 0 2 1 10
rpr/RPR-Aggregate_v2.0.xml 1 3 0 0 4 0 0 0 8
rpr/RPR-Base_v2.0.xml 2 26 14 18 21 3 0 6 90
rpr/RPR-Communication_v2.0.xml 2 13 3 2 3 3 1 0 27
rpr/RPR-DER_v2.0.xml 13 1 2 0 1 0 0 0 17
rpr/RPR-Enumerations_v2.0.xml 0 0 0 0 0 0 107 3 110
rpr/RPR-Foundation_v2.0.xml 0 0 0 0 1 0 0 0 1
rpr/RPR-Logistics_v2.0.xml 0 7 0 0 1 0 0 0 8
rpr/RPR-Minefield_v2.0.xml 4 7 2 0 10 0 0 0 23
rpr/RPR-Physical_v2.0.xml 18 6 0 2 3 0 0 0 29
rpr/RPR-SE_v2.0.xml 18 47 0 0 7 3 1 1 77
rpr/RPR-SIMAN_v2.0.xml 0 46 0 0 6 0 0 0 52
rpr/RPR-Switches_v2.0.xml 0 0 0 0 0 0 0 0 0
rpr/RPR-UA_v2.0.xml 5 2 1 0 1 0 0 0 9
rpr/RPR-Warfare_v2.0.xml 0 2 0 0 0 0 0 0 2
"""
KINDS = (
    m.ClassType,
    m.StructType,
    m.AliasType,
    m.QuantityType,
    m.SequenceType,
    m.VariantType,
    m.EnumType,
    m.OptionalType,
)
# §12.3: declared dependencies, then mapping dependencies (the hla file left out).
IMPORTS = {
    "RPR-Foundation_v2.0": [],
    "RPR-Switches_v2.0": [],
    "RPR-Enumerations_v2.0": ["RPR-Foundation_v2.0"],
    "RPR-Base_v2.0": ["RPR-Enumerations_v2.0"],
    **{
        f"RPR-{name}_v2.0": ["RPR-Base_v2.0"]
        for name in "Aggregate Communication DER Logistics SE SIMAN UA Warfare".split()
    },
    "RPR-Physical_v2.0": ["RPR-Base_v2.0", "RPR-Warfare_v2.0"],
    "RPR-Minefield_v2.0": ["RPR-SE_v2.0"],
    "NETN-BASE": ["RPR-Base_v2.0"],
    **{f"NETN-{name}": ["NETN-BASE"] for name in "COM ETR LOG METOC ORG TMR".split()},
    "NETN-AIS": ["NETN-BASE", "RPR-Communication_v2.0", "NETN-ORG", "NETN-ETR"],
    "NETN-CBRN": ["NETN-Physical"],
    "NETN-MRM": ["NETN-BASE", "RPR-Aggregate_v2.0"],
    "NETN-Physical": ["NETN-BASE", "RPR-Physical_v2.0"],
    "NETN-SE": ["NETN-BASE", "RPR-SE_v2.0"],
    "Link_16_v2.0": ["RPR-Communication_v2.0"],
}


def load_set(include: Path, spelled: str, tmp: Path) -> tuple[LoadResult, FomSet]:
    """An STL file importing ``spelled`` with ``include`` on the include path, loaded; the
    result and the one FOM set it loaded."""
    source = tmp / "probe.stl"
    source.write_text(f'import "{spelled}"\npackage probe;\n', encoding="utf-8")
    loader = Loader([include], Settings())
    loader.load_input(source, tmp)
    (loaded,) = loader.fom.sets.values()
    return loader.result(), loaded


@pytest.fixture(scope="module")
def hla_fom(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadResult, FomSet]:
    tmp = tmp_path_factory.mktemp("hla_fom")
    return load_set(fom_corpus_root() / HLA_FOM, "rpr/RPR-Physical_v2.0.xml", tmp)


@pytest.fixture(scope="module")
def types(hla_fom: tuple[LoadResult, FomSet]) -> dict[str, m.UserType]:
    _, loaded = hla_fom
    return {t.qualified_name: t for s in loaded.scopes.values() for t in s.types}


def _counts(loaded: FomSet) -> dict[str, list[int]]:
    result = {}
    for path, scope in loaded.scopes.items():
        kinds = Counter(next(k for k in KINDS if isinstance(t, k)) for t in scope.types)
        result[f"{path.parent.name}/{path.name}"] = [kinds[k] for k in KINDS] + [len(scope.types)]
    return result


def test_the_set_loads_with_two_w3_warnings_only(hla_fom: tuple[LoadResult, FomSet]) -> None:
    result, loaded = hla_fom
    assert result.program is not None
    found = [
        (d.severity.value, Path(d.file).name, d.line, d.column, d.message)
        for d in result.diagnostics
    ]
    assert found == [
        ("warning", "base_mappings.xml", 5, 13, W3),
        ("warning", "base_mappings.xml", 6, 13, W3),
    ]  # fmt: skip
    assert [n.message for n in result.diagnostics[0].notes] == ["imported from here"]
    assert len(loaded.scopes) == 27 and len(loaded.mapping_scopes) == 1


def test_per_module_counts(hla_fom: tuple[LoadResult, FomSet]) -> None:
    expected = {
        line.split()[0]: [int(n) for n in line.split()[1:]] for line in TABLE.strip().splitlines()
    }
    assert _counts(hla_fom[1]) == expected


def test_set_totals(hla_fom: tuple[LoadResult, FomSet], types: dict[str, m.UserType]) -> None:
    """§12.3: 941 types, 574 properties, 4772 enumerators, 229 interaction structs."""
    values = list(types.values())
    assert len(values) == 941
    assert sum(len(t.properties) for t in values if isinstance(t, m.ClassType)) == 574
    assert sum(len(t.enumerators) for t in values if isinstance(t, m.EnumType)) == 4772
    program = hla_fom[0].program
    assert program is not None
    (hla,) = [f for f in program.files if f.package == "hla"]
    assert len(hla.types) == 14
    # Every defined interaction but one (§8.4) has a struct, located at its `name`.
    structs = [t for t in values if isinstance(t, m.StructType)]
    record_structs = sum(int(line.split()[2]) for line in TABLE.strip().splitlines())
    assert len(structs) == record_structs == 373


def test_module_imports(hla_fom: tuple[LoadResult, FomSet]) -> None:
    _, loaded = hla_fom
    hla_path = next(iter(loaded.scopes.values())).imports[-1]
    actual = {}
    for path, scope in loaded.scopes.items():
        assert scope.imports[-1] == hla_path
        actual[path.stem] = [p.stem for p in scope.imports[:-1]]
    assert actual == IMPORTS


def test_program_of_dummy_aircraft_like_import(hla_fom: tuple[LoadResult, FomSet]) -> None:
    """§2.6, §12.5: the hla file and five modules join the program, dependencies first."""
    program = hla_fom[0].program
    assert program is not None
    assert [f.display.rsplit("/", 1)[-1] for f in program.files] == [
        "hla.stl",
        "RPR-Foundation_v2.0.xml",
        "RPR-Enumerations_v2.0.xml",
        "RPR-Base_v2.0.xml",
        "RPR-Physical_v2.0.xml",
        "RPR-Warfare_v2.0.xml",
        "probe.stl",
    ]
    physical = program.files[4]
    assert physical.relative_path == "rpr/RPR-Physical_v2.0.xml"
    assert physical.package == "rpr"


def _props(cls: m.ClassType) -> list[tuple[str, str, str, str]]:
    return [
        (p.name, p.type.qualified_name, p.category.value, p.transport.value) for p in cls.properties
    ]


def test_base_entity_and_aircraft(types: dict[str, m.UserType]) -> None:
    base = types["rpr.BaseEntity"]
    assert isinstance(base, m.ClassType)
    assert (base.location.line, base.location.column) == (61, 23)
    assert base.parent is not None and base.parent.qualified_name == "hla.ObjectRoot"
    assert _props(base) == [
        ("entityType", "rpr.EntityTypeStruct", "staticRW", "multicast"),
        ("entityIdentifier", "rpr.EntityIdentifierStruct", "staticRW", "multicast"),
        ("isPartOf", "rpr.IsPartOfStruct", "dynamicRO", "multicast"),
        ("spatial", "rpr.SpatialVariantStruct", "dynamicRO", "multicast"),
        ("relativeSpatial", "rpr.SpatialVariantStruct", "dynamicRO", "multicast"),
    ]
    assert [a.name for a in base.constructor.arguments] == ["entityType", "entityIdentifier"]
    assert not base.events and not base.methods
    aircraft = types["rpr.Aircraft"]
    assert isinstance(aircraft, m.ClassType)
    assert (aircraft.location.line, aircraft.location.column) == (522, 35)
    assert [c.qualified_name for c in aircraft.ancestors()] == [
        "rpr.Platform",
        "rpr.PhysicalEntity",
        "rpr.BaseEntity",
        "hla.ObjectRoot",
    ]
    assert not aircraft.properties
    assert len(aircraft.all_properties) == 47
    assert aircraft.all_properties[0].name == "rtiId"
    assert [a.name for a in aircraft.constructor.arguments] == [
        "entityType",
        "entityIdentifier",
        "alternateEntityType",
    ]
    physical = types["rpr.PhysicalEntity"]
    assert isinstance(physical, m.ClassType)
    assert [e.name for e in physical.events] == ["collision", "collisionElastic", "weaponFire"]
    assert [len(e.arguments) for e in physical.events] == [5, 13, 12]
    assert {e.transport.value for e in physical.events} == {"multicast"}
    collision = physical.events[0]
    assert [(a.name, a.type.qualified_name) for a in collision.arguments] == [
        ("collidingObjectIdentifier", "string"),
        ("issuingObjectMass", "rpr.MassKilogramFloat32"),
        ("issuingObjectVelocityVector", "rpr.VelocityVectorStruct"),
        ("collisionType", "rpr.CollisionTypeEnum8"),
        ("collisionLocation", "rpr.RelativePositionStruct"),
    ]
    assert collision.location.file.endswith("base_mappings.xml")
    own = {p.name: p for p in physical.properties}
    assert len(own) == 25
    assert own["engineSmokeOn"].type.name == "bool"
    assert own["liveEntityMeasuredSpeed"].type.qualified_name == (
        "rpr.VelocityDecimeterPerSecondInteger16"
    )


def test_munition_and_metoc_root(types: dict[str, m.UserType]) -> None:
    munition = types["rpr.Munition"]
    assert isinstance(munition, m.ClassType)
    (flash,) = [p for p in munition.properties if p.name == "launcherFlashPresent"]
    assert flash.category is m.PropertyCategory.DYNAMIC_RW
    (detonation,) = munition.events
    assert detonation.name == "munitionDetonation"
    assert detonation.transport is m.TransportMode.MULTICAST
    (args,) = detonation.arguments
    assert args.name == "args" and isinstance(args.type, m.StructType)
    assert args.type.qualified_name == "rpr.MunitionDetonation"
    assert len(args.type.fields) == 14  # the ignores change nothing (§9.5)
    root = types["netn.METOCRoot"]
    assert isinstance(root, m.ClassType)
    assert _props(root) == [
        ("uniqueId", "netn.UUID", "staticRW", "confirmed"),
        ("nameNonSen", "hla.MaybeString", "staticRW", "confirmed"),
    ]


def test_methods_from_base_mappings(types: dict[str, m.UserType]) -> None:
    """§9.9: eleven methods, unicast, void, not local, the same five parameters ignored."""
    methods = [f for t in types.values() if isinstance(t, m.ClassType) for f in t.methods]
    assert len(methods) == 11
    assert {(f.transport.value, f.return_type, f.local, f.const) for f in methods} == {
        ("unicast", None, False, False)
    }
    ignored = {"objectIdentifier", "referencedObjectIdentifier", "objectType"}
    assert not any(a.name in ignored for f in methods for a in f.arguments)
    breach = types["rpr.BreachableLinearObject"]
    assert isinstance(breach, m.ClassType)
    assert [(f.name, [a.name for a in f.arguments]) for f in breach.methods] == [
        ("breachableLinearObjectTransaction", ["forceIdentifier", "segmentRecords"])
    ]


def test_data_types(types: dict[str, m.UserType]) -> None:
    dead = types["rpr.DeadReckoningAlgorithmEnum8"]
    assert isinstance(dead, m.EnumType) and dead.storage.name == "u8"
    assert [(e.name, e.key) for e in dead.enumerators] == list(
        zip(
            "other staticVal drmFpw drmRpw drmRvw drmFvw drmFpb drmRpb drmRvb drmFvb".split(),
            range(10),
            strict=True,
        )
    )
    datum = types["rpr.DatumIdentifierEnum32"]
    assert isinstance(datum, m.EnumType)
    assert len(datum.enumerators) == 763
    names = {e.name: e.key for e in datum.enumerators}
    assert names["entityTypeKind"] == 11110 and names["entityTypeKind1"] == 240003
    assert names["classVal"] == 240138 and names["windDirection1"] == 240115
    spatial = types["rpr.SpatialVariantStruct"]
    assert isinstance(spatial, m.VariantType)
    assert (spatial.location.line, spatial.location.column) == (1220, 23)
    shapes = "Static FP RP RV FV FP RP RV FV".split()
    assert [(a.key, a.type.qualified_name) for a in spatial.alternatives] == [
        (i, f"rpr.Spatial{s}Struct") for i, s in enumerate(shapes)
    ]
    assert [a.hla_name for a in spatial.alternatives] == [
        "SpatialStatic", "SpatialFPW", "SpatialRPW", "SpatialRVW", "SpatialFVW",
        "SpatialFPB", "SpatialRPB", "SpatialRVB", "SpatialFVB",
    ]  # fmt: skip
    geo = types["netn.GeoReferenceVariant"]
    assert isinstance(geo, m.VariantType)
    assert [a.type.qualified_name for a in geo.alternatives] == [
        "netn.GeodeticLocation", "netn.GeodeticCircle", "netn.GeodeticQuadrangle",
        "netn.GeodeticPolygon", "netn.UUID", "rpr.EntityIdentifierStruct", "string",
    ]  # fmt: skip
    marking = types["rpr.MarkingArray11"]
    assert isinstance(marking, m.SequenceType) and marking.max_size == 11
    tag = types["rpr.RPRUserDefinedTag"]
    assert isinstance(tag, m.SequenceType) and tag.max_size is None
    assert tag.element.name == "u8"
    text = types["netn.Text64"]
    assert isinstance(text, m.SequenceType) and (text.element.name, text.max_size) == ("u16", 64)
    speed = types["rpr.VelocityDecimeterPerSecondInteger16"]
    assert isinstance(speed, m.QuantityType)
    assert (speed.value_type.name, speed.unit_name, speed.minimum) == ("u16", "dm_per_s", None)
    assert speed.unit is not None
    octet = types["rpr.Octet"]
    assert isinstance(octet, m.AliasType) and octet.target.name == "u8"
    weather = types["netn.WeatherCondition"]
    assert isinstance(weather, m.StructType)
    assert [(f.name, f.type.qualified_name) for f in weather.fields][:3] == [
        ("eventId", "netn.TransactionId"),
        ("environmentObjectId", "netn.MaybeUUID"),
        ("geoReference", "netn.MaybeGeoReferenceVariant"),
    ]
    assert weather.fields[8].type.qualified_name == "hla.MaybeF32"
    optional = types["rpr.MaybeTemperatureDegreeCelsiusFloat32"]
    assert isinstance(optional, m.OptionalType)
    assert optional.location.file.endswith("RPR-Base_v2.0.xml")
    suffixed = {"CapabilitiesSupportedETR", "RequestMETOC", "RequestMRM", "ResponseMETOC"}
    assert {f"netn.{n}" for n in suffixed} <= set(types)
    assert "netn.Request" not in types and "rpr.MinefieldData" in types


def test_descriptions_follow_sen(types: dict[str, m.UserType]) -> None:
    """§6.10: line feeds become spaces, double quotes single ones; nothing is trimmed."""
    described = [t.description for t in types.values() if t.description]
    assert described and not any("\n" in d or '"' in d for d in described)


def _shuffled_iterdir(seed: int) -> object:
    original = Path.iterdir

    def iterdir(self: Path) -> Iterator[Path]:
        entries = list(original(self))
        random.Random(seed).shuffle(entries)
        return iter(entries)

    return iterdir


@pytest.mark.parametrize("seed", [1, 2])
def test_outcome_does_not_depend_on_listing_order(
    seed: int,
    hla_fom: tuple[LoadResult, FomSet],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(Path, "iterdir", _shuffled_iterdir(seed))
    result, loaded = load_set(fom_corpus_root() / HLA_FOM, "netn/NETN-BASE.xml", tmp_path)
    assert _counts(loaded) == _counts(hla_fom[1])
    expected = [(t.qualified_name, type(t)) for s in hla_fom[1].scopes.values() for t in s.types]
    actual = [(t.qualified_name, type(t)) for s in loaded.scopes.values() for t in s.types]
    assert actual == expected
    assert [d.message for d in result.diagnostics] == [W3, W3]


def test_dummy_entities_set(tmp_path: Path) -> None:
    """§12.6: lower-case file names, an empty mapping file, no diagnostic."""
    include = fom_corpus_root() / "test/util/dummy_entities/hla"
    result, loaded = load_set(include, "rpr/rpr-physical_v2.0.xml", tmp_path)
    assert result.diagnostics == ()
    counts = _counts(loaded)
    assert counts == {
        "rpr/rpr-base_v2.0.xml": [2, 26, 14, 18, 21, 3, 0, 0, 84],
        "rpr/rpr-enumerations_v2.0.xml": [0, 0, 0, 0, 0, 0, 95, 0, 95],
        "rpr/rpr-foundation_v2.0.xml": [0, 0, 0, 0, 1, 0, 0, 0, 1],
        "rpr/rpr-physical_v2.0.xml": [3, 6, 0, 2, 3, 0, 0, 0, 14],
        "rpr/rpr-se_v2.0.xml": [18, 47, 0, 0, 7, 3, 1, 0, 76],
    }
    program = result.program
    assert program is not None
    aircraft = program.find("rpr.Aircraft")
    assert isinstance(aircraft, m.ClassType) and len(aircraft.all_properties) == 47
    assert not any(c.events for c in (aircraft, *aircraft.ancestors()))
    process = next(
        t
        for s in loaded.scopes.values()
        for t in s.types
        if t.qualified_name == "rpr.EnvironmentProcess"
    )
    assert isinstance(process, m.ClassType)
    (sequence,) = [p for p in process.properties if p.name == "sequenceNumber"]
    assert sequence.type.qualified_name == "hla.MaybeU16"
    wrong_case = tmp_path / "upper"
    wrong_case.mkdir()
    source = wrong_case / "probe.stl"
    source.write_text('import "rpr/RPR-Physical_v2.0.xml"\npackage probe;\n', encoding="utf-8")
    loader = Loader([include], Settings())
    loader.load_input(source, wrong_case)
    (error,) = loader.result().diagnostics
    assert error.message.startswith("could not find file 'rpr/RPR-Physical_v2.0.xml'")


def _pytest_without_fom_corpus(tmp_path: Path, require: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_VARIABLE}
    env[FOM_CORPUS_VARIABLE] = str(tmp_path / "no-fom-corpus-here")
    if require:
        env[REQUIRE_VARIABLE] = "1"
    selection = [
        "test_fom_set.py::test_dummy_entities_set",
        "test_fom_cli_gen.py::test_cases_1_to_4",
    ]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", *selection],
        cwd=Path(__file__).parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_missing_fom_corpus_skips_with_one_reason_or_fails_when_required(tmp_path: Path) -> None:
    # The FOM corpus alone missing has its own reason; both missing is test_corpus_missing's case.
    corpus_root()
    skipping = _pytest_without_fom_corpus(tmp_path, require=False)
    assert skipping.returncode == 0, skipping.stdout + skipping.stderr
    (skipped,) = [x for x in skipping.stdout.splitlines() if x.startswith("SKIPPED")]
    assert skipped.startswith("SKIPPED [2] corpus_layout.py:") and FOM_MISSING in skipped
    required = _pytest_without_fom_corpus(tmp_path, require=True)
    assert required.returncode == 1
    assert required.stdout.splitlines()[-1].startswith("2 failed in "), required.stdout


# fom.md §12.5: the FOM part of each corpus file's program (without hla): classes, structs,
# aliases, quantities, sequences, variants, enums, optionals.
AIRCRAFT_REACHED = [20, 34, 14, 20, 25, 3, 107, 9]
TERRAIN_REACHED = [10, 53, 28, 18, 33, 7, 125, 37]
REACHED = {
    "examples/packages/aircrafts/stl/dummy_aircraft.stl": AIRCRAFT_REACHED,
    "examples/packages/terrain_server/stl/basic_types.stl": TERRAIN_REACHED,
    "examples/packages/terrain_server/stl/terrain_server.stl": TERRAIN_REACHED,
    "examples/packages/weather_server/stl/weather_server.stl": TERRAIN_REACHED,
}


@pytest.mark.parametrize("path", sorted(REACHED))
def test_corpus_files_reach_the_fom_types_of_the_spec(path: str) -> None:
    program = program_of(path)
    fom = [t for f in program.files if f.path.suffix == ".xml" for t in f.types]
    kinds = Counter(next(k for k in KINDS if isinstance(t, k)) for t in fom)
    assert [kinds[k] for k in KINDS] == REACHED[path]
    assert program.files[0].display == "hla.stl"


def test_corpus_file_facts() -> None:
    aircraft = program_of("examples/packages/aircrafts/stl/dummy_aircraft.stl")
    dummy = aircraft.find("aircrafts.DummyAircraft")
    assert isinstance(dummy, m.ClassType)
    assert dummy.parent is not None and dummy.parent.qualified_name == "rpr.Aircraft"
    assert len(dummy.all_properties) == 48 and dummy.all_properties[-1].name == "speed"
    assert [a.name for a in dummy.constructor.arguments] == [
        "entityType",
        "entityIdentifier",
        "alternateEntityType",
    ]
    events = [e.name for c in (dummy, *dummy.ancestors()) for e in c.events]
    assert events == ["collision", "collisionElastic", "weaponFire"]
    terrain = program_of("examples/packages/terrain_server/stl/terrain_server.stl")
    query = terrain.find("terrain_server.HatHotQuery")
    assert isinstance(query, m.ClassType)
    (ref,) = [p for p in query.properties if p.name == "ref"]
    assert ref.type.qualified_name == "netn.GeoReferenceVariant"
    assert ref.category is m.PropertyCategory.STATIC_RW
    weather = program_of("examples/packages/weather_server/stl/weather_server.stl")
    condition = weather.find("netn.WeatherCondition")
    assert isinstance(condition, m.StructType) and len(condition.fields) == 11
