"""The wheel holds every package: pyproject lists its packages by hand (the repository root is
the import root, runtime/ is mapped to sengen.runtime), so a new folder missing from the list
would import in an editable install and be absent from a wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _declared() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return set(tomllib.load(file)["tool"]["setuptools"]["packages"])


def _on_disk() -> set[str]:
    found: set[str] = set()
    for top, name in ((ROOT / "sengen", "sengen"), (ROOT / "runtime", "sengen.runtime")):
        for init in top.rglob("__init__.py"):
            relative = init.parent.relative_to(top)
            # sengen/runtime and sengen/templates are symlinks to the top-level folders.
            if top.name == "sengen" and relative.parts[:1] in (("runtime",), ("templates",)):
                continue
            found.add(".".join((name, *relative.parts)))
    return found


def test_every_package_folder_is_in_the_wheel() -> None:
    missing = _on_disk() - _declared()
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {sorted(missing)}"


def test_every_declared_package_exists() -> None:
    stale = _declared() - _on_disk() - {"sengen.templates"}
    assert not stale, f"listed in pyproject.toml but not on disk: {sorted(stale)}"
