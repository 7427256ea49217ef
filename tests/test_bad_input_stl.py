"""Deep STL input (issue 21 item 6): long chains of aliases, fields, struct and class
inheritance resolve without RecursionError, and a chain of imports deeper than the limit is one
diagnostic at its deepest import, not an internal error. How long 5,000 levels take to check and
build is measured by bench/deep_input.py, not asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest

import sengen
from sengen.api import check_program
from sengen.diagnostics import Severity
from sengen.stl.loader import MAX_IMPORT_DEPTH
from sengen.stl.model import ClassType

# Deeper than Python's recursion limit (1,000 frames), so any recursion per level would fail.
DEPTH = 1_200


def chain(kind: str, depth: int = DEPTH) -> str:
    """One STL file declaring a chain of ``depth`` types, each built on the one before."""
    lines = ["package deep;", ""]
    for i in range(depth):
        if kind == "alias":
            lines.append(f"alias A{i} {'i32' if i == 0 else f'A{i - 1}'};")
        elif kind == "field":
            lines.append(f"struct F{i} {{ x : {'i32' if i == 0 else f'F{i - 1}'} }}")
        elif kind == "struct":
            parent = "" if i == 0 else f" : S{i - 1}"
            lines.append(f"struct S{i}{parent} {{ s{i} : i32 }}")
        else:
            parent = "" if i == 0 else f" : extends C{i - 1}"
            lines.append(f"class C{i}{parent} {{ var v{i} : i32 [static]; fn m{i}(); }}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["alias", "field", "struct", "class"])
def test_deep_chains_resolve(tmp_path: Path, kind: str) -> None:
    source = tmp_path / "deep.stl"
    source.write_text(chain(kind))
    program, diagnostics = check_program([source], include_paths=[tmp_path])
    assert [d.format() for d in diagnostics] == []
    assert program is not None
    if kind == "class":
        deepest = program.find(f"deep.C{DEPTH - 1}")
        assert isinstance(deepest, ClassType)
        # The constructor carries every static property of the lineage, root first.
        names = [a.name for a in deepest.constructor.arguments]
        assert names == [f"v{i}" for i in range(DEPTH)]
        assert len(deepest.all_properties) == DEPTH


@pytest.mark.parametrize("kind", ["struct", "class"])
def test_a_name_clash_deep_in_a_chain_names_the_nearest_declarer(tmp_path: Path, kind: str) -> None:
    text = chain(kind)
    if kind == "struct":
        text += f"struct Late : S{DEPTH - 1} {{ s7 : i32 }}\n"
        expected = "parent structure 'deep.S7' already has a field named 's7'"
    else:
        text += f"class Late : extends C{DEPTH - 1} {{ event m7(); var v9 : i32; }}\n"
        expected = "parent class deep.C9 already has a property named v9"
    source = tmp_path / "deep.stl"
    source.write_text(text)
    diagnostics = sengen.check([source], include_paths=[tmp_path])
    errors = [d.message for d in diagnostics if d.severity is Severity.ERROR]
    assert len(errors) == 1 and errors[0].endswith(expected), errors


def test_an_import_chain_deeper_than_the_limit_is_one_diagnostic(tmp_path: Path) -> None:
    depth = MAX_IMPORT_DEPTH + 20
    for i in range(depth):
        following = f'import "f{i + 1}.stl"\n\n' if i + 1 < depth else ""
        (tmp_path / f"f{i}.stl").write_text(
            f"{following}package imp;\n\nstruct X{i} {{ a : i32 }}\n"
        )
    diagnostics = sengen.check([tmp_path / "f0.stl"], include_paths=[tmp_path])
    (error,) = [d for d in diagnostics if d.severity is Severity.ERROR]
    last = MAX_IMPORT_DEPTH - 1
    assert (Path(error.file).name, error.line, error.column) == (f"f{last}.stl", 1, 8)
    assert error.message == f"imports nested more than {MAX_IMPORT_DEPTH} files deep"
    assert len(error.notes) == MAX_IMPORT_DEPTH - 1  # "imported from here", back to the input


def test_thousands_of_unresolved_references_are_all_reported(tmp_path: Path) -> None:
    """Written in the wrong order, each alias names the next: every reference is an error, and
    "did you mean" stops once its budget of compared names is spent (comparing each reference
    with every name made this quadratic: minutes for 3,000)."""
    depth = 2_000
    lines = [f"alias A{i} A{i + 1};" for i in range(depth - 1)] + [f"alias A{depth - 1} i32;"]
    source = tmp_path / "reversed.stl"
    source.write_text("package deep;\n\n" + "\n".join(lines) + "\n")
    diagnostics = sengen.check([source], include_paths=[tmp_path])
    messages = [d.message for d in diagnostics if d.severity is Severity.ERROR]
    assert len(messages) == depth - 1
    assert all(m.startswith(f"type not found: 'A{i + 1}'") for i, m in enumerate(messages))
    assert messages[40] == "type not found: 'A41' (did you mean 'A4'?)"
    assert messages[-1] == f"type not found: 'A{depth - 1}'"  # past the budget


@pytest.mark.parametrize(
    ("target", "what"), [("sub", "is a folder, not a file"), ("/dev/zero", "is not a regular file")]
)
def test_importing_a_folder_or_a_device_says_what_it_is(
    tmp_path: Path, target: str, what: str
) -> None:
    (tmp_path / "sub").mkdir()
    source = tmp_path / "a.stl"
    source.write_text(f'import "{target}"\n\npackage a;\n')
    (error,) = sengen.check([source], include_paths=[tmp_path])
    shown = target if target.startswith("/") else (tmp_path / target).as_posix()
    assert (error.line, error.column) == (1, 8)
    assert error.message.startswith(f"could not find file '{target}' directly or in any of")
    assert error.message.endswith(f" ('{shown}' {what})")


def test_a_schema_that_would_grow_quadratically_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema lists every inherited key of every struct and class: 5,000 levels took 16 GB.
    Past ``MAX_LISTED`` keys (lowered here, so that a short chain crosses it) it is refused."""
    from sengen.cli.main import main
    from sengen.codegen import schema

    monkeypatch.setattr(schema, "MAX_LISTED", 40)
    source = tmp_path / "deep.stl"
    source.write_text(chain("struct", 12))
    assert main(["schema", str(source)]) == 1
    err = capsys.readouterr().err
    # 1 + 2 + ... + 9 = 45 keys: the ninth struct crosses 40.
    assert "error: the configuration schema would list more than 40 keys (inheritance too" in err
    assert "here at 'deep.S8'" in err and "Traceback" not in err
    source.write_text(chain("struct", 8))  # 36 keys
    assert main(["schema", str(source)]) == 0
    capsys.readouterr()


