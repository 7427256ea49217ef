"""Bounded work queues (runtime.md §1.8, §3.12; acceptance O17): what is dropped, what is kept,
the overflow warning, and a dropped best-effort call failing its caller."""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

import pytest

from sengen.runtime import CallDropped
from sengen.runtime.objects.calls import Call, completed
from sengen.runtime.objects.context import CALLS, CHANGES, EVENTS, Context


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


def test_work_of_several_senders_runs_in_their_runner_order_and_none_is_lost() -> None:
    """Per kind, one lane per sending component, run in the senders' runner order whatever
    the order they posted in (runtime.md §5.1); senders adding their lanes at once, from
    their own threads, each find theirs run."""
    target = Context("target")
    senders = [Context(f"s{i}") for i in range(8)]
    for order, sender in zip((5, 3, 7, 1, 6, 0, 4, 2), senders, strict=True):
        sender.order = order
    log: list[tuple[str, int]] = []
    start = threading.Barrier(len(senders))

    def send(sender: Context) -> None:
        with sender.active():
            start.wait(timeout=10)
            target.post_kind(EVENTS, log.append, ("event", sender.order))
            target.post(log.append, ("call", sender.order))

    threads = [threading.Thread(target=send, args=(s,)) for s in senders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    target.post(log.append, ("call", -1))  # from outside any component: after all senders
    assert target.pending() == 17
    target.drain()
    orders = list(range(8))
    assert log == [("call", n) for n in orders] + [("call", -1)] + [("event", n) for n in orders]
