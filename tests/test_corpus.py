"""Sen's STL corpus behaves as stl.md §11 says: per-file outcomes, the eleven runs, counts, facts.

Expected values come from the spec (§3, §5, §8, §10, §11) and the corpus text, never from what
the implementation prints. Helpers and the corpus location are in ``conftest.py``.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

import pytest
from conftest import event, find_type, load_corpus, load_file, method, program_of, prop
from corpus_layout import (
    ALTERNATIVE_GROUPS,
    CONAN_INCLUDES,
    DEFAULT_INCLUDES,
    FOM_INCLUDE,
    LATER_MEMBERS,
    PARTICIPANT,
    RUNTIME,
    TRANSPORT,
    corpus_root,
)

from sengen import Diagnostic, Severity
from sengen.stl.model import (
    NATIVES,
    AliasType,
    ArrayType,
    ClassType,
    EnumType,
    Event,
    Method,
    OptionalType,
    PropertyCategory,
    QuantityType,
    SequenceType,
    StlFile,
    StructType,
    TransportMode,
    VariantType,
)

# --------------------------------------------------------------------------------------------
# §11.4: the expected outcome of every corpus file, checked on its own with its §11.2 include list


@dataclass(frozen=True, slots=True)
class Expected:
    """One expected diagnostic. ``file`` None means the checked file itself.

    ``via`` is the import chain (§4.2 step 6): one ``imported from`` note per link, as
    ``(file, line, column)``. Notes are asserted for errors only: §4.2 step 6 prescribes them for
    errors in imported files; for warnings the spec does not say.
    """

    severity: Severity
    line: int
    column: int
    message: str
    file: str | None = None
    via: tuple[tuple[str, int, int], ...] = ()


OK: tuple[Expected, ...] = ()
W_UNIT_MESSAGE = "unknown unit 'u16': the quantity is treated as unitless"
CONAN_BASIC_TYPES = ".conan/test_packages/package/my_package/stl/my_package/basic_types.stl"
UTIL_BASIC_TYPES = "test/util/my_package/stl/my_package/basic_types.stl"
TERRAIN_BASIC_TYPES = "examples/packages/terrain_server/stl/basic_types.stl"
TERRAIN_SERVER = "examples/packages/terrain_server/stl/terrain_server.stl"


W3_MESSAGE = (
    "'ignore' has no effect here: the interaction's whole struct 'rpr.MunitionDetonation' is used"
)
BASE_MAPPINGS = f"{FOM_INCLUDE}/base_mappings.xml"  # outside the corpus: shown absolute
# fom.md §12.5: a file that imports the hla_fom set gets its two W3 warnings, once per run.
FOM_WARNINGS: tuple[Expected, ...] = tuple(
    Expected(Severity.WARNING, line, 13, W3_MESSAGE, BASE_MAPPINGS) for line in (5, 6)
)


def w_unit(line: int, column: int, file: str | None = None) -> tuple[Expected, ...]:
    """**W-unit**: the unknown-unit warning for `quantity<u16, u16>` (§6, §10.1)."""
    return (Expected(Severity.WARNING, line, column, W_UNIT_MESSAGE, file),)


# W-name(n) outcomes (Python-name mangling warnings) come from the code generator's naming
# analysis, which `sengen check` adds on top of `sengen.load`; these tests load, so such files
# are "ok" here, and tests/test_naming.py asserts their W-name counts through `sengen.check`.
EXPECTED_OUTCOMES: dict[str, tuple[Expected, ...]] = {
    ".conan/test_packages/package/my_package/stl/my_package/basic_types.stl": w_unit(80, 15),
    ".conan/test_packages/package/my_package/stl/my_package/config.stl": OK,
    ".conan/test_packages/package/my_package/stl/my_package/my_abstract_class.stl": OK,
    # ok; W-unit (via import)
    ".conan/test_packages/package/my_package/stl/my_package/my_class.stl": w_unit(
        80, 15, CONAN_BASIC_TYPES
    ),
    "components/ether/stl/configuration.stl": OK,
    "components/ether/stl/discovery.stl": OK,
    "components/ether/stl/runtime.stl": OK,
    "components/explorer/stl/configuration.stl": OK,
    "components/influx/stl/configuration.stl": OK,
    "components/logmaster/stl/logmaster.stl": OK,
    "components/py/stl/configuration.stl": OK,
    "components/py/stl/python_interpreter.stl": OK,
    "components/py/test/stl/py_test_package.stl": OK,
    "components/recorder/stl/sen/components/recorder/configuration.stl": OK,
    "components/recorder/stl/sen/components/recorder/recorder.stl": OK,
    "components/recorder/test/stl/recorder_test_class.stl": OK,
    "components/replayer/stl/sen/components/replayer/configuration.stl": OK,
    "components/replayer/stl/sen/components/replayer/replayer.stl": OK,
    "components/replayer/test/stl/replay_test_class.stl": OK,
    "components/rest/stl/configuration.stl": OK,
    "components/rest/stl/options.stl": OK,
    "components/rest/stl/types.stl": OK,  # W-name(3): enumerator `def`, field `type` (x2)
    "components/shell/stl/remote_shell.stl": OK,
    "components/shell/stl/shell.stl": OK,
    "examples/packages/aircrafts/stl/dummy_aircraft.stl": FOM_WARNINGS,
    "examples/packages/animals/stl/animal.stl": OK,  # W-name(1): field `type`
    "examples/packages/animals/stl/cat.stl": OK,  # ok; W-name (via import)
    "examples/packages/animals/stl/dog.stl": OK,  # ok; W-name (via import)
    "examples/packages/calculators/stl/calculator.stl": OK,
    "examples/packages/fibonacci/stl/fibonacci.stl": OK,
    "examples/packages/my_counter/stl/my_counter/counter.stl": OK,
    "examples/packages/school/stl/school/classroom.stl": OK,
    "examples/packages/school/stl/school/person.stl": OK,
    "examples/packages/school/stl/school/student.stl": OK,
    "examples/packages/school/stl/school/teacher.stl": OK,
    "examples/packages/shapes/stl/shape_listener.stl": OK,
    "examples/packages/shapes/stl/shapes.stl": OK,
    TERRAIN_BASIC_TYPES: FOM_WARNINGS,
    "examples/packages/terrain_server/stl/terrain_client.stl": OK,
    TERRAIN_SERVER: FOM_WARNINGS,  # through basic_types.stl
    "examples/packages/timer/stl/timer.stl": OK,
    "examples/packages/weather_server/stl/weather_server.stl": FOM_WARNINGS,
    "libs/core/test/io/stl/test_io.stl": OK,
    "libs/core/test/lang/stl/stl_resolver_test/complex_stl_file.stl": OK,
    "libs/core/test/meta/stl/test_struct_traits.stl": OK,
    "libs/core/test/meta/stl/test_type_traits.stl": OK,
    "libs/core/test/meta/stl/test_variant_traits.stl": OK,
    "libs/core/test/obj/stl/example_class.stl": OK,
    "libs/core/test/obj/stl/query_test.stl": OK,
    "libs/db/src/v1.stl": OK,  # W-name(3): field `type` (x2), field `object`
    "libs/db/stl/sen/db/basic_types.stl": OK,
    "libs/db/test/stl/db_test_class.stl": OK,
    "libs/kernel/src/bus/bus_protocol.stl": OK,  # ok; W-name (via import of type_specs.stl)
    "libs/kernel/stl/sen/kernel/basic_types.stl": OK,
    "libs/kernel/stl/sen/kernel/kernel_objects.stl": OK,
    "libs/kernel/stl/sen/kernel/log.stl": OK,
    "libs/kernel/stl/sen/kernel/type_specs.stl": OK,  # W-name(15): field `type`
    "libs/kernel/test/integration/crash_report/stl/crash_report.stl": OK,
    "libs/kernel/test/integration/interest_filtering/stl/interest_filtering.stl": OK,
    "libs/kernel/test/integration/object_sync/stl/object_sync.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_1/stl/runtime/runtime.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_2/stl/runtime/runtime.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_3/stl/runtime/runtime.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_4/stl/runtime/runtime.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_5/stl/runtime/runtime.stl": OK,
    "libs/kernel/test/integration/runtime_compatibility/runtime_6/stl/runtime/runtime.stl": OK,
    # W-name(1): property `property`
    "libs/kernel/test/integration/stress_tests/high_churn_subs/stl/high_churn_subs.stl": OK,
    "libs/kernel/test/integration/test_helpers/stl/test_helpers/test_helpers.stl": OK,
    "libs/kernel/test/integration/transport/transport_1/stl/transport/transport.stl": OK,
    "libs/kernel/test/integration/transport/transport_2/stl/transport/transport.stl": OK,
    "libs/kernel/test/integration/type_clash/participant_1/stl/participant_1.stl": OK,
    "libs/kernel/test/integration/type_clash/participant_2/stl/participant_2.stl": OK,
    "libs/kernel/test/integration/type_clash/participant_3/stl/participant_3.stl": OK,
    "libs/kernel/test/unit/test_kernel/stl/my_class.stl": OK,
    "test/util/chaos_monkeys/stl/creator_monkeys/chaos_monkeys.stl": OK,
    "test/util/cmake_packages/level0/stl/level0.stl": OK,
    "test/util/cmake_packages/level1/stl/level1.stl": OK,
    "test/util/cmake_packages/level2/stl/level2.stl": OK,
    "test/util/inheritance/stl/inheritance/basic_types.stl": OK,
    "test/util/inheritance/stl/inheritance/my_class.stl": OK,
    "test/util/inheritance/stl/inheritance/my_reactionclass.stl": OK,
    "test/util/inheritance/stl/inheritance/my_subclass.stl": OK,
    UTIL_BASIC_TYPES: w_unit(87, 15),
    "test/util/my_package/stl/my_package/config.stl": OK,
    "test/util/my_package/stl/my_package/my_abstract_class.stl": OK,
    # ok; W-unit (via import)
    "test/util/my_package/stl/my_package/my_class.stl": w_unit(87, 15, UTIL_BASIC_TYPES),
    "test/util/my_package/stl/my_package/test.stl": OK,
    "test/util/my_package/stl/my_package/test_sub.stl": OK,
    "test/util/publish_types_manually/stl/struct_inheritance.stl": OK,
    "test/util/query_test/stl/query_test.stl": OK,
    "test/util/stress_testing_utils/stl/stress_testing_utils/confirmed_producer.stl": OK,
}

FOM_FILES = (
    "examples/packages/aircrafts/stl/dummy_aircraft.stl",
    TERRAIN_BASIC_TYPES,
    TERRAIN_SERVER,
    "examples/packages/weather_server/stl/weather_server.stl",
)
CONAN_FILES = tuple(f for f in EXPECTED_OUTCOMES if f.startswith(".conan/"))

MAIN_RUN = tuple(f for f in EXPECTED_OUTCOMES if f not in CONAN_FILES and f not in LATER_MEMBERS)


def _key(d: Diagnostic) -> tuple[str, str, int, int, str]:
    return (d.severity.value, d.file, d.line, d.column, d.message)


def _expected_key(e: Expected, path: str) -> tuple[str, str, int, int, str]:
    return (e.severity.value, e.file or path, e.line, e.column, e.message)


def _import_notes(d: Diagnostic) -> list[tuple[str, int, int]]:
    return [(n.file, n.line, n.column) for n in d.notes if n.message.startswith("imported from")]


def assert_diagnostics(
    actual: tuple[Diagnostic, ...], expected: list[tuple[Expected, str]]
) -> None:
    """Exactly the expected diagnostics, in order; import notes checked for errors."""
    rendered = [d.format_header() for d in actual]
    assert [_key(d) for d in actual] == [_expected_key(e, p) for e, p in expected], rendered
    for d, (e, _) in zip(actual, expected, strict=True):
        if e.severity is Severity.ERROR:
            assert _import_notes(d) == list(e.via), (d.format_header(), d.notes)


def test_table_lists_every_corpus_file() -> None:
    root = corpus_root()
    on_disk = {p.relative_to(root).as_posix() for p in root.rglob("*.stl")}
    assert len(EXPECTED_OUTCOMES) == 91
    assert list(EXPECTED_OUTCOMES) == sorted(EXPECTED_OUTCOMES)
    assert len(on_disk) == 91
    assert set(EXPECTED_OUTCOMES) == on_disk
    # The hidden folder must not be skipped by whatever walks the corpus.
    assert len(CONAN_FILES) == 4
    # §11.4 totals as fom.md §14 changes them: all 91 files resolve without errors.
    failing = {
        f for f, e in EXPECTED_OUTCOMES.items() if any(x.severity is Severity.ERROR for x in e)
    }
    assert failing == set()


@pytest.mark.parametrize("path", sorted(EXPECTED_OUTCOMES))
def test_file_on_its_own(path: str) -> None:
    result = load_file(path)
    expected = EXPECTED_OUTCOMES[path]
    assert_diagnostics(result.diagnostics, [(e, path) for e in expected])
    # Every file not marked FOM produces no error, hence a model.
    has_error = any(e.severity is Severity.ERROR for e in expected)
    assert (result.program is None) == has_error
    if result.program is not None:
        assert any(f.display == path for f in result.program.files)


# --------------------------------------------------------------------------------------------
# §11.3: the eleven runs


def _own(path: str) -> list[tuple[Expected, str]]:
    """The diagnostics located in ``path`` itself (a file's diagnostics appear once per run)."""
    return [(e, path) for e in EXPECTED_OUTCOMES[path] if e.file is None]


ELEVEN_RUNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "main": (MAIN_RUN, DEFAULT_INCLUDES),
    "conan": (CONAN_FILES, CONAN_INCLUDES),
    **{member: ((member,), DEFAULT_INCLUDES) for member in LATER_MEMBERS},
}


