"""Generated code as a reviewer reads it (issue 29): laid out exactly as black would lay it out,
clean under pyright in strict mode, and documented at run time from the STL comments.

The trees are the corpus trees of ``test_codegen_corpus`` and every example's ``stl/``; black is
the version of the dev extras, with the generator's fixed mode (line length 100, py311).
"""

from __future__ import annotations

import contextlib
import json
import os
import pydoc
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_layout import corpus_root
from example_projects import EXAMPLES, importable
from test_codegen_corpus import _trees

import sengen

BIN = Path(sys.executable).parent
EXAMPLE_NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/stl"))


def _readme_includes(folder: Path) -> list[Path]:
    """The ``-I`` folders of the ``sengen build`` line of an example's README (the FOM
    examples include the shared FOM corpus)."""
    readme = folder / "README.md"
    text = readme.read_text() if readme.is_file() else ""
    line = next((x for x in text.splitlines() if x.startswith("sengen build")), "")
    words = line.split()
    return [folder / words[i + 1] for i, w in enumerate(words[:-1]) if w == "-I"]


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every corpus tree under ``corpus/``, every example's package under ``examples/<name>``."""
    out = tmp_path_factory.mktemp("generated")
    root = corpus_root()
    with contextlib.chdir(root):
        for name, (files, includes) in _trees().items():
            result = sengen.generate(
                [root / f for f in files],
                output=out / "corpus" / name,
                include_paths=[root / i for i in includes],
            )
            assert result.ok, [d.format_header() for d in result.diagnostics if d.is_error]
    for name in EXAMPLE_NAMES:
        folder = EXAMPLES / name
        settings = next((p for p in folder.glob("*settings*.json")), None)
        result = sengen.generate(
            [folder / "stl"],
            output=out / "examples" / name / "gen",
            settings=settings,
            include_paths=_readme_includes(folder),
        )
        assert result.ok, [d.format_header() for d in result.diagnostics if d.is_error]
    return out


@pytest.mark.slow
def test_output_is_what_black_makes_of_it(trees: Path) -> None:
    black = pytest.importorskip("black")
    mode = black.Mode(line_length=100, target_versions={black.TargetVersion.PY311})
    files = sorted(trees.rglob("*.py"))
    assert len(files) > 150
    differ = [
        str(p.relative_to(trees))
        for p in files
        if black.format_str(text := p.read_text(), mode=mode) != text
    ]
    assert not differ, differ


@pytest.mark.slow
def test_generated_code_passes_pyright_strict(trees: Path) -> None:
    if shutil.which("node") is None or not (BIN / "pyright").exists():
        if os.environ.get("CI") == "true":
            pytest.fail("pyright needs node and the dev extras; .ci/run installs them")
        pytest.skip("pyright needs node on PATH and the dev extras")
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.11"}
    (trees / "pyrightconfig.json").write_text(json.dumps(config))
    result = subprocess.run(
        [str(BIN / "pyright"), "--pythonpath", sys.executable, "."],
        cwd=trees,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr
    assert "0 errors" in result.stdout, result.stdout[-5000:]


def _help(cls: type) -> str:
    """What ``help(cls)`` prints."""
    return pydoc.plain(pydoc.render_doc(cls))


def test_help_shows_the_stl_descriptions(tmp_path: Path) -> None:
    """help() of the interface, the base and the proxies: each property's STL comment, the
    class's, the event's; a member without a comment has no invented text."""
    stl = (EXAMPLES / "plant" / "stl" / "plant" / "plant.stl").read_text()
    # A root of its own: the registry keeps the first generated package of a class, so a second
    # `gen.plant` in this process would stand in for the examples' own in later tests.
    assert sengen.generate([EXAMPLES / "plant" / "stl"], output=tmp_path / "helpgen").ok
    with importable(tmp_path):
        from helpgen import plant  # type: ignore[import-not-found]

        texts = {
            cls.__name__: _help(cls)
            for cls in (plant.Pump, plant.PumpBase, plant.PumpLocalProxy, plant.PumpRemoteProxy)
        }
        events = _help(plant.Controller)
        assert plant.Pump.META.property("maxFlow").description == "the most it can deliver, m3/s"
    for description in ("the most it can deliver, m3/s", "levelCrossed events heard from"):
        assert description in stl
        for name, text in texts.items():
            assert description in text, name
    assert "A pump that feeds the tank" in texts["Pump"]
    assert "The level rose above highLevel." in events
    assert "level_crossed(level: f64, crossing: u32)" in events
    assert "f64, static" in texts["PumpBase"]  # the STL type and category after the comment
    assert "Property " not in texts["PumpBase"]


# The metadata the runtime derives from the declarations, against the model it was written from.
_SAME_METADATA = """
import importlib, pkgutil, sys
from pathlib import Path
from corpus_layout import DEFAULT_INCLUDES, FOM_FILES, corpus_root, main_run
import sengen
from sengen.stl import model as m
from sengen.runtime.objects.registry import registry

root = corpus_root()
every = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.stl"))
files = [root / f for f in main_run(every) if f not in FOM_FILES]
program = sengen.load(files, include_paths=[root / i for i in DEFAULT_INCLUDES]).program
package = importlib.import_module("gen")
for info in pkgutil.walk_packages(package.__path__, "gen."):
    importlib.import_module(info.name)
differ = []
for t in program.types:
    if isinstance(t, m.ClassType):
        meta = registry.find_stl_class(t.qualified_name, ["gen"]).meta
        got = (meta.description, meta.is_abstract, meta.instantiable,
               [(p.stl_name, p.description, p.category.value) for p in meta.properties],
               [(x.stl_name, x.description, [a.stl_name for a in x.args]) for x in meta.methods],
               [(x.stl_name, x.description, [a.stl_name for a in x.args]) for x in meta.events],
               [a.stl_name for a in meta.constructor])
        want = (t.description, t.abstract, t.instantiable,
                [(p.name, p.description, p.category.name) for p in t.properties],
                [(x.name, x.description, [a.name for a in x.arguments]) for x in t.methods],
                [(x.name, x.description, [a.name for a in x.arguments]) for x in t.events],
                [a.name for a in t.constructor.arguments])
    elif isinstance(t, m.StructType):
        meta = registry.find_type(t.qualified_name, ["gen"])
        got = (meta.description, [(f.stl_name, f.description) for f in meta.fields])
        want = (t.description, [(f.name, f.description) for f in t.all_fields])
    elif isinstance(t, m.EnumType):
        meta = registry.find_type(t.qualified_name, ["gen"])
        got = (meta.description, [(e.stl_name, e.key, e.description) for e in meta.enumerators])
        want = (t.description, [(e.name, e.key, e.description) for e in t.enumerators])
    else:
        continue
    if got != want:
        differ.append(t.qualified_name)
print(differ)
"""


def test_runtime_metadata_is_the_models(trees: Path) -> None:
    """Every class, struct and enum of the corpus's main run: what the runtime derives from the
    declarations at import is what the STL said (names, descriptions, categories, flags)."""
    tests = Path(__file__).resolve().parent
    run = subprocess.run(
        [sys.executable, "-c", _SAME_METADATA],
        cwd=trees / "corpus",
        env={**os.environ, "PYTHONPATH": str(tests)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "[]", run.stdout
