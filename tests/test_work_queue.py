"""Bounded work queues (runtime.md §1.8, §3.12; acceptance O17): what is dropped, what is kept,
the overflow warning, and a dropped best-effort call failing its caller."""

from __future__ import annotations

import functools
import logging
from typing import Any

import pytest
from sengen.runtime import CallDropped
from sengen.runtime.calls import Call, completed
from sengen.runtime.context import CALLS, CHANGES, EVENTS, Context


def fill(context: Context, log: list[Any], items: list[tuple[str, bool]]) -> list[str]:
    dropped: list[str] = []
    for label, droppable in items:
        context.push(
            EVENTS, log.append, (label,), droppable, functools.partial(dropped.append, label)
        )
    return dropped


def test_drop_newest_discards_arriving_best_effort_items_and_keeps_confirmed_ones(
    caplog: pytest.LogCaptureFixture,
) -> None:
    context = Context("c")
    context.bound(2, "dropNewest")
    log: list[str] = []
    with caplog.at_level(logging.WARNING, logger="sengen.kernel"):
        dropped = fill(
            context, log, [("a", True), ("b", True), ("c", True), ("d", False), ("e", True)]
        )
    assert dropped == ["c", "e"]
    assert context.pending() == 3  # the confirmed item went past the bound
    context.drain()
    assert log == ["a", "b", "d"]
    warnings = [r.getMessage() for r in caplog.records if "overflow" in r.getMessage()]
    assert warnings == ["c work queue overflow (1 items dropped)"]  # at most once per second


def test_drop_oldest_discards_the_oldest_best_effort_item_to_make_room() -> None:
    context = Context("c")
    context.bound(2, "dropOldest")
    log: list[str] = []
    dropped = fill(context, log, [("keep", False), ("old", True), ("new", True), ("newer", True)])
    assert dropped == ["old", "new"]
    context.drain()
    assert log == ["keep", "newer"]


def test_drop_oldest_with_only_confirmed_items_queued_drops_the_arrival() -> None:
    context = Context("c")
    context.bound(1, "dropOldest")
    log: list[str] = []
    dropped = fill(context, log, [("k1", False), ("k2", False), ("x", True)])
    assert dropped == ["x"]
    context.drain()
    assert log == ["k1", "k2"]


def test_an_unbounded_queue_drops_nothing() -> None:
    context = Context("c")
    log: list[str] = []
    assert fill(context, log, [(str(n), True) for n in range(1000)]) == []
    context.drain()
    assert len(log) == 1000


def test_kinds_run_in_order_changes_calls_results_events() -> None:
    context = Context("c")
    log: list[str] = []
    context.post_kind(EVENTS, log.append, "event")
    context.post_kind(CALLS, log.append, "call")
    context.post_kind(CHANGES, log.append, "change")
    context.drain()
    assert log == ["change", "call", "event"]


def test_a_dropped_best_effort_call_fails_its_caller() -> None:
    owner, caller = Context("owner"), Context("caller")
    owner.bound(1, "dropNewest")
    calls: list[Call[Any]] = [Call(f"o.m{n}") for n in range(2)]
    message = "call dropped: work queue of component 'owner' is full"
    for call in calls:
        owner.push(
            CALLS,
            functools.partial(completed, caller, call, 1, None),
            (),
            True,
            functools.partial(completed, caller, call, None, CallDropped(message)),
        )
    caller.drain()
    assert not calls[0].done()
    error = calls[1].exception()
    assert isinstance(error, CallDropped) and "work queue of component 'owner' is full" in str(
        error
    )
    owner.drain()
    caller.drain()
    assert calls[0].result() == 1