def test_eleven_runs_cover_the_corpus() -> None:
    assert len(ELEVEN_RUNS) == 11
    assert len(MAIN_RUN) == 91 - 4 - 9
    covered = [f for files, _ in ELEVEN_RUNS.values() for f in files]
    assert sorted(covered) == sorted(EXPECTED_OUTCOMES)


@pytest.mark.parametrize("run", list(ELEVEN_RUNS))
def test_eleven_runs(run: str) -> None:
    files, includes = ELEVEN_RUNS[run]
    result = load_corpus(files, includes)
    # The files are given in sorted order, and each file with diagnostics of its own sorts before
    # the files that import it, so it is first loaded as an input: its diagnostics appear once, in
    # input order, without import notes. In the main run that is the three directly failing FOM
    # files (terrain_server adds nothing: basic_types.stl was already reported) and the W-unit
    # warning once.
    expected = [item for path in files for item in _own(path)]
    fom_files = [f for f in files if f in FOM_FILES]
    if fom_files:  # the set's warnings, once, where the first file that imports it is loaded
        first = files.index(fom_files[0])
        at = sum(1 for _, path in expected if files.index(path) <= first)
        expected[at:at] = [(e, fom_files[0]) for e in FOM_WARNINGS]
    assert_diagnostics(result.diagnostics, expected)
    assert result.program is not None


