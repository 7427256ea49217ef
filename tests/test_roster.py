"""The objects a cycle's updates iterate (issue 28): a snapshot of the component's objects,
taken again only after one was added or removed, so that an update that adds or removes objects
changes the next cycle, never the one that runs."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from kernel_support import Probe, make_package, run_kernel

from sengen.runtime.kernel.api import RunApi
from sengen.runtime.objects.context import Context

BUS = "local.b"


@pytest.fixture(scope="module")
def impls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    yield from make_package(tmp_path_factory.mktemp("kbus"), "kb_roster")


def test_the_roster_is_made_again_only_after_an_object_came_or_went(impls: ModuleType) -> None:
    context = Context("owner")
    first, second = impls.Still("first", serial=1), impls.Still("second", serial=2)
    first._bind_(context, BUS, 0)
    roster = context.roster()
    assert roster == (first,)
    assert context.roster() is roster  # not copied again while nothing changed
    second._bind_(context, BUS, 0)
    assert context.roster() == (first, second)
    first._unbind_()
    assert context.roster() == (second,)
    assert context.objects == [second]


def test_an_update_that_adds_or_removes_objects_changes_the_next_cycle(
    impls: ModuleType,
) -> None:
    cycles: list[list[str]] = []  # the objects updated, per cycle

    class Recording(impls.Still):  # type: ignore[misc, name-defined]
        def update(self, api: Any) -> None:
            cycles[-1].append(self.name)

    class Reshaping(Recording):
        """Its first update removes ``b`` and adds ``d``."""

        def update(self, api: Any) -> None:
            super().update(api)
            if len(cycles) == 1:
                source = api.get_source(BUS)
                source.remove(held["b"])
                source.add(Recording("d", serial=4))

    held = {name: Recording(name, serial=0) for name in ("b", "c")}

    def setup(api: RunApi) -> None:
        api.get_source(BUS).add([Reshaping("a", serial=0), held["b"], held["c"]])
        cycles.append([])

    def step(api: RunApi) -> bool:
        cycles.append([])
        return len(cycles) == 3

    _, code = run_kernel("", [("probe", Probe([step], setup), 1)])
    assert code == 0
    # The cycle that changed them still updates what it began with (b too, not d).
    assert cycles[0] == ["a", "b", "c"]
    assert cycles[1] == ["a", "c", "d"]
