"""``docs/examples/<name>.md`` is the ``sengen docs`` output of ``examples/<name>/stl``, for
every example, and never stale: the test regenerates each one and compares."""

from __future__ import annotations

from pathlib import Path

import pytest

from sengen.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs" / "examples"
SETTINGS = ("settings.json", "codegen_settings.json")


def examples() -> list[Path]:
    """Every example with STL, except those that import HLA FOMs: their reference would copy
    the FOM corpus, which lives outside the repository (see examples/aircraft/README.md)."""
    return sorted(
        p for p in EXAMPLES.iterdir() if (p / "stl").is_dir() and not _imports_a_fom(p / "stl")
    )


def _imports_a_fom(stl: Path) -> bool:
    return any('.xml"' in f.read_text(encoding="utf-8") for f in stl.rglob("*.stl"))


def docs_command(example: Path, out: Path) -> list[str]:
    """The arguments of ``sengen docs`` for ``example``, with its codegen settings if any."""
    args = ["docs", str(example / "stl"), "--out", str(out)]
    for name in SETTINGS:
        if (example / name).is_file():
            args += ["--settings", str(example / name)]
    return args


def test_there_is_a_reference_for_every_example_and_the_index_lists_it() -> None:
    names = {p.name for p in examples()}
    assert len(names) >= 9
    assert {p.stem for p in DOCS.glob("*.md")} - {"README"} == names
    index = (DOCS / "README.md").read_text()
    for name in names:
        assert f"]({name}.md)" in index, f"docs/examples/README.md does not list {name}"


@pytest.mark.parametrize("example", examples(), ids=lambda p: p.name)
def test_reference_is_what_sengen_docs_writes(example: Path, tmp_path: Path) -> None:
    out = tmp_path / f"{example.name}.md"
    assert main(docs_command(example, out)) == 0
    checked_in = DOCS / f"{example.name}.md"
    command = " ".join(["sengen", *docs_command(example, checked_in)]).replace(f"{ROOT}/", "")
    assert checked_in.is_file(), f"missing: run '{command}' from the repository root"
    assert out.read_bytes() == checked_in.read_bytes(), f"stale: run '{command}'"