def test_main_run_diagnostics_spelled_out() -> None:
    """The main run's expectation written out, independently of the table."""
    result = load_corpus(MAIN_RUN, DEFAULT_INCLUDES)
    assert [_key(d) for d in result.diagnostics] == [
        ("warning", BASE_MAPPINGS, 5, 13, W3_MESSAGE),
        ("warning", BASE_MAPPINGS, 6, 13, W3_MESSAGE),
        ("warning", UTIL_BASIC_TYPES, 87, 15, W_UNIT_MESSAGE),
    ]
    assert result.program is not None


def test_terrain_server_rendering() -> None:
    """§9.1: the text form of a via-import FOM warning (fom.md §11.1), and of the W-unit one."""
    first, _ = load_file(TERRAIN_SERVER).diagnostics
    lines = first.format().splitlines()
    assert lines[:3] == [
        f"{BASE_MAPPINGS}:5:13: warning: {W3_MESSAGE}",
        '    5 |             <ignore parameter="EventIdentifier"/>',
        "      |             ^^^^^^^",
    ]
    assert lines[3:] == [
        f"{TERRAIN_BASIC_TYPES}:1:8: note: imported from here",
        '    1 | import "rpr/RPR-Base_v2.0.xml"',
        "      |        " + "^" * len('"rpr/RPR-Base_v2.0.xml"'),
        f"{TERRAIN_SERVER}:1:8: note: imported from here",
        '    1 | import "basic_types.stl"',
        "      |        " + "^" * len('"basic_types.stl"'),
    ]
    (warning,) = load_file(UTIL_BASIC_TYPES).diagnostics
    assert warning.format().splitlines() == [
        f"{UTIL_BASIC_TYPES}:87:15: warning: {W_UNIT_MESSAGE}",
        "   87 | quantity<u16, u16> UnitlessQuantity [min: 0, max: 511];",
        "      |               ^^^",
    ]


# Loading two members of one group in one run: the run-wide duplicate check of §5.
DUPLICATE_PAIRS: dict[str, tuple[tuple[str, str], str, tuple[int, int], tuple[int, int]]] = {
    # name: ((first, second), a shared qualified name, its location in first, in second)
    "my_package": (
        (UTIL_BASIC_TYPES, CONAN_BASIC_TYPES),
        "my_package.MyEnum",
        (4, 6),
        (4, 6),
    ),
    "query_test": (
        (ALTERNATIVE_GROUPS["query_test"][1], ALTERNATIVE_GROUPS["query_test"][0]),
        "query_test.Status",
        (3, 6),
        (3, 6),
    ),
    "runtime": (
        (RUNTIME.format(1), RUNTIME.format(2)),
        "sen.test.runtime.TestEnum",
        (6, 6),
        (6, 6),
    ),
    "transport": ((TRANSPORT.format(1), TRANSPORT.format(2)), "sen.test.TestClass", (3, 7), (3, 7)),
    # ClashType is a struct in participant 1 and a class in 2 and 3.
    "type_clash": (
        (PARTICIPANT.format(1), PARTICIPANT.format(2)),
        "sen.test.type_clash.ClashType",
        (3, 8),
        (3, 7),
    ),
    "type_clash_2_3": (
        (PARTICIPANT.format(2), PARTICIPANT.format(3)),
        "sen.test.type_clash.ClashType",
        (3, 7),
        (3, 7),
    ),
}


@pytest.mark.parametrize("group", list(DUPLICATE_PAIRS))
def test_two_members_of_a_group_clash(group: str) -> None:
    (first, second), name, (line1, col1), (line2, col2) = DUPLICATE_PAIRS[group]
    result = load_corpus((first, second), DEFAULT_INCLUDES)
    assert result.program is None
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors, result.diagnostics
    assert all(d.message.startswith("There is already a type named '") for d in errors)
    assert all(d.file == second for d in errors)
    (clash,) = [d for d in errors if d.message == f"There is already a type named '{name}'"]
    # At the second name, with a note at the first.
    assert (clash.line, clash.column) == (line2, col2)
    assert [(n.file, n.line, n.column) for n in clash.notes] == [(first, line1, col1)]


