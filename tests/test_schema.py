"""The JSON Schema of configuration files (codegen.md §8.2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import sengen
from sengen.codegen.schema import DURATION_PATTERN, config_schema

GOLDEN = Path(__file__).parent / "golden"


def _schema(case: str, classes: dict[str, str] | None = None) -> dict[str, Any]:
    settings = GOLDEN / case / "settings.json"
    program = sengen.load(
        [GOLDEN / case / "stl"],
        include_paths=[GOLDEN / case / "stl"],
        settings=settings if settings.exists() else None,
    ).unwrap()
    return config_schema(program, classes)


def test_objects_name_the_instantiable_classes_and_the_listed_implementations() -> None:
    schema = _schema("classes", {"zoo.CatImpl": "zoo.Cat"})
    objects = schema["properties"]["build"]["items"]["properties"]["objects"]["items"]
    assert objects["required"] == ["name", "class"]
    assert objects["properties"]["class"]["enum"] == ["zoo.Beacon", "zoo.CatImpl"]
    branches = {b["if"]["properties"]["class"]["const"]: b["then"] for b in objects["allOf"]}
    assert branches == {
        "zoo.Beacon": {"$ref": "#/$defs/zoo.Beacon"},
        "zoo.CatImpl": {"$ref": "#/$defs/zoo.Cat"},
    }


def test_a_class_requires_its_static_properties_and_excludes_static_no_config() -> None:
    defs = _schema("classes", {"zoo.CatImpl": "zoo.Cat"})["$defs"]
    cat = defs["zoo.Cat"]
    assert cat["required"] == ["name", "class", "legs"]
    assert "tagId" not in cat["properties"]  # [static_no_config]
    assert {"hunger", "name2", "mood", "bus"} <= set(cat["properties"])
    assert cat["additionalProperties"] is False
    beacon = defs["zoo.Beacon"]
    assert beacon["properties"]["period"] == {"type": "string", "pattern": DURATION_PATTERN}
    assert beacon["properties"]["count"] == {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}


def test_value_types_follow_the_table() -> None:
    defs = _schema("value_types")["$defs"]
    point3 = defs["shapes.Point3"]
    assert list(point3["properties"]) == ["x", "y", "z"]  # parent fields included
    assert point3["required"] == ["x", "y", "z"]
    everything = defs["shapes.Everything"]
    assert "where" not in everything["required"]  # an optional field may be omitted
    assert everything["properties"]["at"] == {"type": "string", "format": "date-time"}
    assert defs["shapes.Style"]["enum"] == ["solid", "dashed", "def"]  # STL names, unmangled
    assert defs["shapes.Corners"]["maxItems"] == 4
    assert (defs["shapes.Vector"]["minItems"], defs["shapes.Vector"]["maxItems"]) == (3, 3)
    assert defs["shapes.MaybePoint"]["oneOf"] == [
        {"type": "null"},
        {"$ref": "#/$defs/shapes.Point"},
    ]
    assert (defs["shapes.Length"]["minimum"], defs["shapes.Length"]["maximum"]) == (0.0, 100.0)
    assert defs["shapes.Label"] == {"type": "string"}
    measure = defs["shapes.Measure"]
    assert measure["properties"]["type"]["enum"][:2] == ["u64", "i32"]
    first = measure["allOf"][0]
    assert first["then"]["properties"]["value"]["maximum"] == 2**64 - 1


def test_the_kernel_part_comes_from_the_runtime_models() -> None:
    schema = _schema("value_types")
    kernel = schema["properties"]["kernel"]
    assert "runMode" in kernel["properties"]
    build = schema["properties"]["build"]["items"]
    assert {"name", "freqHz", "imports", "objects"} <= set(build["properties"])
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"


def test_the_command_prints_or_writes_the_same_text(tmp_path: Path) -> None:
    stl = str(GOLDEN / "value_types" / "stl")
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    printed = subprocess.run(
        [sys.executable, "-m", "sengen", "schema", stl],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    written = subprocess.run(
        [sys.executable, "-m", "sengen", "schema", stl, "--out", "s.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert written.returncode == 0 and written.stdout == ""
    assert (tmp_path / "s.json").read_text() == printed.stdout
    assert json.loads(printed.stdout)["title"] == "sengen configuration"


def test_a_project_build_writes_the_schema(tmp_path: Path) -> None:
    (tmp_path / "stl").symlink_to(GOLDEN / "classes" / "stl")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.sengen]\nsources = ["stl"]\noutput = "gen"\nschema = "config.schema.json"\n'
        'schema-classes = { "zoo.CatImpl" = "zoo.Cat" }\n'
    )
    result = sengen.build(tmp_path)
    assert result.ok, [d.format() for d in result.diagnostics]
    schema = json.loads((tmp_path / "config.schema.json").read_text())
    assert "zoo.Cat" in schema["$defs"]
