"""Python naming (codegen.md §2.2-2.3): snake_case, reserved names, and the mangling warnings
that ``sengen check`` reports, exactly as stl.md §11.4 lists them for the corpus."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from corpus_layout import FOM_FILES, corpus_files, corpus_root, includes_for

import sengen
from sengen.codegen.naming import python_name, reserved_cause, snake_case

# stl.md §11.4: the W-name count of each file checked on its own (imports included).
W_NAME = {
    "components/rest/stl/types.stl": 3,
    "examples/packages/animals/stl/animal.stl": 1,
    "examples/packages/animals/stl/cat.stl": 1,
    "examples/packages/animals/stl/dog.stl": 1,
    "libs/db/src/v1.stl": 3,
    "libs/kernel/src/bus/bus_protocol.stl": 15,
    "libs/kernel/stl/sen/kernel/type_specs.stl": 15,
    "libs/kernel/test/integration/stress_tests/high_churn_subs/stl/high_churn_subs.stl": 1,
}
MANGLED = "is reserved in Python"


@pytest.mark.parametrize(
    ("stl", "python"),
    [
        ("valueIsDivisibleByTen", "value_is_divisible_by_ten"),
        ("u64Prop", "u64_prop"),
        ("arm4T", "arm4_t"),
        ("getHTTPCode", "get_http_code"),
        ("prop11", "prop11"),
        ("x86", "x86"),
        ("m68k", "m68k"),
        ("bits32", "bits32"),
        ("fooBAR", "foo_bar"),
    ],
)
def test_snake_case(stl: str, python: str) -> None:
    assert snake_case(stl) == python


@pytest.mark.parametrize(
    ("name", "context", "cause"),
    [
        ("type", "field", "soft keyword"),
        ("lambda", "argument", "keyword"),
        ("object", "field", "builtin"),
        ("property", "member", "builtin"),
        ("name", "member", "runtime member"),
        ("events", "member", "runtime member"),
        ("name", "field", None),
        ("timeout", "argument", "generated argument"),
        ("timeout", "member", None),
        ("mro", "enumerator", "rejected by enum"),
        ("object", "enumerator", None),
        ("None", "type", "constant"),
        ("Error", "type", None),
    ],
)
def test_reserved_names_depend_on_the_context(name: str, context: str, cause: str | None) -> None:
    assert reserved_cause(name, context) == cause
    assert python_name(name, context) == (name + "_" if cause else name)


@pytest.mark.parametrize("path", [f for f in corpus_files() if f not in FOM_FILES])
def test_corpus_mangling_warnings_per_file(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = corpus_root()
    monkeypatch.chdir(root)
    diagnostics = sengen.check([path], include_paths=[root / i for i in includes_for(path)])
    assert not [d for d in diagnostics if d.is_error]
    assert sum(MANGLED in d.message for d in diagnostics) == W_NAME.get(path, 0)


def test_corpus_mangling_warning_text_and_totals(monkeypatch: pytest.MonkeyPatch) -> None:
    root = corpus_root()
    monkeypatch.chdir(root)
    files = [f for f in corpus_files() if f in W_NAME]
    warnings = [
        d
        for d in sengen.check(files, include_paths=[root / i for i in includes_for(files[0])])
        if MANGLED in d.message
    ]
    assert len(warnings) == 23  # codegen.md §2.3: every mangled name of the corpus, once
    causes = Counter(d.message.split("(")[1].split(")")[0] for d in warnings)
    assert causes == {"soft keyword": 20, "builtin": 2, "keyword": 1}
    first = next(d for d in warnings if d.line == 155)
    assert first.format_header() == (
        "libs/kernel/stl/sen/kernel/type_specs.stl:155:3: warning: 'type' is reserved in Python "
        "(soft keyword); field 'type' of struct 'sen.kernel.StructTypeFieldSpec' is generated "
        "as 'type_'"
    )


def test_mangling_warnings_can_be_silenced_in_the_project(tmp_path: Path) -> None:
    (tmp_path / "stl").mkdir()
    (tmp_path / "stl" / "t.stl").write_text("package t;\nstruct S { type: u8 }\n")
    project = '[tool.sengen]\nsources = ["stl"]\n'
    for setting, expected in (("", 1), ("mangling-warnings = false\n", 0)):
        (tmp_path / "pyproject.toml").write_text(project + setting)
        result = subprocess.run(
            [sys.executable, "-m", "sengen", "check"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr.count(MANGLED) == expected