def test_every_alternative_group_shares_names_pairwise() -> None:
    """§11.3: each later member clashes with the first member of its group."""
    for members in ALTERNATIVE_GROUPS.values():
        for later in members[1:]:
            result = load_corpus((members[0], later), DEFAULT_INCLUDES)
            errors = [d for d in result.diagnostics if d.is_error]
            assert errors and all("There is already a type named" in d.message for d in errors)


# --------------------------------------------------------------------------------------------
# §11.1 counts
#
# The FOM files stop at their failing import (§4.2 step 6), so their declarations are never
# resolved and no model holds them. The counts are therefore checked three ways, each exact:
#  1. the resolved model of the 87 files that load (main run without the FOM files, the .conan
#     run and the nine alternative members), plus the declarations of the four FOM files counted
#     by hand (FOM_FILE_COUNTS), equals §11.1;
#  2. FOM_FILE_COUNTS equals a raw keyword count of those four files;
#  3. a raw keyword count over all 91 files equals §11.1. Keywords are reserved everywhere
#     (§1.2), so outside comments and strings every occurrence of `struct`, `var`, … is that
#     keyword: the raw count is exact.

SPEC_COUNTS: dict[str, int] = {
    "packages": 91,
    "imports": 34,
    "xml_imports": 7,
    "structs": 256,
    "structs_with_parent": 11,
    "enums": 57,
    "variants": 36,
    "sequences": 90,
    "unbounded_sequences": 75,
    "arrays": 10,
    "optionals": 58,
    "quantities": 24,
    "quantities_with_bounds": 12,
    "aliases": 6,
    "classes": 86,
    "abstract_classes": 3,
    "classes_with_extends": 16,
    "properties": 277,
    "methods": 136,
    "events": 39,
}
# Read off the four FOM files: dummy_aircraft (1 import, quantity Speed, class DummyAircraft
# extends rpr.Aircraft with 1 property), terrain basic_types (3 imports, 4 structs, 2 classes with
# 2 properties each), terrain_server (1 import, 1 class, 1 property, 2 methods), weather_server
# (3 imports, 1 class, 1 property, 5 methods). Every one of them has a package statement.
FOM_FILE_COUNTS: dict[str, int] = dict.fromkeys(SPEC_COUNTS, 0) | {
    "packages": 4,
    "imports": 8,
    "xml_imports": 7,
    "structs": 4,
    "quantities": 1,
    "classes": 5,
    "classes_with_extends": 1,
    "properties": 7,
    "methods": 7,
}
# §10.3: units used in the corpus; dummy_aircraft's Speed uses m_per_s.
SPEC_UNITS = Counter(
    {"m": 6, "deg": 5, "m_per_s": 3, "rad": 3, "hz": 2, "cm": 1, "kph": 1, "ft": 1, "u16": 2}
)
FOM_FILE_UNITS = Counter({"m_per_s": 1})


@functools.cache
def resolved_files() -> tuple[StlFile, ...]:
    """Every corpus file that resolves, once each, from the eleven runs (FOM files left out)."""
    runs = [(tuple(f for f in MAIN_RUN if f not in FOM_FILES), DEFAULT_INCLUDES)]
    runs += [ELEVEN_RUNS[name] for name in ELEVEN_RUNS if name != "main"]
    seen: dict[str, StlFile] = {}
    for files, includes in runs:
        result = load_corpus(files, includes)
        assert result.program is not None, [d.format_header() for d in result.diagnostics]
        for stl_file in result.program.files:
            seen.setdefault(stl_file.path.as_posix(), stl_file)
    return tuple(seen.values())


def model_counts(files: tuple[StlFile, ...]) -> dict[str, int]:
    types = [t for f in files for t in f.types]
    structs = [t for t in types if isinstance(t, StructType)]
    sequences = [t for t in types if isinstance(t, SequenceType)]
    quantities = [t for t in types if isinstance(t, QuantityType)]
    classes = [t for t in types if isinstance(t, ClassType)]
    return {
        "packages": sum(1 for f in files if f.package),
        "imports": sum(len(f.imports) for f in files),
        "xml_imports": 0,  # an .xml import always fails (§4.2 step 1)
        "structs": len(structs),
        "structs_with_parent": sum(1 for s in structs if s.parent is not None),
        "enums": sum(1 for t in types if isinstance(t, EnumType)),
        "variants": sum(1 for t in types if isinstance(t, VariantType)),
        "sequences": len(sequences),
        "unbounded_sequences": sum(1 for s in sequences if s.max_size is None),
        "arrays": sum(1 for t in types if isinstance(t, ArrayType)),
        "optionals": sum(1 for t in types if isinstance(t, OptionalType)),
        "quantities": len(quantities),
        "quantities_with_bounds": sum(
            1 for q in quantities if q.minimum is not None or q.maximum is not None
        ),
        "aliases": sum(1 for t in types if isinstance(t, AliasType)),
        "classes": len(classes),
        "abstract_classes": sum(1 for c in classes if c.abstract),
        "classes_with_extends": sum(1 for c in classes if c.parent is not None),
        "properties": sum(len(c.properties) for c in classes),
        "methods": sum(len(c.methods) for c in classes),
        "events": sum(len(c.events) for c in classes),
    }


_LEXEMES = re.compile(r"//[^\n\r]*|\"[^\"]*\"|'[^']*'")
# Keyword patterns on the code with comments removed and strings emptied.
_RAW_PATTERNS: dict[str, str] = {
    "packages": r"\bpackage\b",
    "imports": r"\bimport\b",
    "structs": r"\bstruct\b",
    "structs_with_parent": r"\bstruct\s+\w+\s*:",
    "enums": r"\benum\b",
    "variants": r"\bvariant\b",
    "sequences": r"\bsequence\b",
    "unbounded_sequences": r"\bsequence\s*<\s*[\w.]+\s*>",
    "arrays": r"\barray\b",
    "optionals": r"\boptional\b",
    "quantities": r"\bquantity\b",
    "quantities_with_bounds": r"\bquantity\s*<[^>]*>\s*\w+\s*\[[^\]]*\b(?:min|max)\b",
    "aliases": r"\balias\b",
    "classes": r"\bclass\b",
    "abstract_classes": r"\babstract\b",
    "classes_with_extends": r"\bextends\b",
    "properties": r"\bvar\b",
    "methods": r"\bfn\b",
    "events": r"\bevent\b",
}


def split_lexemes(text: str) -> tuple[str, list[str]]:
    """The code with comments removed and strings emptied, and the string values.

    Comments and strings are matched left to right, so a quote inside a comment stays a comment.
    """
    code: list[str] = []
    strings: list[str] = []
    position = 0
    for match in _LEXEMES.finditer(text):
        code.append(text[position : match.start()])
        lexeme = match.group()
        if lexeme.startswith("//"):
            code.append(" ")
        else:
            strings.append(lexeme[1:-1])
            code.append('""')
        position = match.end()
    code.append(text[position:])
    return "".join(code), strings


