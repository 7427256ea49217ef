"""Data-driven invalid-input cases: ``tests/invalid/<NNN>_<name>/``.

Each case folder holds ``main.stl`` (the file that is loaded; further ``.stl`` files of the folder
serve imports and cycles) and ``expected.txt``, which lists every diagnostic in output order::

    <severity> [<file>:]<line>:<column> <exact message>
      note <file>:<line>:<column> <exact message>

* The location is that of the diagnostic (1-based, token start). ``<file>:`` is the base name of the
  file and is left out for ``main.stl``.
* Indented ``note`` lines belong to the diagnostic above them and always name their file. Notes are
  compared exactly: a diagnostic with no note lines must have no notes.
* An empty ``expected.txt`` is a case that must load without any diagnostic.
* Optional ``include_paths.txt``: include paths, one per line, relative to the case folder.

The case is loaded with ``sengen.load`` from inside its folder (the working directory is the case
folder), so every message that mentions the current directory is deterministic.

``KNOWN_FAILURES`` marks cases where the implementation deviates from the spec
(``../shared/spec/stl.md``): their ``expected.txt`` follows the spec, and the case is a strict
xfail until the implementation is fixed, at which point the entry must be removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import sengen

KNOWN_FAILURES: dict[str, str] = {}

CASES_DIR = Path(__file__).resolve().parent / "invalid"
CASES = sorted(p.name for p in CASES_DIR.iterdir() if p.is_dir())

# Cases whose diagnostics must carry notes (cycle chain, earlier declaration, @param comment,
# import chain); the check below makes sure their expected.txt really asserts those notes.
CASES_WITH_NOTES = (
    "068_pkg_second_package",
    "074_import_cycle",
    "075_import_error_in_imported_file",
    "076_import_self_cycle",
    "077_import_cycle_deep",
    "078_import_error_two_levels_deep",
    "093_dup_type_same_file",
    "094_dup_type_across_files",
    "139_param_documented_twice",
    "140_param_not_in_argument_list",
)

_DIAGNOSTIC = re.compile(r"(error|warning|note) (?:([^\s:]+):)?(\d+):(\d+) (.*)")
_NOTE = re.compile(r"\s+note ([^\s:]+):(\d+):(\d+) (.*)")


@dataclass(frozen=True)
class Expected:
    """One diagnostic as written in expected.txt, or as found, in the same normal form."""

    severity: str
    file: str
    line: int
    column: int
    message: str
    notes: tuple[tuple[str, int, int, str], ...] = ()

    def render(self) -> str:
        where = f"{self.line}:{self.column}"
        if self.file != "main.stl":
            where = f"{self.file}:{where}"
        lines = [f"{self.severity} {where} {self.message}"]
        lines += [f"  note {f}:{ln}:{col} {msg}" for f, ln, col, msg in self.notes]
        return "\n".join(lines)


def parse_expected(path: Path) -> list[Expected]:
    result: list[Expected] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        note = _NOTE.fullmatch(raw)
        if note is not None:
            assert result, f"{path}:{number}: a note line needs a diagnostic above it"
            last = result[-1]
            entry = (note[1], int(note[2]), int(note[3]), note[4])
            result[-1] = Expected(
                last.severity, last.file, last.line, last.column, last.message, (*last.notes, entry)
            )
            continue
        match = _DIAGNOSTIC.fullmatch(raw)
        assert match is not None, f"{path}:{number}: malformed expected line {raw!r}"
        severity, file, line, column, message = match.groups()
        result.append(Expected(severity, file or "main.stl", int(line), int(column), message))
    return result


def actual(diagnostics: tuple[sengen.Diagnostic, ...]) -> list[Expected]:
    return [
        Expected(
            d.severity.value,
            Path(d.file).name,
            d.line,
            d.column,
            d.message,
            tuple((Path(n.file).name, n.line, n.column, n.message) for n in d.notes),
        )
        for d in diagnostics
    ]


def _params() -> list[object]:
    params: list[object] = []
    for name in CASES:
        marks = []
        if name in KNOWN_FAILURES:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[name], strict=True))
        params.append(pytest.param(name, id=name, marks=marks))
    return params


@pytest.mark.parametrize("case", _params())
def test_invalid_case(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = CASES_DIR / case
    expected = parse_expected(folder / "expected.txt")
    include_file = folder / "include_paths.txt"
    include_paths = (
        include_file.read_text(encoding="utf-8").split() if include_file.exists() else []
    )
    monkeypatch.chdir(folder)

    result = sengen.load(["main.stl"], include_paths=include_paths)

    found = actual(result.diagnostics)
    assert "\n".join(e.render() for e in found) == "\n".join(e.render() for e in expected)
    assert found == expected
    has_error = any(d.severity is sengen.Severity.ERROR for d in result.diagnostics)
    assert (result.program is None) == has_error


def test_case_folders_are_well_formed() -> None:
    assert len(CASES) >= 70
    for name in CASES:
        assert re.fullmatch(r"\d{2,3}_[a-z0-9_]+", name), name
        assert (CASES_DIR / name / "main.stl").is_file(), name
        assert (CASES_DIR / name / "expected.txt").is_file(), name
    numbers = [name.split("_", 1)[0] for name in CASES]
    assert len(set(numbers)) == len(numbers), "case numbers must be unique"


def test_known_failures_name_existing_cases() -> None:
    assert set(KNOWN_FAILURES) <= set(CASES)


@pytest.mark.parametrize("case", CASES_WITH_NOTES)
def test_note_cases_assert_their_notes(case: str) -> None:
    expected = parse_expected(CASES_DIR / case / "expected.txt")
    assert any(e.notes for e in expected), f"{case}: expected.txt asserts no note"