def test_boundedness_of_a_deep_struct_sharing_its_field_types_is_found_in_linear_time(
    tmp_path: Path,
) -> None:
    """Each struct holds the previous one twice: a recursive walk was exponential (and beyond
    Python's stack); only the string at the root makes the property unbounded."""
    lines = ["package deep;", "", "struct F0 { x : string }"]
    lines += [f"struct F{i} {{ a : F{i - 1}, b : F{i - 1} }}" for i in range(1, DEPTH)]
    lines.append(f"class K {{ var p : F{DEPTH - 1}; }}")
    source = tmp_path / "deep.stl"
    source.write_text("\n".join(lines) + "\n")
    (error,) = sengen.check([source], include_paths=[tmp_path])
    assert error.message.startswith("unbounded dynamic properties with non-confirmed transport")


def test_the_reference_of_a_deep_class_lists_a_bounded_number_of_ancestors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sengen.cli.main import main
    from sengen.codegen.docs import MAX_ANCESTORS_LISTED

    depth = MAX_ANCESTORS_LISTED + 30
    source = tmp_path / "deep.stl"
    source.write_text(chain("class", depth))
    assert main(["docs", str(source)]) == 0
    text = capsys.readouterr().out
    # The deepest class names its nearest ancestors, then counts the rest up to the root.
    assert text.count("Inherited from") < depth * (MAX_ANCESTORS_LISTED + 1)
    assert "Inherited from 29 more ancestors, up to [`deep.C0`]" in text  # C79's: 50 + 29
    assert "Inherited from 1 more ancestor, up to " in text  # C51's