def raw_counts(paths: tuple[str, ...]) -> dict[str, int]:
    """Keyword counts on the corpus text with comments and strings taken out."""
    counts: Counter[str] = Counter()
    root = corpus_root()
    for path in paths:
        code, strings = split_lexemes((root / path).read_text(encoding="utf-8"))
        for key, pattern in _RAW_PATTERNS.items():
            counts[key] += len(re.findall(pattern, code))
        counts["xml_imports"] += sum(1 for s in strings if s.lower().endswith(".xml"))
    return {key: counts[key] for key in SPEC_COUNTS}


def test_resolved_files_are_the_87_non_fom_files() -> None:
    displays = sorted(f.display for f in resolved_files())
    assert displays == sorted(set(EXPECTED_OUTCOMES) - set(FOM_FILES))


def test_counts_model_plus_fom_files() -> None:
    model = model_counts(resolved_files())
    combined = {key: model[key] + FOM_FILE_COUNTS[key] for key in SPEC_COUNTS}
    assert combined == SPEC_COUNTS


def test_fom_file_counts_match_their_text() -> None:
    assert raw_counts(FOM_FILES) == FOM_FILE_COUNTS


def test_raw_counts_match_spec() -> None:
    assert raw_counts(tuple(EXPECTED_OUTCOMES)) == SPEC_COUNTS


def test_units_used_in_the_corpus() -> None:
    quantities = [t for f in resolved_files() for t in f.types if isinstance(t, QuantityType)]
    assert Counter(q.unit_name for q in quantities) + FOM_FILE_UNITS == SPEC_UNITS
    # Every unit but `u16` is registered (§10.1): unknown ones give a unitless quantity.
    for q in quantities:
        assert (q.unit is None) == (q.unit_name == "u16"), q.qualified_name
        if q.unit is not None:
            assert q.unit.abbreviation == q.unit_name


# --------------------------------------------------------------------------------------------
# A sample of resolved facts

SHAPES = "examples/packages/shapes/stl/shapes.stl"
KERNEL_BASIC_TYPES = "libs/kernel/stl/sen/kernel/basic_types.stl"
LOG = "libs/kernel/stl/sen/kernel/log.stl"
TEST_IO = "libs/core/test/io/stl/test_io.stl"
CALCULATOR = "examples/packages/calculators/stl/calculator.stl"
ANIMAL = "examples/packages/animals/stl/animal.stl"
COMPLEX = "libs/core/test/lang/stl/stl_resolver_test/complex_stl_file.stl"
MY_CLASS = "test/util/my_package/stl/my_package/my_class.stl"
OBJECT_SYNC = "libs/kernel/test/integration/object_sync/stl/object_sync.stl"


def test_triple_slash_keeps_a_slash() -> None:
    """§3.3: `/// Centimeters…` has the text `/ Centimeters…`."""
    program = program_of(SHAPES)
    centimeters = find_type(program, "shapes.Centimeters", QuantityType)
    assert centimeters.description == "/ Centimeters encoded in 32-bit floats."
    assert find_type(program, "shapes.Degrees", QuantityType).description == (
        "/ Degrees encoded in 32-bit floats."
    )
    assert find_type(program, "shapes.Color", EnumType).description == "/ A color enumeration."


def test_comment_after_trailing_comma_documents_last_enumerator() -> None:
    """§3.3: basic_types.stl:30, `bits64,  // 64-bit processor` then `}`."""
    word_size = find_type(program_of(KERNEL_BASIC_TYPES), "sen.kernel.WordSize", EnumType)
    assert [(e.name, e.description) for e in word_size.enumerators] == [
        ("bits32", "32-bit processor"),
        ("bits64", "64-bit processor"),
    ]
    assert word_size.description == "Native processor word size"


def test_multi_line_block_documents_last_field() -> None:
    """§3.3: log.stl:91-96, four comment lines, `pattern : string,`, then `}`."""
    logger = find_type(program_of(LOG), "sen.kernel.log.LoggerConfig", StructType)
    assert logger.fields[-1].name == "pattern"
    assert logger.fields[-1].description == (
        "Formatting for the sinks in this logger. Does nothing if empty. Note that this replaces "
        "the format of the associated sinks, and this could affect other loggers using those "
        "sinks. The config is applied following the order of the Config.loggers field."
    )
    assert [f.description for f in logger.fields[:3]] == [
        "name of the logger",
        "name of the sinks to connect the logger to",
        "default log level for this logger",
    ]


def test_quantity_trailing_comment_and_bounds() -> None:
    """§3.3: runtime_6/…/runtime.stl:6, the comment trailing `;` documents `Frequency`."""
    program = program_of(RUNTIME.format(6))
    frequency = find_type(program, "sen.test.runtime.Frequency", QuantityType)
    assert frequency.description == "defined in hertz"
    assert frequency.value_type is NATIVES["f32"]
    assert frequency.unit_name == "hz"
    assert frequency.unit is not None
    assert (frequency.unit.category, frequency.unit.factor) == ("frequency", 1.0)
    # Integer bounds, negative ones included, are converted to float (§6).
    assert (frequency.minimum, frequency.maximum) == (-100.0, 100.0)
    assert isinstance(frequency.minimum, float) and isinstance(frequency.maximum, float)
    angle = find_type(program, "sen.test.runtime.Angle", QuantityType)
    assert (angle.minimum, angle.maximum, angle.description) == (0.0, 3.14, "defined in radian")


def test_section_comment_merges_into_next_description() -> None:
    """§3.2: test_io.stl:41-42 gives `sequences enum sequence`."""
    program = program_of(TEST_IO)
    visited = find_type(program, "test_io.VisitedAirports", SequenceType)
    assert visited.description == "sequences enum sequence"
    assert visited.element is find_type(program, "test_io.AirportCode", EnumType)
    assert visited.max_size is None
    pilots = find_type(program, "test_io.FlightPilots", SequenceType)
    assert (pilots.description, pilots.element, pilots.max_size) == (
        "basic type bounded sequence",
        NATIVES["string"],
        2,
    )


