"""The example projects check cleanly and resolve to what their READMEs describe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sengen import load
from sengen.model import ClassType, PropertyCategory, QuantityType, VariantType

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
    program = load([EXAMPLES / "school" / "stl"]).unwrap()
    teacher = program.find("school.Teacher")
    assert isinstance(teacher, ClassType)
    assert teacher.parent is not None and teacher.parent.abstract
    assert [a.name for a in teacher.constructor.arguments] == ["fullName", "birthday", "subject"]
    person = teacher.parent
    assert person.properties[3].category is PropertyCategory.DYNAMIC_RW
    assert person.methods[0].arguments[0].description == "the person greeted"
    height = program.find("school.Height")
    assert isinstance(height, QuantityType) and height.unit is not None
    assert (height.unit.abbreviation, height.minimum, height.maximum) == ("cm", 0.0, 300.0)
    activity = program.find("school.Activity")
    assert isinstance(activity, VariantType)
    assert [a.type.name for a in activity.alternatives] == ["Date", "Register", "string"]


def test_school_demo_runs_the_generated_classes() -> None:
    """The README's main job: generate, implement, cycle; calls complete, events arrive."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "school" / "demo.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  head hears: Ada enrolled" in lines
    assert lines.count("  head hears: Ada enrolled") == 1
    assert "answers: [('Ada', True), ('Alan', True), ('Ada', False)]" in lines
    assert lines[-1] == "room 12 taught by Ms Lee: ['Ada', 'Alan']"


def test_the_readme_test_kernel_example_passes(tmp_path: Path) -> None:
    """The README's example test of a user component runs as written, with the fixture of
    sengen's pytest plugin."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    start = readme.index("  ```python\n  from sengen.runtime.component")
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
