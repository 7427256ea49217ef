"""The ``sengen`` command line (stl.md §9.1 format, §9.2 exit codes and robustness, §9.4
``sengen check``; codegen.md §4 settings and §7 ``[tool.sengen]``).

Most tests run the real command, ``python -m sengen``, in a subprocess with the test's own
folder as the working directory, so that exit codes, stdout/stderr separation and display paths
are those a user sees. Tests that need to patch sengen's internals call ``sengen.cli.main.main``
in-process and read the output with ``capsys``.

Expected values come from the spec, never from what the implementation happens to print.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from corpus_layout import DEFAULT_INCLUDES, FOM_INCLUDE, corpus_root, main_run

import sengen
import sengen.cli.main
import sengen.stl.loader
from sengen.stl.model import ClassType

TIMEOUT = 120  # seconds for one command; a normal run takes well under one


W_UNIT = "unknown unit 'u16': the quantity is treated as unitless"
PR_CAPBSET_DROP = 24  # prctl(2)
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2


# --------------------------------------------------------------------------------------------
# helpers


def main_run_files(root: Path) -> list[str]:
    """stl.md §11.3: every corpus file except the `.conan` copies and the later group members."""
    every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.stl"))
    assert len(every) == 91, f"expected the 91 corpus files of stl.md §11.1, found {len(every)}"
    return main_run(every)


def run_sengen(
    args: Sequence[str],
    cwd: Path,
    preexec_fn: Callable[[], None] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m sengen ARGS`` in ``cwd``; output decoded leniently so any bytes can be read."""
    return subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=TIMEOUT,
        preexec_fn=preexec_fn,
        check=False,
    )


def call_main(argv: Sequence[str]) -> int:
    """``sengen.cli.main.main`` in-process; argparse's SystemExit becomes the exit code."""
    try:
        return sengen.cli.main.main(list(argv))
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else 1


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


WARNING_ONLY = "package x;\nquantity<u16, u16> Q;\n"
WITH_ERROR = "package x;\nstruct S {\n  a : Vec3\n}\n"
CLASS_C = "package x;\nclass C {\n  var p : i32;\n  fn m() -> i32;\n}\n"


# --------------------------------------------------------------------------------------------
# §9.2 exit codes