def test_param_cuts_description_and_documents_arguments() -> None:
    """§3.4: calculator.stl:12-16."""
    calculator = find_type(program_of(CALCULATOR), "calculators.Calculator", ClassType)
    add = method(calculator, "add")
    assert add.description == 'Returns "a + b" and sets the last result to it.'
    assert [(a.name, a.description) for a in add.arguments] == [
        ("a", "left-hand operator."),
        ("b", "right-hand operator."),
    ]
    assert add.return_type is NATIVES["f32"]
    divide = method(calculator, "divide")
    assert [a.description for a in divide.arguments] == [
        "left-hand operator.",
        "right-hand operator (if 0, the divisionByZero event gets emitted).",
    ]
    assert method(calculator, "divideByCurrent").description == (
        'Returns "a / R" where R is was the last result. '
        "If R is 0, the divisionByZero event gets emitted."
    )
    assert event(calculator, "divisionByZero").arguments == ()


def test_param_with_empty_comment_line() -> None:
    """§12.7: animal.stl:34-38."""
    animal = find_type(program_of(ANIMAL), "animals.Animal", ClassType)
    advance = method(animal, "advance")
    assert advance.description == (
        "Advances a steps in the x direction and b steps in the y direction."
    )
    assert [(a.name, a.description) for a in advance.arguments] == [
        ("a", "meters to advance in the x direction."),
        ("b", "meters to advance in the y direction."),
    ]
    assert advance.return_type is None
    made_sound = event(animal, "madeSound")
    assert made_sound.description == "Emitted when the animal makes a sound."
    assert [(a.name, a.description) for a in made_sound.arguments] == [("content", "the sound")]


def test_event_param_descriptions() -> None:
    """§3.4: complex_stl_file.stl:97-99, an event with arguments `when` and `where`."""
    valid_class = find_type(program_of(COMPLEX), "stl_resolver_test.ValidClass", ClassType)
    with_args = event(valid_class, "eventWithArguments")
    assert with_args.description == "Description of an event with arguments"
    assert [(a.name, a.type, a.description) for a in with_args.arguments] == [
        ("when", NATIVES["u32"], "describes when the event has happened"),
        ("where", NATIVES["string"], "describes where the event has happened"),
    ]
    assert with_args.transport is TransportMode.MULTICAST
    returning = method(valid_class, "methodWithArgumentsAndReturnValue")
    assert returning.description == (
        "Description of a method with two arguments that returns a result"
    )
    assert [a.description for a in returning.arguments] == [
        "left-hand side argument",
        "right-hand side argument",
    ]


def test_struct_inherited_fields() -> None:
    program = program_of(TEST_IO)
    sphere = find_type(program, "test_io.Sphere", StructType)
    assert sphere.parent is find_type(program, "test_io.Point3D", StructType)
    assert [f.name for f in sphere.fields] == ["radius"]
    assert [f.name for f in sphere.all_fields] == ["x", "y", "z", "radius"]
    hypersphere = find_type(program, "test_io.Hypersphere", StructType)
    assert hypersphere.parent is sphere
    assert hypersphere.fields == ()
    assert [f.name for f in hypersphere.all_fields] == ["x", "y", "z", "radius"]
    assert hypersphere.description == "three levels of inheritance with empty struct"
    child = find_type(
        program_of("test/util/publish_types_manually/stl/struct_inheritance.stl"),
        "StructInheritance.Child",
        StructType,
    )
    assert [(f.name, f.type) for f in child.all_fields] == [
        ("a", NATIVES["f32"]),
        ("b", NATIVES["f32"]),
        ("c", NATIVES["f32"]),
    ]


def test_quantity_unit_and_bounds() -> None:
    program = program_of(RUNTIME.format(1))
    quantity = find_type(program, "sen.test.runtime.TestQuantity", QuantityType)
    assert quantity.value_type is NATIVES["i64"]
    assert quantity.unit_name == "deg"
    assert quantity.unit is not None
    assert quantity.unit.category == "angle"
    assert math.isclose(quantity.unit.factor, math.pi / 180)
    assert (quantity.minimum, quantity.maximum) == (0.0, 50.0)
    centimeters = find_type(program_of(SHAPES), "shapes.Centimeters", QuantityType)
    assert centimeters.unit is not None
    assert (centimeters.unit.abbreviation, centimeters.unit.category) == ("cm", "length")
    assert math.isclose(centimeters.unit.factor, 1e-2)
    assert (centimeters.minimum, centimeters.maximum) == (None, None)


def test_constructor_arguments_root_first() -> None:
    """§8.3: ValidClass gets `(staticPropertyFromParent, staticProperty)`."""
    program = program_of(COMPLEX)
    valid_class = find_type(program, "stl_resolver_test.ValidClass", ClassType)
    assert valid_class.abstract
    assert valid_class.parent is find_type(program, "stl_resolver_test.ValidParentClass", ClassType)
    constructor = valid_class.constructor
    assert constructor.name == "constructorValidClass"
    assert constructor.description == "constructor"
    assert [a.name for a in constructor.arguments] == ["staticPropertyFromParent", "staticProperty"]
    assert [a.type for a in constructor.arguments] == [NATIVES["string"], NATIVES["string"]]
    # Three levels: level2 inherits level1 inherits level0, each with one [static] property.
    level2 = find_type(
        program_of("test/util/cmake_packages/level2/stl/level2.stl"),
        "level2.Level2Class",
        ClassType,
    )
    assert [a.name for a in level2.constructor.arguments] == ["data0", "data1", "data2"]


