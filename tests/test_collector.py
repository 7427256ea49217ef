"""The kernel's garbage-collector policy for bursts of long-lived objects (issue 28)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from sengen.runtime.kernel.collector import BULK, bulk


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def test_a_heavy_burst_runs_no_collection_and_freezes_what_it_made() -> None:
    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with bulk(True) as made:
            assert not gc.isenabled()
            kept = [[i] for i in range(50 * gc.get_threshold()[0])]  # would collect many times
            made[0] += len(kept)
            assert runs == []
        assert runs == [1] and gc.isenabled()  # the young generations, once, before freezing
        assert gc.get_freeze_count() >= len(kept)  # out of every later collection
    finally:
        gc.callbacks.remove(count)


@pytest.mark.parametrize(("heavy", "count"), [(False, 10 * BULK), (True, BULK - 1)])
def test_a_light_burst_or_too_few_objects_freeze_nothing(heavy: bool, count: int) -> None:
    with bulk(heavy) as made:
        assert gc.isenabled() is not heavy
        made[0] += count
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_burst_keeps_the_collector_off_when_it_was_off() -> None:
    gc.disable()
    with bulk(True) as made:
        made[0] += BULK
    assert not gc.isenabled()
