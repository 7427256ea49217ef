"""Bus addresses, duplicate names and sources (runtime.md §3.1 to §3.3, §3.13)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from objects_support import Tree, imported_tree

from sengen.runtime.kernel.buses import BusSpace, DuplicateObjectName, Source, check_bus_address
from sengen.runtime.objects import values
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.meta import Category

ROOT = "objgen_buses"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("buses"), ROOT) as generated:
        yield generated


def statics(cls: Any) -> dict[str, object]:
    """Every [static] property of ``cls`` at its zero value, in configuration form."""
    return {
        p.stl_name: values.to_config(p.type, values.zero(p.type))
        for p in cls.META.all_properties
        if p.category is Category.STATIC_RW
    }


def gauge(tree: Tree, name: str) -> Any:
    cls = tree.devices.GaugeBase
    return cls.from_config(name, statics(cls))


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("a", "invalid bus address 'a'"),
        ("a.b.c", "invalid bus address 'a.b.c'"),
        ("s.", "incomplete bus address 's.'"),
        (".b", "incomplete bus address '.b'"),
        ("s.b c", "invalid bus address 's.b c'"),
        ("1s.b", "invalid bus address '1s.b'"),
    ],
)
def test_bad_bus_addresses_are_refused_with_the_spec_text(address: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        check_bus_address(address)
    assert check_bus_address("my-session._bus2") == "my-session._bus2"


def test_a_name_is_used_once_per_bus_across_components(tree: Tree) -> None:
    space = BusSpace()
    first = Source(space, Context("alpha"), "s.b")
    second = Source(space, Context("beta"), "s.b")
    elsewhere = Source(space, Context("beta"), "s.other")
    first.add(gauge(tree, "g"))
    with pytest.raises(
        DuplicateObjectName,
        match=re.escape("object name 'g' is already used on bus 's.b' by component 'alpha'"),
    ):
        second.add(gauge(tree, "g"))
    elsewhere.add(gauge(tree, "g"))  # the same name on another bus is fine
    assert [o.name for o in space.objects("s.b")] == ["g"]


def test_a_failed_batch_adds_nothing(tree: Tree) -> None:
    space = BusSpace()
    source = Source(space, Context("alpha"), "s.b")
    source.add(gauge(tree, "taken"))
    fresh = gauge(tree, "fresh")
    with pytest.raises(DuplicateObjectName):
        source.add([fresh, gauge(tree, "taken")])
    assert fresh.bus is None
    assert [o.name for o in space.objects("s.b")] == ["taken"]


def test_adding_binds_runs_the_hook_and_makes_the_initial_state_current(tree: Tree) -> None:
    seen: list[str] = []

    def registered(self: Any, api: Any) -> None:
        seen.append(f"registered {self.bus}")

    attributes = {"registered": registered, "__module__": __name__}
    watched: Any = type("Watched", (tree.devices.GaugeBase,), attributes)
    obj = watched.from_config("w", statics(watched))
    obj.set_next_level(7)
    context = Context("alpha")
    context.time = 5_000
    Source(BusSpace(), context, "local.main").add(obj)
    assert seen == ["registered local.main"]
    assert obj.level == 7  # pending values become current at registration
    assert obj.last_commit_time == 5_000
    assert obj.local_name == "alpha.local.main.w"


def test_removal_frees_the_name_and_runs_the_hook(tree: Tree) -> None:
    space = BusSpace()
    context = Context("alpha")
    source = Source(space, context, "s.b")
    obj = gauge(tree, "g")
    source.add(obj)
    other = Source(space, Context("beta"), "s.b")
    with pytest.raises(ValueError, match=re.escape("is not on bus 's.b' of this component")):
        other.remove(obj)
    source.remove(obj)
    assert space.objects("s.b") == []
    source.add(gauge(tree, "g"))  # a new object under the freed name


def test_a_non_local_session_without_transport_is_reported_once(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sengen.kernel")
    space = BusSpace()
    source = Source(space, Context("alpha"), "plant.main")
    source.add([gauge(tree, "a"), gauge(tree, "b")])
    Source(space, Context("alpha"), "local.x").add(gauge(tree, "c"))
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["no transport loaded: session 'plant' is process-local"]
    assert space.sessions() == ["local", "plant"]