def test_property_categories_transports_tags() -> None:
    my_class = find_type(program_of(MY_CLASS), "my_package.MyClass", ClassType)
    prop3 = prop(my_class, "prop3")
    assert prop3.category is PropertyCategory.DYNAMIC_RW
    assert prop3.transport is TransportMode.CONFIRMED
    assert prop3.tags == ("someTag", "anotherTag")
    assert prop3.description == "goes over tcp, settable"
    prop1 = prop(my_class, "prop1")
    assert (prop1.category, prop1.transport, prop1.tags) == (
        PropertyCategory.STATIC_RW,
        TransportMode.MULTICAST,
        (),
    )
    prop4 = prop(my_class, "prop4")
    assert (prop4.category, prop4.transport) == (
        PropertyCategory.DYNAMIC_RO,
        TransportMode.MULTICAST,
    )

    program = program_of(COMPLEX)
    parent = find_type(program, "stl_resolver_test.ValidParentClass", ClassType)
    static_ro = prop(parent, "staticNonConfigurablePropertyFromParent")
    assert (static_ro.category, static_ro.transport) == (
        PropertyCategory.STATIC_RO,
        TransportMode.UNICAST,
    )
    assert not static_ro.checked
    assert event(parent, "eventFromParent").transport is TransportMode.UNICAST
    valid_class = find_type(program, "stl_resolver_test.ValidClass", ClassType)
    tagged = prop(valid_class, "writablePropertyWithTag")
    assert tagged.tags == ("inspectMe",)
    assert tagged.type is find_type(program, "stl_resolver_test.ValidQuantity", QuantityType)
    const_method = method(valid_class, "constMethod")
    assert (const_method.const, const_method.local, const_method.transport) == (
        True,
        False,
        TransportMode.UNICAST,
    )
    local_method = method(valid_class, "localMethod")
    assert (local_method.const, local_method.local, local_method.transport) == (
        False,
        True,
        TransportMode.CONFIRMED,
    )
    assert not local_method.deferred

    test_object = find_type(program_of(OBJECT_SYNC), "object_sync.TestObject", ClassType)
    assert [(e.name, e.transport) for e in test_object.events] == [
        ("bestEffortEvent", TransportMode.UNICAST),
        ("confirmedEvent", TransportMode.CONFIRMED),
        ("multicastEvent", TransportMode.MULTICAST),
    ]
    assert [(m.name, m.transport) for m in test_object.methods] == [
        ("constMethod", TransportMode.CONFIRMED),
        ("confirmedMethod", TransportMode.CONFIRMED),
        ("bestEffortMethod", TransportMode.UNICAST),
        ("localMethod", TransportMode.CONFIRMED),
        ("doUpdate", TransportMode.CONFIRMED),
    ]


def test_enum_keys_and_descriptions() -> None:
    program = program_of(COMPLEX)
    valid_enum = find_type(program, "stl_resolver_test.ValidEnumerationType", EnumType)
    assert valid_enum.storage is NATIVES["u32"]
    assert [(e.key, e.name, e.description) for e in valid_enum.enumerators] == [
        (i, f"value{i + 1}", f"description of value{i + 1}") for i in range(5)
    ]
    airport = find_type(program_of(TEST_IO), "test_io.AirportCode", EnumType)
    assert airport.storage is NATIVES["i16"]
    assert [e.key for e in airport.enumerators] == list(range(16))
    assert airport.enumerators[-1].name == "zaz"


def test_complex_file_descriptions() -> None:
    program = program_of(COMPLEX)
    struct = find_type(program, "stl_resolver_test.ValidStructType", StructType)
    assert struct.description == "A valid struct type that holds fields with all basic types"
    assert [f.description for f in struct.fields] == [
        f"description of field{i}" for i in range(1, 14)
    ]
    assert struct.fields[-1].type is NATIVES["Duration"]
    variant = find_type(program, "stl_resolver_test.ValidVariantType", VariantType)
    assert [(a.key, a.type.name, a.description) for a in variant.alternatives] == [
        (0, "ValidSequence", "description of potential type1"),
        (1, "ValidBoundedSequence", "description of potential type2"),
        (2, "ValidArray", "description of potential type3"),
        (3, "ValidEnumerationType", "description of potential type4"),
        (4, "ValidStructType", "description of potential type5"),
        (5, "ValidOptional", "description of potential type6"),
    ]
    sequence = find_type(program, "stl_resolver_test.ValidSequence", SequenceType)
    assert sequence.description == "inline comment for valid sequence"
    array = find_type(program, "stl_resolver_test.ValidArray", ArrayType)
    assert (array.element, array.size, array.description) == (
        NATIVES["i16"],
        50,
        "inline comment for valid array",
    )
    alias = find_type(program, "stl_resolver_test.ValidTypeAlias", AliasType)
    assert alias.target is variant
    assert alias.description == "Some valid alias declaration for another valid type"
    optional = find_type(program, "stl_resolver_test.ValidOptional", OptionalType)
    assert optional.target is struct
    assert optional.description == "inline comment for valid optional"
    quantity = find_type(program, "stl_resolver_test.ValidQuantity", QuantityType)
    assert (quantity.minimum, quantity.maximum) == (-180.0, 180.0)


def test_every_file_records_its_package() -> None:
    """Each resolved corpus file has exactly the package its text declares."""
    for stl_file in resolved_files():
        text = (corpus_root() / stl_file.display).read_text(encoding="utf-8")
        declared = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.MULTILINE)
        assert declared is not None
        assert stl_file.package == declared.group(1), stl_file.display
        assert all(t.package == stl_file.package for t in stl_file.types)


# --------------------------------------------------------------------------------------------
# Every description in the corpus, against an independent reading of §1.3, §3.1, §3.2 and §3.4
#
# The oracle below is a small tokenizer plus a walk over declarations that applies the
# attachment table of §3.2 literally. It asserts its own assumptions about the corpus (no comment
# inside an argument list, no ruler comment) so that it cannot silently diverge.

_ORACLE_TOKEN = re.compile(
    r"(?P<comment>//[^\n\r]*)|(?P<string>\"[^\"]*\"|'[^']*')|(?P<space>\s+)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<number>-?[0-9]+(?:\.[0-9]+)?)|(?P<punct>.)"
)
_PARAM = re.compile(r"@param\s+([A-Za-z_][A-Za-z0-9_]*)")
_SEQUENCE_LIKE = ("sequence", "array", "quantity", "alias", "optional")


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    line: int

    @property
    def is_comment(self) -> bool:
        return self.kind == "comment"

    @property
    def comment_text(self) -> str:
        """§1.3: everything after `//`, leading spaces, tabs, CR and LF removed."""
        return self.text[2:].lstrip(" \t\r\n")


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    line = 1
    for match in _ORACLE_TOKEN.finditer(text):
        kind = match.lastgroup or ""
        if kind != "space":
            token = _Token(kind, match.group(), line)
            raw = token.text[2:]
            assert not (
                token.is_comment and raw.startswith(("--", " --", "- --"))
            ), "the oracle does not model ruler comments"
            tokens.append(token)
        line += match.group().count("\n")
    return tokens


def _join(texts: list[str]) -> str:
    """§3.1: skip empty texts; one space before a text unless the result ends with a space."""
    result = ""
    for text in texts:
        if not text:
            continue
        if result and not result.endswith(" "):
            result += " "
        result += text
    return result


def _describe(comments: list[_Token]) -> str:
    return _join([c.comment_text for c in comments])


