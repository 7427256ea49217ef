"""Part 2 of the transport benchmarks (bench/transport.py): pipelined remote calls per second.

A 1 kHz caller here keeps ``DEPTH`` calls of ``echo`` in flight to the ``Echo`` of a 1 kHz
callee in the child. The floor is raw ``get``s of a querier here to a queryable there. The
callee (``Callee``, part 3 uses it too) and the child's two roles are at the end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zenoh
from transport_common import (
    KERNEL_BOUND_S,
    KHZ,
    PACKAGE,
    STOP_TIMEOUT_S,
    WARNINGS,
    Child,
    Classes,
    Control,
    Driven,
    Window,
    WorkDriven,
    base_of,
    checked,
    free_port,
    load_classes,
    raw_key,
    raw_session,
    run_child_kernel,
    run_kernel,
    say,
    session_name,
    wait_window,
)

from sengen.runtime import set_checks
from sengen.runtime.kernel.api import RunApi
from sengen.runtime.kernel.component import Component

DEPTH = 64  # calls (queries) in flight in the pipelined benchmark


def floor_calls(window_s: float, logs: Path) -> float:
    """Replies per second to raw ``get``s kept ``DEPTH`` in flight, to a queryable there."""
    port, session = free_port(), session_name("get")
    key = raw_key(session, "echo")
    replies = [0]
    slots = threading.Semaphore(DEPTH)
    stop = threading.Event()

    def on_reply(reply: zenoh.Reply) -> None:
        if reply.ok is not None:
            reply.ok.payload.to_bytes()
            replies[0] += 1

    def on_done() -> None:
        slots.release()

    def issue(querier: zenoh.Querier) -> None:
        value = 0
        while not stop.is_set():
            if not slots.acquire(timeout=0.1):
                continue
            value += 1
            # Called on Zenoh's thread: a callback on a thread of its own per get (the
            # default) would cost a quarter of the rate.
            handler = zenoh.handlers.Callback(on_reply, on_done, indirect=False)
            querier.get(handler, payload=value.to_bytes(8, "little"))

    with raw_session(port) as zsession:
        querier = zsession.declare_querier(key, consolidation=zenoh.ConsolidationMode.NONE)
        with Child("zenoh-queryable", {"port": port, "key": key}, logs) as replier:
            replier.expect("ready")
            issuer = threading.Thread(target=issue, args=(querier,), name="floor-get")
            issuer.start()
            try:
                return wait_window(Window(window_s), lambda: replies[0])
            finally:
                stop.set()
                issuer.join(STOP_TIMEOUT_S)


@dataclass
class Pipelined:
    rate: float
    wrong: int
    warnings: str


def bench_calls(classes: Classes, window_s: float, logs: Path, checks: bool = True) -> Pipelined:
    """Results per second of ``echo`` calls kept ``DEPTH`` in flight by a 1 kHz caller here to a
    1 kHz owner there."""
    port, session = free_port(), session_name("call")
    bus = f"{session}.b"
    window = Window(window_s)
    state = {"flight": 0, "done": 0, "wrong": 0, "next": 0}
    holder: dict[str, Any] = {}

    def answered(expected: int) -> Callable[[Any], None]:
        def on_result(call: Any) -> None:
            state["flight"] -= 1
            state["done"] += 1
            if call.exception() is not None or call.result() != expected:
                state["wrong"] += 1

        return on_result

    def setup(api: RunApi) -> None:
        holder["sub"] = api.select(f"SELECT {PACKAGE}.Echo FROM {bus}")

    def work(api: RunApi) -> bool:
        proxies = holder["sub"].objects
        if not proxies:
            return False
        echo = proxies[0]
        while state["flight"] < DEPTH:
            state["next"] += 1
            state["flight"] += 1
            echo.echo(state["next"], on_result=answered(state["next"]))
        return window.observe(state["done"])

    params = {
        "port": port,
        "bus": bus,
        "period": KHZ,
        "mode": "periodic",
        "base": base_of(),
        "checks": checks,
    }
    caller = Driven(KHZ, work, setup)
    with Child("sengen-callee", params, logs) as callee:
        callee.expect("ready")
        checked(checks)
        try:
            run_kernel(port, [("caller", caller, 2)], window_s + KERNEL_BOUND_S, "caller")
        finally:
            checked(True)
        child_warnings = callee.warnings()
    rate = window.rate()
    return Pipelined(rate, state["wrong"], f"{WARNINGS.take()}; callee process: {child_warnings}")


# --------------------------------------------------------------------------------------------
# the callee: in the child, and in this process for part 3's one-process round trips


class Callee(Component):
    """Owns one ``Echo``; at ``period`` or work-driven (``period`` None)."""

    def __init__(self, classes: Classes, bus: str, period: int | None) -> None:
        self.classes = classes
        self.bus = bus
        self.period = period

    def run(self, api: RunApi) -> None:
        api.get_source(self.bus).add(self.classes.echo("echo"))
        if self.period is not None:
            api.exec_loop(self.period)
            return
        WorkDriven(lambda api: False).run(api)


def child_zenoh_queryable(params: dict[str, Any], control: Control) -> None:
    key = params["key"]

    def on_query(query: zenoh.Query) -> None:
        with query:
            request = query.payload
            query.reply(key, request.to_bytes() if request is not None else b"")

    with raw_session(int(params["port"])) as zsession:
        queryable = zsession.declare_queryable(key, on_query)
        say("ready")
        control.wait()
        queryable.undeclare()  # type: ignore[no-untyped-call]


def child_sengen_callee(params: dict[str, Any], control: Control) -> None:
    classes = load_classes(Path(params["base"]))
    period = int(params["period"]) if params["mode"] == "periodic" else None
    set_checks(bool(params.get("checks", True)))
    callee = Callee(classes, params["bus"], period)
    run_child_kernel(int(params["port"]), [("callee", callee, 2)], control, "callee")