def test_valid_file_with_warning_exits_0(tmp_path: Path) -> None:
    write(tmp_path / "w.stl", WARNING_ONLY)
    result = run_sengen(["check", "w.stl"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"w.stl:2:15: warning: {W_UNIT}" in result.stderr.splitlines()
    assert result.stdout == "sengen: checked 1 file (1 type, 0 classes); 1 warning\n"
    assert_no_traceback(result)


def test_error_exits_1(tmp_path: Path) -> None:
    write(tmp_path / "e.stl", WITH_ERROR)
    result = run_sengen(["check", "e.stl"], tmp_path)
    assert result.returncode == 1
    assert "e.stl:3:7: error: type not found: 'Vec3'" in result.stderr.splitlines()
    assert_no_traceback(result)


def test_errors_in_one_input_do_not_stop_the_others(tmp_path: Path) -> None:
    """§9.3: an error in one input file does not stop the checking of the other inputs."""
    write(tmp_path / "a.stl", WITH_ERROR)
    write(tmp_path / "b.stl", WARNING_ONLY.replace("package x;", "package y;"))
    result = run_sengen(["check", "a.stl", "b.stl"], tmp_path)
    assert result.returncode == 1
    headers = [
        line for line in result.stderr.splitlines() if ": error: " in line or ": warn" in line
    ]
    assert headers == [
        "a.stl:3:7: error: type not found: 'Vec3'",
        f"b.stl:2:15: warning: {W_UNIT}",
    ]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["check", "--bogus", "x.stl"], id="unknown-option"),
        pytest.param(["--bogus"], id="unknown-global-option"),
        pytest.param(["check", "--format", "xml", "x.stl"], id="bad-format-value"),
        pytest.param(["check", "--format"], id="format-without-value"),
        pytest.param(["check", "x.stl", "-I"], id="include-without-dir"),
        pytest.param(["check", "x.stl", "--settings"], id="settings-without-file"),
        pytest.param([], id="no-command"),
        pytest.param(["frobnicate"], id="unknown-command"),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    write(tmp_path / "x.stl", WARNING_ONLY)
    result = run_sengen(args, tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "usage:" in result.stderr
    assert result.stdout == ""
    assert_no_traceback(result)


def test_usage_error_in_process_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert call_main(["check", "--format", "yaml"]) == 2
    assert "--format" in capsys.readouterr().err


def test_version(tmp_path: Path) -> None:
    result = run_sengen(["--version"], tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"sengen {sengen.__version__}"
    assert_no_traceback(result)


def test_debug_is_accepted_by_check(tmp_path: Path) -> None:
    """§9.2: ``--debug`` is accepted by every command; without an internal error it changes
    nothing."""
    write(tmp_path / "w.stl", WARNING_ONLY)
    plain = run_sengen(["check", "w.stl"], tmp_path)
    debug = run_sengen(["check", "--debug", "w.stl"], tmp_path)
    assert (debug.returncode, debug.stdout, debug.stderr) == (0, plain.stdout, plain.stderr)


# --------------------------------------------------------------------------------------------
# §9.1 text format


def test_text_format_with_tabs(tmp_path: Path) -> None:
    """Header, the whole source line, and a caret line that copies the tabs of the prefix, with
    one caret per character of the token."""
    source_line = "\t\tfield :\tVec3,"
    write(tmp_path / "t.stl", f"package x;\nstruct S {{\n{source_line}\n\tb : i32\n}}\n")
    result = run_sengen(["check", "t.stl"], tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    # Columns count code points and a tab is one column: \t \t f i e l d ' ' : \t V -> column 11.
    assert lines[0] == "t.stl:3:11: error: type not found: 'Vec3'"
    gutter, shown = lines[1].split(" | ", 1)
    assert gutter.strip() == "3"
    assert shown == source_line
    bar = lines[1].index("|")
    assert lines[2][bar] == "|"
    assert lines[2][:bar].strip() == ""
    assert lines[2][bar + 2 :] == "\t\t       \t^^^^"
    assert len(lines) == 3


def test_text_format_carets_cover_quotes_and_import_note(tmp_path: Path) -> None:
    """§9.1: for strings the carets cover the quotes; an error in an imported file is followed by
    an ``imported from`` note (§4.2 step 6), itself with source line and carets."""
    write(tmp_path / "lib.stl", "package lib;\nstruct S { a : Nope }\n")
    write(tmp_path / "main.stl", 'import "lib.stl"\npackage app;\n')
    write(tmp_path / "fom.stl", 'import "rpr/x.xml"\npackage fom;\n')
    result = run_sengen(["check", "main.stl", "fom.stl"], tmp_path)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "lib.stl:2:16: error: type not found: 'Nope'"
    assert lines[1].endswith(" | struct S { a : Nope }")
    assert lines[2].endswith("|                ^^^^")
    assert lines[3].startswith("main.stl:1:8: note: imported from")
    assert lines[4].endswith(' | import "lib.stl"')
    assert lines[5].endswith("|        ^^^^^^^^^")
    assert lines[6].startswith(
        "fom.stl:1:8: error: could not find file 'rpr/x.xml' directly or in any of the include"
    )
    assert lines[8].endswith("|        " + "^" * len('"rpr/x.xml"'))


def test_no_diagnostics_prints_only_the_summary(tmp_path: Path) -> None:
    write(tmp_path / "ok.stl", "package x;\nstruct S { a : i32 }\n")
    result = run_sengen(["check", "ok.stl"], tmp_path)
    summary = "sengen: checked 1 file (1 type, 0 classes)\n"
    assert (result.returncode, result.stdout, result.stderr) == (0, summary, "")
    quiet = run_sengen(["check", "-q", "ok.stl"], tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_build_prints_what_it_did_unless_quiet(tmp_path: Path) -> None:
    write(tmp_path / "c.stl", CLASS_C)
    built = run_sengen(["build", "c.stl", "--out", "gen"], tmp_path)
    assert (built.returncode, built.stderr) == (0, "")
    generated = [p for p in (tmp_path / "gen").rglob("*") if p.is_file()]
    outputs = len([p for p in generated if p.name != ".sengen-manifest.json"])
    assert built.stdout == (
        f"sengen: built 1 file (1 type, 1 class): {outputs} outputs written, 0 unchanged\n"
    )
    again = run_sengen(["build", "c.stl", "--out", "gen"], tmp_path)
    assert again.stdout == f"sengen: up to date: {outputs} outputs unchanged\n"
    checked = run_sengen(["build", "c.stl", "--out", "gen", "--check"], tmp_path)
    assert (checked.returncode, checked.stdout) == (0, again.stdout)
    quiet = run_sengen(["build", "c.stl", "--out", "gen", "-q"], tmp_path)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_docs_without_out_prints_the_reference(tmp_path: Path) -> None:
    write(tmp_path / "c.stl", CLASS_C)
    printed = run_sengen(["docs", "c.stl"], tmp_path)
    assert (printed.returncode, printed.stderr) == (0, "")
    assert printed.stdout.startswith("# STL reference\n") and "x.C" in printed.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.stl"]  # no file written
    written = run_sengen(["docs", "c.stl", "--out", "ref.md"], tmp_path)
    assert (written.returncode, written.stdout) == (0, "")
    assert (tmp_path / "ref.md").read_text() == printed.stdout


# --------------------------------------------------------------------------------------------
# §9.4 --format json


def test_json_format(tmp_path: Path) -> None:
    write(tmp_path / "lib.stl", "package lib;\nstruct S {\n  a : Nope\n}\n")
    write(tmp_path / "main.stl", 'import "lib.stl"\npackage app;\n')
    write(tmp_path / "w.stl", WARNING_ONLY)
    result = run_sengen(["check", "--format", "json", "main.stl", "w.stl"], tmp_path)
    assert result.returncode == 1
    assert result.stderr == ""  # the diagnostics go to stdout instead
    data = json.loads(result.stdout)  # the whole of stdout is one JSON document
    assert isinstance(data, list)
    assert [sorted(d) for d in data] == [
        ["column", "file", "line", "message", "notes", "severity"]
    ] * 2
    error, warning = data
    assert {k: error[k] for k in ("severity", "file", "line", "column", "message")} == {
        "severity": "error",
        "file": "lib.stl",
        "line": 3,
        "column": 7,
        "message": "type not found: 'Nope'",
    }
    assert len(error["notes"]) == 1
    note = error["notes"][0]
    assert {k: note[k] for k in ("file", "line", "column")} == {
        "file": "main.stl",
        "line": 1,
        "column": 8,
    }
    assert note["message"].startswith("imported from")
    assert warning == {
        "severity": "warning",
        "file": "w.stl",
        "line": 2,
        "column": 15,
        "message": W_UNIT,
        "notes": [],
    }


def test_json_format_without_diagnostics_is_an_empty_array(tmp_path: Path) -> None:
    write(tmp_path / "ok.stl", "package x;\nstruct S { a : i32 }\n")
    result = run_sengen(["check", "ok.stl", "--format", "json"], tmp_path)
    assert result.returncode == 0
    assert json.loads(result.stdout) == []


def test_json_format_for_file_level_error(tmp_path: Path) -> None:
    result = run_sengen(["check", "--format=json", "missing.stl"], tmp_path)
    assert result.returncode == 1
    [entry] = json.loads(result.stdout)
    assert entry["severity"] == "error"
    assert entry["file"] == "missing.stl"
    assert entry["message"]


# --------------------------------------------------------------------------------------------
# §9.1 display paths


def test_display_path_relative_when_under_cwd(tmp_path: Path) -> None:
    target = write(tmp_path / "sub" / "e.stl", WITH_ERROR)
    for spelled in (str(target), "sub/e.stl", "./sub/../sub/e.stl"):
        result = run_sengen(["check", spelled], tmp_path)
        assert result.stderr.splitlines()[0].startswith("sub/e.stl:3:7: error:"), spelled


def test_display_path_resolved_when_outside_cwd(tmp_path: Path) -> None:
    target = write(tmp_path / "other" / "e.stl", WITH_ERROR)
    (tmp_path / "here").mkdir()
    for spelled in (str(target), "../other/e.stl"):
        result = run_sengen(["check", spelled], tmp_path / "here")
        expected = f"{target.resolve().as_posix()}:3:7: error:"
        assert result.stderr.splitlines()[0].startswith(expected), spelled


def test_display_path_of_missing_file_outside_cwd(tmp_path: Path) -> None:
    (tmp_path / "here").mkdir()
    result = run_sengen(["check", "../missing.stl"], tmp_path / "here")
    assert result.returncode == 1
    resolved = (tmp_path / "missing.stl").resolve().as_posix()
    assert result.stderr.splitlines()[0].startswith(f"{resolved}: error:")


# --------------------------------------------------------------------------------------------
# §9.4 without PATH: the project's [tool.sengen] table


def _project(tmp_path: Path, table: str) -> None:
    write(tmp_path / "inc" / "stl" / "base.stl", "package base;\nstruct T { a : i32 }\n")
    write(
        tmp_path / "stl" / "app.stl",
        'import "stl/base.stl"\npackage app;\nstruct U { t : base.T }\n',
    )
    write(tmp_path / "pyproject.toml", f'[project]\nname = "demo"\n\n[tool.sengen]\n{table}')


def test_project_sources_and_include_paths(tmp_path: Path) -> None:
    _project(tmp_path, 'sources = ["stl"]\ninclude-paths = ["inc"]\n')
    result = run_sengen(["check"], tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    # The include path really is what makes the import resolve:
    _project(tmp_path, 'sources = ["stl"]\n')
    result = run_sengen(["check"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("stl/app.stl:1:8: error: could not find file 'stl/base.stl'")


def test_project_sources_with_errors(tmp_path: Path) -> None:
    _project(tmp_path, 'sources = ["stl", "bad.stl"]\ninclude-paths = ["inc"]\n')
    write(tmp_path / "bad.stl", WITH_ERROR)
    result = run_sengen(["check", "--format", "json"], tmp_path)
    assert result.returncode == 1
    assert [(d["file"], d["line"], d["column"]) for d in json.loads(result.stdout)] == [
        ("bad.stl", 3, 7)
    ]


def test_project_found_from_a_subfolder(tmp_path: Path) -> None:
    """Paths in the table are relative to the folder of pyproject.toml."""
    _project(tmp_path, 'sources = ["stl"]\ninclude-paths = ["inc"]\n')
    result = run_sengen(["check"], tmp_path / "stl")
    assert (result.returncode, result.stderr) == (0, "")


def test_project_settings_entry(tmp_path: Path) -> None:
    _project(tmp_path, 'sources = ["stl"]\ninclude-paths = ["inc"]\nsettings = "s.json"\n')
    write(tmp_path / "s.json", '{"classes": {"app.Nope": {"checkedProperties": []}}}')
    write(tmp_path / "bad.json", "{not json")
    result = run_sengen(["check"], tmp_path)
    assert result.returncode == 0  # a class that is not in the run is only a warning
    assert result.stderr.startswith("s.json: warning: ")
    _project(tmp_path, 'sources = ["stl"]\ninclude-paths = ["inc"]\nsettings = "bad.json"\n')
    result = run_sengen(["check"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("bad.json: error: ")


@pytest.mark.parametrize(
    ("table", "word"),
    [
        pytest.param('sources = ["stl"]\nbogus = 1\n', "bogus", id="unknown-key"),
        pytest.param('sources = "stl"\n', "sources", id="sources-not-a-list"),
        pytest.param(
            'sources = ["stl"]\ninclude-paths = "inc"\n', "include-paths", id="wrong-type"
        ),
        pytest.param("sources = [1, 2]\n", "sources", id="list-of-numbers"),
        pytest.param("include-paths = []\n", "sources", id="no-sources"),
        pytest.param('sources = ["stl"\n', "", id="invalid-toml"),
    ],
)
def test_bad_project_table_exits_1(tmp_path: Path, table: str, word: str) -> None:
    _project(tmp_path, table)
    result = run_sengen(["check"], tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("pyproject.toml: error: "), result.stderr
    assert word in result.stderr
    assert_no_traceback(result)


def test_no_project_without_path(tmp_path: Path) -> None:
    """No PATH and no [tool.sengen] table: a message, never a traceback."""
    write(tmp_path / "pyproject.toml", '[project]\nname = "demo"\n')
    result = run_sengen(["check"], tmp_path)
    assert result.returncode in (1, 2)
    assert "pyproject.toml" in result.stderr
    assert "[tool.sengen]" in result.stderr
    assert_no_traceback(result)


# --------------------------------------------------------------------------------------------
# --settings (codegen.md §4)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{not json", "settings: invalid JSON", id="invalid-json"),
        pytest.param(b"\xff\xfe{}", "settings: invalid JSON", id="not-utf8"),
        pytest.param("", "settings: invalid JSON", id="empty"),
        pytest.param("[1, 2]", "settings: expecting a JSON object", id="not-an-object"),
        pytest.param(
            '{"classes": {"x.C": {"checkedProperties": "p"}}}',
            "expecting a list for 'checkedProperties' of class 'x.C'",
            id="not-a-list",
        ),
        pytest.param(
            '{"classes": {"x.C": {"deferredMethods": [1]}}}',
            "expecting a list for 'deferredMethods' of class 'x.C'",
            id="not-a-list-of-strings",
        ),
        pytest.param(
            '{"classes": {"x.C": {"checkedProperties": ["nope"]}}}',
            "settings: class 'x.C' has no property 'nope'",
            id="unknown-property",
        ),
        pytest.param(
            '{"classes": {"x.C": {"deferredMethods": ["nope"]}}}',
            "settings: class 'x.C' has no method 'nope'",
            id="unknown-method",
        ),
    ],
)
def test_bad_settings_exit_1(tmp_path: Path, content: str | bytes, message: str) -> None:
    write(tmp_path / "c.stl", CLASS_C)
    settings = tmp_path / "s.json"
    if isinstance(content, bytes):
        settings.write_bytes(content)
    else:
        settings.write_text(content, encoding="utf-8")
    result = run_sengen(["check", "c.stl", "--settings", "s.json"], tmp_path)
    assert result.returncode == 1, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("s.json: error: "), first
    assert message in first
    assert_no_traceback(result)


def test_unknown_property_message_exact(tmp_path: Path) -> None:
    """The wording of codegen.md §4 for a class of this run without the listed property."""
    write(tmp_path / "c.stl", "package x;\nclass C {\n  var q : i32;\n}\n")
    write(tmp_path / "s.json", '{"classes": {"x.C": {"checkedProperties": ["p"]}}}')
    result = run_sengen(["check", "c.stl", "--settings", "s.json"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "s.json: error: settings: class 'x.C' has no property 'p'"
    ]


def test_missing_settings_file_exits_1(tmp_path: Path) -> None:
    write(tmp_path / "c.stl", CLASS_C)
    result = run_sengen(["check", "c.stl", "--settings", "nothere.json"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("nothere.json: error: ")
    assert_no_traceback(result)


def test_settings_make_property_checked_and_method_deferred(tmp_path: Path) -> None:
    write(tmp_path / "c.stl", CLASS_C)
    write(
        tmp_path / "s.json",
        '{"classes": {"x.C": {"checkedProperties": ["p"], "deferredMethods": ["m"]}}}',
    )

    def flags(settings: Path | None) -> tuple[bool, bool]:
        result = sengen.load([tmp_path / "c.stl"], settings=settings)
        assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
        assert result.program is not None
        found = result.program.find("x.C")
        assert isinstance(found, ClassType)
        [prop] = found.properties
        [method] = found.methods
        return prop.checked, method.deferred

    assert flags(None) == (False, False)
    assert flags(tmp_path / "s.json") == (True, True)
    result = run_sengen(["check", "c.stl", "--settings", "s.json"], tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


def test_settings_for_inherited_property(tmp_path: Path) -> None:
    """Names are looked up in the class and its ancestors (validate against the hierarchy)."""
    write(tmp_path / "d.stl", CLASS_C + "class D : extends C {\n  var r : i32;\n}\n")
    write(tmp_path / "s.json", '{"classes": {"x.D": {"checkedProperties": ["p", "r"]}}}')
    result = run_sengen(["check", "d.stl", "--settings", "s.json"], tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


# --------------------------------------------------------------------------------------------
# §9.2 robustness: every bad input is a diagnostic with the path, never a traceback


def _huge_fields() -> str:
    """One line of about 1 MB: a struct with many fields and an error at the very end."""
    head = "package x; struct S { "
    parts: list[str] = []
    size = len(head)
    i = 0
    while size < 1_000_000:
        part = f"f{i} : i32, "
        parts.append(part)
        size += len(part)
        i += 1
    return head + "".join(parts) + "g : Nope }"


ROBUSTNESS_CASES = [
    # (name, content, exit code, expected start of stderr after the file name)
    ("binary", bytes(range(256)) * 8, 1, ":2:118: error: invalid UTF-8 in source file"),
    ("nul-bytes", b"package x;\n\x00\x01\x02", 1, ":2:1: error: unexpected character"),
    ("non-utf8", b"package x;\n// caf\xe9\n", 1, ":2:7: error: invalid UTF-8 in source file"),
    ("latin1-identifier", b"package x;\nstruct \xc9 {}\n", 1, ":2:8: error: invalid UTF-8"),
    ("truncated-utf8", b"package x; // \xe2\x82", 1, ":1:15: error: invalid UTF-8"),
    ("utf16", "package x;\n".encode("utf-16"), 1, ":1:1: error: invalid UTF-8"),
    ("empty", b"", 0, ""),
    ("bom-only", b"\xef\xbb\xbf", 0, ""),
    ("only-comments", b"// one\n//---- ruler\n/// three\n//", 0, ""),
    ("only-whitespace", b" \t\r\n\n  \r\n", 0, ""),
    ("huge-comment-line", b"// " + b"x" * 1_000_000, 0, ""),
    ("huge-line-error", _huge_fields().encode(), 1, ":1:1000011: error: type not found: 'Nope'"),
    ("huge-identifier", b"package x; " + b"a" * 1_000_000, 1, ":1:12: error: Expected statement"),
    ("huge-string", b'import "' + b"a" * 1_000_000, 1, ":1:8: error: Unterminated string."),
    ("long-integer", b"array<u8, " + b"9" * 4000 + b"> A;", 1, ":1:11: error: integer literal"),
    ("deep-ref", b"package x; struct S { a : " + b"a." * 100_000 + b"b }", 1, ":1:27: error: "),
]
ROBUSTNESS_CASES.append(
    (
        "huge-integer",
        b"package x;\narray<u8, " + b"9" * 100_000 + b"> A;",
        1,
        ":2:11: error: integer literal out of range",
    )
)
ROBUSTNESS_PARAMS = [
    pytest.param(content, code, first, id=name) for name, content, code, first in ROBUSTNESS_CASES
]


@pytest.mark.parametrize(("content", "code", "first"), ROBUSTNESS_PARAMS)
def test_bad_input_robustness(
    tmp_path: Path, request: pytest.FixtureRequest, content: bytes, code: int, first: str
) -> None:
    name = request.node.callspec.id
    (tmp_path / f"{name}.stl").write_bytes(content)
    result = run_sengen(["check", f"{name}.stl"], tmp_path)
    assert_no_traceback(result)
    assert result.returncode == code, result.stderr[:2000]
    if code == 0:
        assert result.stderr == ""
    else:
        assert result.stderr.startswith(f"{name}.stl{first}"), result.stderr[:500]


def test_missing_file(tmp_path: Path) -> None:
    result = run_sengen(["check", "missing.stl"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines()[0].startswith("missing.stl: error: ")
    assert_no_traceback(result)


def test_missing_and_present_inputs(tmp_path: Path) -> None:
    """A missing input is reported, and the other inputs are still checked (§9.3)."""
    write(tmp_path / "w.stl", WARNING_ONLY)
    result = run_sengen(["check", "missing.stl", "w.stl", "nodir/"], tmp_path)
    assert result.returncode == 1
    assert f"w.stl:2:15: warning: {W_UNIT}" in result.stderr
    assert "missing.stl: error: " in result.stderr
    assert "nodir: error: " in result.stderr
    assert_no_traceback(result)


def test_missing_include_path_is_harmless(tmp_path: Path) -> None:
    write(tmp_path / "w.stl", WARNING_ONLY)
    write(tmp_path / "plain-file", "")
    result = run_sengen(["check", "w.stl", "-I", "nothere", "-I", "plain-file"], tmp_path)
    assert result.returncode == 0
    assert_no_traceback(result)


def test_odd_import_strings(tmp_path: Path) -> None:
    """Import strings that are not usable paths are 'could not find file' errors."""
    for i, spelled in enumerate(["", ".", "/", "a\x00b", "/dev/null", "..", "\u00e9\u20ac"]):
        write(tmp_path / f"i{i}.stl", f'import "{spelled}"\npackage p{i};\n')
        result = run_sengen(["check", f"i{i}.stl"], tmp_path)
        assert_no_traceback(result)
        assert result.returncode == 1, (spelled, result.stderr)
        assert result.stderr.startswith(f"i{i}.stl:1:8: error: could not find file "), spelled


OVERLONG = "a" * 5000  # longer than NAME_MAX and PATH_MAX: ENAMETOOLONG


def test_overlong_import_string(tmp_path: Path) -> None:
    write(tmp_path / "long.stl", f'import "{OVERLONG}"\npackage x;\n')
    result = run_sengen(["check", "long.stl"], tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr[:300]
    assert result.stderr.startswith("long.stl:1:8: error: could not find file "), result.stderr


def test_overlong_path_argument(tmp_path: Path) -> None:
    result = run_sengen(["check", OVERLONG], tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr[:300]
    assert result.stderr.startswith(f"{OVERLONG}: error: "), result.stderr[:300]


def test_overlong_settings_path(tmp_path: Path) -> None:
    write(tmp_path / "w.stl", WARNING_ONLY)
    result = run_sengen(["check", "w.stl", "--settings", OVERLONG], tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{OVERLONG}: error: ")


def test_self_symlink_input(tmp_path: Path) -> None:
    (tmp_path / "loop.stl").symlink_to("loop.stl")
    result = run_sengen(["check", "loop.stl"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("loop.stl: error: "), result.stderr
    assert_no_traceback(result)


def test_self_symlink_inside_folder(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "loop.stl").symlink_to("loop.stl")
    write(tmp_path / "folder" / "ok.stl", "package ok;\n")
    result = run_sengen(["check", "folder"], tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("folder/loop.stl: error: "), result.stderr


def _drop_dac_capabilities() -> None:
    """In the child, before exec: remove the capabilities that let root ignore file modes from
    the bounding set, so that the exec'd interpreter runs without them."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _without_file_permissions(tmp_path: Path) -> Callable[[], None] | None:
    """How to run a command for which mode 000 really blocks reading.

    Tests run as root here, and root reads mode-000 files. Dropping CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH for the child makes the permission bits count again; when even that is
    not possible, the test is skipped.
    """
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    preexec: Callable[[], None] | None = None
    if os.geteuid() == 0:
        preexec = _drop_dac_capabilities
    try:
        result = subprocess.run(
            [sys.executable, "-c", f"open({str(probe)!r}).read()"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            preexec_fn=preexec,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"cannot run a child without CAP_DAC_OVERRIDE: {exc}")
    finally:
        probe.chmod(stat.S_IRUSR | stat.S_IWUSR)
        probe.unlink()
    if "PermissionError" not in result.stderr:
        pytest.skip("mode 000 does not block reading for this user, even without DAC capabilities")
    return preexec


def test_unreadable_folder_and_file(tmp_path: Path) -> None:
    preexec = _without_file_permissions(tmp_path)
    write(tmp_path / "tree" / "ok.stl", "package ok;\n")
    write(tmp_path / "tree" / "locked" / "hidden.stl", "package hidden;\n")
    write(tmp_path / "tree" / "secret.stl", "package secret;\n")
    write(tmp_path / "closed" / "x.stl", "package closed;\n")
    (tmp_path / "tree" / "locked").chmod(0)
    (tmp_path / "tree" / "secret.stl").chmod(0)
    (tmp_path / "closed").chmod(0)
    try:
        cases = {
            "tree": ["tree/locked: error: ", "tree/secret.stl: error: "],
            "closed": ["closed: error: "],
            "tree/secret.stl": ["tree/secret.stl: error: "],
        }
        for spelled, expected in cases.items():
            result = run_sengen(["check", spelled], tmp_path, preexec_fn=preexec)
            assert_no_traceback(result)
            assert result.returncode == 1, (spelled, result.stderr)
            lines = result.stderr.splitlines()
            for start in expected:
                assert any(line.startswith(start) for line in lines), (spelled, lines)
    finally:
        for path in ("tree/locked", "tree/secret.stl", "closed"):
            (tmp_path / path).chmod(stat.S_IRWXU)


def _run_watching_fifo(args: Sequence[str], cwd: Path, fifo: Path) -> tuple[bool, int, str]:
    """Run sengen; if it blocks reading ``fifo`` (a reader appears), release it with EOF.

    Returns whether sengen opened the FIFO, the exit code and stderr.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    opened = False
    deadline = time.monotonic() + TIMEOUT
    while process.poll() is None and time.monotonic() < deadline:
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: nobody has the FIFO open for reading
                raise
            time.sleep(0.02)
        else:
            opened = True
            os.close(writer)  # the reader now sees end of file and can go on
    try:
        _, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
    return opened, process.returncode, stderr


def test_fifo_given_directly(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.stl")
    opened, code, stderr = _run_watching_fifo(
        ["check", "pipe.stl"], tmp_path, tmp_path / "pipe.stl"
    )
    assert not opened
    assert code == 1
    assert stderr.startswith("pipe.stl: error: "), stderr


def test_fifo_inside_folder(tmp_path: Path) -> None:
    write(tmp_path / "dir" / "ok.stl", "package ok;\n")
    os.mkfifo(tmp_path / "dir" / "pipe.stl")
    opened, code, stderr = _run_watching_fifo(["check", "dir"], tmp_path, tmp_path / "dir/pipe.stl")
    assert not opened, "sengen blocked reading a FIFO"
    assert code == 1
    assert stderr.startswith("dir/pipe.stl: error: "), stderr


# --------------------------------------------------------------------------------------------
# §9.2 internal errors


def _explode(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("simulated failure")


def test_internal_error_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "ok.stl", "package x;\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sengen.stl.loader, "parse", _explode)
    assert call_main(["check", "ok.stl"]) == 4
    out, err = capsys.readouterr()
    assert err.startswith(f"internal error in sengen {sengen.__version__}: ")
    assert "simulated failure" in err.splitlines()[0]
    assert "report" in err
    assert "Traceback" not in err
    assert out == ""

    assert call_main(["check", "--debug", "ok.stl"]) == 4
    _, err = capsys.readouterr()
    assert "Traceback (most recent call last)" in err
    assert "RuntimeError: simulated failure" in err
    assert f"internal error in sengen {sengen.__version__}: " in err


def test_internal_error_exit_4_in_json_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "ok.stl", "package x;\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sengen.stl.loader, "parse", _explode)
    assert call_main(["check", "--format", "json", "ok.stl"]) == 4
    _, err = capsys.readouterr()
    assert f"internal error in sengen {sengen.__version__}" in err


def test_internal_error_exit_4_as_a_process(tmp_path: Path) -> None:
    """The same through a real interpreter, with sengen's parser replaced before ``main``."""
    write(tmp_path / "ok.stl", "package x;\n")
    script = (
        "import sys, sengen.stl.loader, sengen.cli.main\n"
        "def boom(*a, **k):\n"
        "    raise RuntimeError('simulated failure')\n"
        "sengen.stl.loader.parse = boom\n"
        "sys.exit(sengen.cli.main.main(sys.argv[1:]))\n"
    )
    for debug in (False, True):
        args = ["check", "ok.stl", *(["--debug"] if debug else [])]
        result = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 4
        assert f"internal error in sengen {sengen.__version__}: " in result.stderr
        assert "report" in result.stderr
        assert ("Traceback" in result.stderr) == debug


# --------------------------------------------------------------------------------------------
# §11.3: the main run of the corpus as one command


def test_corpus_main_run_as_one_command() -> None:
    """Every corpus file except the later alternative members, with the §11.2 include roots.

    The four FOM files resolve (fom.md §12.5): the FOM set is loaded once, so its two W3
    warnings appear once, with the import that loaded it as a note. The W-unit warning too.
    """
    root = corpus_root()
    files = main_run_files(root)
    assert len(files) == 91 - 4 - 9
    includes = [arg for include in DEFAULT_INCLUDES for arg in ("-I", include)]
    result = run_sengen(["check", *files, *includes, "--format", "json"], root)
    assert result.returncode == 0
    # W-name warnings (Python-name mangling) are test_naming.py's; fom.md §12.5 adds four, in
    # NETN-METOC.xml, which basic_types.stl reaches.
    everything = json.loads(result.stdout)
    data = [d for d in everything if "is reserved in Python" not in d["message"]]
    metoc = f"{FOM_INCLUDE}/netn/NETN-METOC.xml"
    assert [(d["line"], d["column"]) for d in everything if d["file"] == metoc] == [
        (1081, 27), (1101, 27), (1156, 27), (1186, 27)
    ]  # fmt: skip
    mappings = f"{FOM_INCLUDE}/base_mappings.xml"
    w3 = (
        "'ignore' has no effect here: the interaction's whole struct 'rpr.MunitionDetonation' "
        "is used"
    )
    assert [(d["severity"], d["file"], d["line"], d["column"], d["message"]) for d in data] == [
        ("warning", mappings, 5, 13, w3),
        ("warning", mappings, 6, 13, w3),
        ("warning", "test/util/my_package/stl/my_package/basic_types.stl", 87, 15, W_UNIT),
    ]
    # The same run in text form: the same headers on stderr.
    text = run_sengen(["check", *files, *includes], root)
    assert text.returncode == 0
    headers = [line for line in text.stderr.splitlines() if not line.lstrip()[:1].isdigit()]
    headers = [line for line in headers if not line.lstrip().startswith("|")]
    headers = [line for line in headers if "is reserved in Python" not in line]
    assert [line for line in headers if ": note: " not in line] == [
        f"{mappings}:5:13: warning: {w3}",
        f"{mappings}:6:13: warning: {w3}",
        f"test/util/my_package/stl/my_package/basic_types.stl:87:15: warning: {W_UNIT}",
    ]