class _Oracle:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.out: dict[str, str] = {}

    def peek(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def code(self) -> _Token:
        """The next non-comment token; comments in between are discarded (§3.2 extensions)."""
        while self.peek().is_comment:
            self.i += 1
        return self.take()

    def skip_to(self, *stops: str) -> _Token:
        while True:
            token = self.code()
            if token.text in stops:
                return token

    def trailing_on(self, line: int) -> list[_Token]:
        found: list[_Token] = []
        while self.i < len(self.tokens) and self.peek().is_comment and self.peek().line == line:
            found.append(self.take())
        return found

    def run(self) -> dict[str, str]:
        pending: list[_Token] = []
        while self.i < len(self.tokens):
            token = self.take()
            if token.is_comment:
                pending.append(token)
                continue
            leading, pending = pending, []
            keyword = token.text
            if keyword == "import":
                self.code()  # the string; a trailing comment stays pending for the next statement
            elif keyword == "package":
                self.skip_to(";")
            elif keyword in _SEQUENCE_LIKE:
                self.sequence_like(keyword, leading)
            else:
                if keyword == "abstract":
                    keyword = self.code().text
                name = self.code().text
                self.out[name] = _describe(leading)
                opener = self.skip_to("{", ";")
                if opener.text == "{" and keyword == "class":
                    self.class_body(name)
                elif opener.text == "{":
                    self.element_body(name, keyword)
        return self.out

    def sequence_like(self, keyword: str, leading: list[_Token]) -> None:
        if keyword == "alias":
            name = self.code().text
        else:
            depth = 0
            while True:
                token = self.code()
                depth += {"<": 1, ">": -1}.get(token.text, 0)
                if token.text == ">" and depth == 0:
                    break
            name = self.code().text
        end = self.skip_to(";")
        self.out[name] = _describe(leading + self.trailing_on(end.line))

    def element_body(self, type_name: str, keyword: str) -> None:
        pending: list[_Token] = []
        key = 0
        while True:
            token = self.take()
            if token.is_comment:
                pending.append(token)
                continue
            if token.text == "}":
                return  # comments before `}` are discarded
            leading, pending = pending, []
            element = [token]
            inner: list[_Token] = []
            while self.peek().text not in (",", "}"):
                (inner if self.peek().is_comment else element).append(self.take())
            end_line = element[-1].line
            trailing = [c for c in inner if c.line == end_line]
            lines = {end_line}
            if self.peek().text == ",":
                lines.add(self.take().line)
            while self.peek().is_comment and self.peek().line in lines:
                trailing.append(self.take())
            label = str(key) if keyword == "variant" else element[0].text
            self.out[f"{type_name}.{label}"] = _describe(leading + trailing)
            key += 1

    def class_body(self, class_name: str) -> None:
        pending: list[_Token] = []
        while True:
            token = self.take()
            if token.is_comment:
                pending.append(token)
                continue
            if token.text == "}":
                return
            leading, pending = pending, []
            kind, name = token.text, self.code().text
            arguments: list[str] = []
            if kind in ("fn", "event"):
                assert self.take().text == "("
                expect_name = True
                while (arg := self.take()).text != ")":
                    assert not arg.is_comment, "the oracle does not model argument comments"
                    if expect_name and arg.kind == "word":
                        arguments.append(arg.text)
                        expect_name = False
                    elif arg.text == ",":
                        expect_name = True
            end = self.skip_to(";")
            trailing = self.trailing_on(end.line)
            label = f"{class_name}.{kind} {name}"
            if kind == "var":
                self.out[label] = _describe(leading + trailing)
                continue
            params = [n for n, c in enumerate(leading) if _PARAM.search(c.comment_text)]
            cut = params[0] if params else len(leading)
            self.out[label] = _describe(leading[:cut] + trailing)
            blocks: dict[str, str] = {}
            for start, stop in zip(params, [*params[1:], len(leading)][: len(params)], strict=True):
                match = _PARAM.search(leading[start].comment_text)
                assert match is not None
                rest = leading[start].comment_text[match.end() :].lstrip()
                if rest[:1] in (":", "-"):
                    rest = rest[1:].lstrip()
                blocks[match.group(1)] = _join(
                    [rest] + [c.comment_text for c in leading[start + 1 : stop]]
                )
            for argument in arguments:
                self.out[f"{label}({argument})"] = blocks.get(argument, "")


def _model_descriptions(stl_file: StlFile) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in stl_file.types:
        out[t.name] = t.description
        if isinstance(t, StructType):
            out.update({f"{t.name}.{f.name}": f.description for f in t.fields})
        elif isinstance(t, EnumType):
            out.update({f"{t.name}.{e.name}": e.description for e in t.enumerators})
        elif isinstance(t, VariantType):
            out.update({f"{t.name}.{a.key}": a.description for a in t.alternatives})
        elif isinstance(t, ClassType):
            out.update({f"{t.name}.var {p.name}": p.description for p in t.properties})
            callables: list[tuple[str, Method | Event]] = [("fn", m) for m in t.methods]
            callables += [("event", e) for e in t.events]
            for kind, member in callables:
                label = f"{t.name}.{kind} {member.name}"
                out[label] = member.description
                out.update({f"{label}({a.name})": a.description for a in member.arguments})
    return out


@pytest.mark.parametrize("path", sorted(set(EXPECTED_OUTCOMES) - set(FOM_FILES)))
def test_descriptions_match_the_attachment_rules(path: str) -> None:
    (stl_file,) = [f for f in resolved_files() if f.display == path]
    expected = _Oracle((corpus_root() / path).read_text(encoding="utf-8")).run()
    actual = _model_descriptions(stl_file)
    assert sorted(actual) == sorted(expected)  # the model groups methods before events
    mismatches = {k: (actual[k], expected[k]) for k in expected if actual[k] != expected[k]}
    assert not mismatches, mismatches


def test_description_oracle_sees_the_worked_examples() -> None:
    """The oracle itself reproduces the §3.3 examples, so agreement above is meaningful."""
    root = corpus_root()

    def oracle(path: str) -> dict[str, str]:
        return _Oracle((root / path).read_text(encoding="utf-8")).run()

    assert oracle(SHAPES)["Centimeters"] == "/ Centimeters encoded in 32-bit floats."
    assert oracle(KERNEL_BASIC_TYPES)["WordSize.bits64"] == "64-bit processor"
    assert oracle(LOG)["LoggerConfig.pattern"].startswith("Formatting for the sinks")
    assert oracle(RUNTIME.format(6))["Frequency"] == "defined in hertz"
    assert oracle(TEST_IO)["VisitedAirports"] == "sequences enum sequence"
    calculator = oracle(CALCULATOR)
    assert calculator["Calculator.fn add"] == 'Returns "a + b" and sets the last result to it.'
    assert calculator["Calculator.fn add(b)"] == "right-hand operator."
