"""The example projects check cleanly and resolve to what their READMEs describe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sengen import load
from sengen.stl.model import ClassType, PropertyCategory, SequenceType, StructType, VariantType

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_school_checks_clean_from_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sengen", "check", "examples/school/stl"],
        cwd=EXAMPLES.parent,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")


def test_school_model() -> None:
    """Inheritance across files, a variant of structs, structs in a static sequence."""
    program = load([EXAMPLES / "school" / "stl"]).unwrap()
    person = program.find("school.Person")
    assert isinstance(person, ClassType) and person.abstract
    assert person.location.file.endswith("people.stl")
    for name, file in (("Pupil", "pupils.stl"), ("Teacher", "staff.stl")):
        cls = program.find(f"school.{name}")
        assert isinstance(cls, ClassType) and cls.location.file.endswith(file)
        assert cls.parent is person and not cls.instantiable
        assert [a.name for a in cls.constructor.arguments][:2] == ["fullName", "birthday"]
        assert "year" in [a.name for a in cls.constructor.arguments]
    greet = person.methods[0]
    assert greet.const and greet.arguments[0].description == "the name of who greets"
    activity = program.find("school.Activity")
    assert isinstance(activity, VariantType)
    assert [a.type.name for a in activity.alternatives] == ["Studying", "Playing"]
    assert all(isinstance(a.type, StructType) for a in activity.alternatives)
    pupil = program.find("school.Pupil")
    assert isinstance(pupil, ClassType)
    assert pupil.properties[1].category is PropertyCategory.DYNAMIC_RO
    intake = program.find("school.Intake")
    assert isinstance(intake, SequenceType) and intake.max_size == 30


def test_the_readme_test_kernel_example_passes(tmp_path: Path) -> None:
    """The README's example test of a user component runs as written, with the fixture of
    sengen's pytest plugin."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    start = readme.index("  ```python\n  from sengen.runtime import")
    block = readme[start + len("  ```python\n") :]
    block = block[: block.index("  ```\n")]
    (tmp_path / "test_example.py").write_text("\n".join(line[2:] for line in block.splitlines()))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
