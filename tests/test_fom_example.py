"""``examples/aircraft``: an STL class extending ``rpr.Aircraft`` of the RPR FOM, moved by a
component, seen in the shell, exact on the test kernel.

The RPR FOM is Sen's FOM corpus, outside the repository: without it these tests skip with the
corpus tests' reason (they fail under ``SENGEN_REQUIRE_CORPUS=1``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus_layout import fom_corpus_root
from example_projects import EXAMPLES, clean_log, importable, matches, sengen_run

import sengen
from sengen.testing import TestKernel


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    include = fom_corpus_root() / "examples/packages/hla_fom"
    folder = tmp_path_factory.mktemp("aircraft")
    ignored = shutil.ignore_patterns("gen", "__pycache__")
    shutil.copytree(EXAMPLES / "aircraft", folder, ignore=ignored, dirs_exist_ok=True)
    result = sengen.generate(
        [folder / "stl"], output=folder / "gen", include_paths=[include], format=False
    )
    assert result.ok, "\n".join(d.format() for d in result.diagnostics)
    # The two W3 warnings of the set's base_mappings.xml, nothing else (fom.md §12.5).
    assert [d.line for d in result.diagnostics] == [5, 6]
    with importable(folder):
        yield folder


def test_aircraft_yaml_flies_for_one_second(example: Path) -> None:
    ran = sengen_run(example, "aircraft.yaml", "--until", "1s")
    assert ran.returncode == 0, ran.stderr
    (flew,) = matches(
        r"INFO sengen\.component\.pilot: jet flew ([0-9]+) m at 240 m/s", clean_log(ran.stderr)
    )
    # 240 m/s for about a second of real time, less the first cycle, which moves nothing.
    assert 100 <= int(flew[1]) <= 480


def test_the_shell_shows_the_rpr_position(example: Path) -> None:
    shell = subprocess.run(
        [
            sys.executable,
            "-m",
            "sengen",
            "shell",
            "aircraft.yaml",
            "-c",
            "open local.air; jet.spatial",
        ],
        cwd=example,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    (line,) = [x for x in shell.stdout.splitlines() if x.startswith("{")]
    shown = json.loads(line)
    assert shown["type"] == "SpatialFPW"
    assert shown["value"]["worldLocation"]["z"] == 10_000.0
    assert shown["value"]["velocityVector"] == {
        "xVelocity": 240.0,
        "yVelocity": 0.0,
        "zVelocity": 0.0,
    }


def test_stepped_the_distance_is_exact(example: Path) -> None:
    with TestKernel.from_file(example / "aircraft.yaml") as tk:
        # Typed Any: the generated classes are not there when mypy checks this file.
        jet: Any = tk.object("local.air.jet")
        # The constructor: the RPR [static] properties, root first, then the class's own.
        assert [a.stl_name for a in type(jet).META.constructor] == [
            "entityType",
            "entityIdentifier",
            "alternateEntityType",
            "cruiseSpeed",
        ]
        assert jet.entity_identifier.federate_identifier.site_id == 1
        tk.step()  # t = 0: the first cycle moves nothing
        tk.advance("1 s")  # ten cycles of 0.1 s
        assert jet.flown == pytest.approx(240.0)
        assert jet.spatial.tag == "SpatialFPW"
        assert jet.spatial.value.world_location.x == pytest.approx(jet.flown)
