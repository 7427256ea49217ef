"""Finding the class a ``build:`` object names (runtime.md §1.7; codegen.md §3.10)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from objects_support import Tree, imported_tree

from sengen.runtime.kernel.imports import ClassLookupError, import_packages, resolve_class
from sengen.runtime.objects.registry import registry

ROOT = "objgen_resolve"
IMPORTS = [f"{ROOT}.objtest"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("resolve"), ROOT) as generated:
        yield generated


def implementation(tree: Tree, name: str, module: str = __name__) -> Any:
    """A concrete Worker implementation class named ``name`` (it registers itself)."""

    def hook(self: Any, *args: Any) -> Any:
        return 0

    names = ("add", "peek", "sneak", "shout", "compute", "twice", "fail", "bad_result", "nothing")
    hooks: dict[str, Any] = {f"{name}_impl": hook for name in names}
    return type(name, (tree.devices.WorkerBase,), {**hooks, "__module__": module})


def test_an_instantiable_stl_class_by_its_qualified_name(tree: Tree) -> None:
    assert resolve_class("objtest.Gauge", IMPORTS) is tree.devices.GaugeBase


@pytest.mark.parametrize("name", ["objtest.Device", "objtest.Worker"])
def test_abstract_classes_and_classes_with_methods_are_refused(tree: Tree, name: str) -> None:
    message = f"class '{name}' is abstract and cannot be instantiated"
    with pytest.raises(ClassLookupError, match=f"^{re.escape(message)}$"):
        resolve_class(name, IMPORTS)


def test_an_implementation_by_its_registered_name(tree: Tree) -> None:
    cls = implementation(tree, "ResolvedWorker")
    assert resolve_class("objtest.ResolvedWorker", IMPORTS) is cls


def test_two_implementations_of_one_name_are_ambiguous_only_when_named(tree: Tree) -> None:
    implementation(tree, "TwinWorker", "first_module")
    implementation(tree, "TwinWorker", "second_module")
    message = (
        "class name 'objtest.TwinWorker' is ambiguous:"
        " first_module.TwinWorker, second_module.TwinWorker"
    )
    with pytest.raises(ClassLookupError, match=f"^{re.escape(message)}$"):
        resolve_class("objtest.TwinWorker", IMPORTS)


def test_a_dotted_python_path_inside_the_imports(tree: Tree) -> None:
    path = f"{ROOT}.objtest.devices.GaugeBase"
    assert resolve_class(path, IMPORTS) is tree.devices.GaugeBase
    with pytest.raises(ClassLookupError, match="could not find class"):
        resolve_class(path, ["somewhere.else"])


def test_an_unknown_class_names_the_imports(tree: Tree) -> None:
    message = "could not find class 'objtest.Nope' in any of the imported packages"
    with pytest.raises(ClassLookupError, match=f"^{re.escape(message)}$"):
        resolve_class("objtest.Nope", IMPORTS)


def test_an_stl_class_of_another_scope_is_not_found(tree: Tree) -> None:
    with pytest.raises(ClassLookupError, match="could not find class"):
        resolve_class("objtest.Gauge", ["unrelated_package"])
    assert ROOT in registry.scopes()


def test_import_failures_are_reported_per_package(tmp_path: Path) -> None:
    (tmp_path / "broken_pkg_resolve.py").write_text("raise RuntimeError('boom')\n")
    sys.path.insert(0, str(tmp_path))
    try:
        failures = import_packages(["broken_pkg_resolve", "json", "missing_pkg_resolve"])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("broken_pkg_resolve", None)
    assert [failure.problem for failure in failures] == [
        "could not import package 'broken_pkg_resolve': RuntimeError: boom",
        "could not import package 'missing_pkg_resolve': ModuleNotFoundError: No module named"
        " 'missing_pkg_resolve'",
    ]
