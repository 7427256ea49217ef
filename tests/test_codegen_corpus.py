"""Every resolvable corpus file generates, imports and passes ``mypy --strict`` (codegen.md §6).

One merged tree holds the main run (stl.md §11.3) without the FOM files; each later member of an
alternative group, and the ``.conan`` copies, get their own tree with their own root package, so
that every tree can be imported in one process (registry scopes, codegen.md §3.10) and checked in
one mypy run.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_layout import (
    CONAN_INCLUDES,
    DEFAULT_INCLUDES,
    FOM_FILES,
    LATER_MEMBERS,
    corpus_root,
    main_run,
)
from test_naming import W_NAME
from wheel_tree import run_mypy, wheel_tree

import sengen

FOM_TREE = "fom"


def _trees() -> dict[str, tuple[list[str], tuple[str, ...]]]:
    """Root package name: (corpus-relative files, include roots)."""
    root = corpus_root()
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.stl"))
    trees = {"gen": ([f for f in main_run(files) if f not in FOM_FILES], DEFAULT_INCLUDES)}
    for index, later in enumerate(LATER_MEMBERS, start=1):
        trees[f"alt{index}"] = ([later], DEFAULT_INCLUDES)
    trees["conan"] = ([f for f in files if f.startswith(".conan/")], CONAN_INCLUDES)
    # fom.md §12.5: the four files that import HLA FOMs, in a tree of their own.
    trees[FOM_TREE] = (sorted(FOM_FILES), DEFAULT_INCLUDES)
    return trees


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, sengen.GenerateResult]]:
    out = tmp_path_factory.mktemp("corpus_trees")
    root = corpus_root()
    results = {}
    with contextlib.chdir(root):
        for name, (files, includes) in _trees().items():
            results[name] = sengen.generate(
                [root / f for f in files],
                output=out / name,
                include_paths=[root / i for i in includes],
            )
    return out, results


@pytest.mark.slow
def test_every_resolvable_file_generates(
    built: tuple[Path, dict[str, sengen.GenerateResult]],
) -> None:
    out, results = built
    for name, result in results.items():
        errors = [d.format_header() for d in result.diagnostics if d.is_error]
        assert not errors, f"{name}: {errors}"
    modules = sorted(
        p
        for p in out.rglob("*.py")
        if p.name != "__init__.py" and p.relative_to(out).parts[0] != FOM_TREE
    )
    # 87 resolvable files; the two .conan copies of one package share nothing with the rest.
    assert len(modules) == 87, len(modules)
    # §11.4's W-name outcomes: each mangled name warned once, at its own file.
    warned: dict[str, int] = {}
    for d in results["gen"].diagnostics:
        if "is reserved in Python" in d.message:
            warned[d.file] = warned.get(d.file, 0) + 1
    via_import = {"cat.stl", "dog.stl", "bus_protocol.stl"}
    assert warned == {f: n for f, n in W_NAME.items() if f.rpartition("/")[2] not in via_import}
    assert sum(warned.values()) == 23
    # fom.md §12.5: the FOM tree adds four, the fields `type` of NETN-METOC.xml.
    fom = [d for d in results[FOM_TREE].diagnostics if "is reserved in Python" in d.message]
    assert [(Path(d.file).name, d.line, d.column) for d in fom] == [
        ("NETN-METOC.xml", line, 27) for line in (1081, 1101, 1156, 1186)
    ]
    generated = {p.relative_to(out / FOM_TREE).as_posix() for p in (out / FOM_TREE).rglob("*.py")}
    assert {"hla/hla.py", "rpr/RPR_Physical_v2_0.py", "netn/NETN_METOC.py"} <= generated


@pytest.mark.slow
def test_all_trees_import_in_one_process(
    built: tuple[Path, dict[str, sengen.GenerateResult]],
) -> None:
    out, _ = built
    # Importing every tree, then the zero value of every type and of every class's
    # properties through the binary codec and back.
    script = (
        "import importlib, pkgutil, sys\n"
        "from sengen.runtime.objects import codec, values\n"
        "from sengen.runtime.objects.registry import registry\n"
        "count = 0\n"
        "for root in sys.argv[1:]:\n"
        "    package = importlib.import_module(root)\n"
        "    for info in pkgutil.walk_packages(package.__path__, root + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "        count += 1\n"
        "    types, classes = registry.entries(root)\n"
        "    for meta in types:\n"
        "        zero = values.zero(meta)\n"
        "        assert values.equality(meta)(codec.decode(meta, codec.encode(meta, zero)), zero)\n"
        "    for entry in classes:\n"
        "        c = codec.ClassCodec(entry.meta)\n"
        "        state = {p.stl_name: values.zero(p.type) for p in entry.meta.all_properties}\n"
        "        assert c.decode_properties(c.encode_properties(state)).keys() == state.keys()\n"
        "print(count)\n"
    )
    names = sorted(_trees())
    run = subprocess.run(
        [sys.executable, "-c", script, *names],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert int(run.stdout) > 87


@pytest.mark.slow
def test_all_trees_pass_mypy_strict(
    built: tuple[Path, dict[str, sengen.GenerateResult]], tmp_path: Path
) -> None:
    out, _ = built
    tree = wheel_tree(tmp_path)
    run = run_mypy(tree, *sorted(_trees()), cwd=out)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr
