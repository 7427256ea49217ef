"""Behaviour of generated methods and calls: the asynchronous call path, const, local and
deferred methods, setters through proxies, removed objects and timeouts (codegen.md §3.2-§3.5;
runtime.md §3.9, §3.10, §10.2).

The classes come from ``tests/objects_stl`` (``objtest.Worker``; its ``limit`` is checked and its
``compute`` deferred by ``settings.json``), generated once for this module under the root
package ``objgen_calls``.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from objects_support import Tree, cycle, imported_tree, in_cycle

from sengen.runtime import (
    Call,
    CallError,
    CallFailed,
    CallTimeout,
    Duration,
    LocalMethodError,
    ObjectGone,
    Promise,
    set_checks,
)
from sengen.runtime.objects import values
from sengen.runtime.objects.checks import checks
from sengen.runtime.objects.context import Context

ROOT = "objgen_calls"
BUS = "local.bus"
MS = 1_000_000
LOCAL_MESSAGE = "calling local methods is not permitted across component boundaries (twice)"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("calls"), ROOT) as generated:
        yield generated


@pytest.fixture
def checks_off() -> Iterator[None]:
    previous = checks.enabled
    set_checks(False)
    try:
        yield
    finally:
        set_checks(previous)


# -- an implementation of objtest.Worker -----------------------------------------------------------


def _add(self: Any, amount: int) -> int:
    self.log.append(("add", amount))
    total: int = self.get_next_total() + amount
    self.set_next_total(total)
    self.events.added.emit(amount, total)
    return total


def _peek(self: Any) -> int:
    self.log.append(("peek",))
    total: int = self.total
    return total


def _sneak(self: Any, amount: int) -> int:
    self.set_next_total(amount)
    return amount


def _shout(self: Any) -> None:
    self.events.added.emit(0, 0)


def _compute(self: Any, n: int, promise: Promise[int]) -> None:
    self.promises.append((n, promise))


def _twice(self: Any, x: int) -> int:
    return 2 * x


def _fail(self: Any, message: str) -> str:
    raise KeyError(message)


def _bad_result(self: Any) -> int:
    return 300  # does not fit in u8


def _nothing(self: Any) -> None:
    self.log.append(("nothing",))


def _limit_accepts_set(self: Any, value: int) -> bool:
    return value < 100


def implementation(tree: Tree, name: str = "WorkerImpl", **overrides: Any) -> Any:
    """A user class implementing every hook of ``WorkerBase``; registers as objtest.<name>."""
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "add_impl": _add,
        "peek_impl": _peek,
        "sneak_impl": _sneak,
        "shout_impl": _shout,
        "compute_impl": _compute,
        "twice_impl": _twice,
        "fail_impl": _fail,
        "bad_result_impl": _bad_result,
        "nothing_impl": _nothing,
        "limit_accepts_set": _limit_accepts_set,
        **overrides,
    }
    return type(name, (tree.devices.WorkerBase,), namespace)


@pytest.fixture(scope="module")
def worker_class(tree: Tree) -> Any:
    return implementation(tree)


def registered_worker(worker_class: Any, owner: Context, name: str = "w") -> Any:
    worker = worker_class(name, serial="W-1")
    worker.log = []
    worker.promises = []
    worker.set_tag_id(1)
    worker.set_slot(1)
    worker._bind_(owner, BUS, 0)
    return worker


class Endpoint:
    """A transport stand-in that records what a remote proxy sends."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], int]] = []

    def send_call(self, proxy: Any, member: Any, args: tuple[Any, ...], call_id: int) -> None:
        self.calls.append((member.stl_name, args, call_id))

    def subscribe_event(self, proxy: Any, event: Any) -> None:
        pass

    def unsubscribe_event(self, proxy: Any, event: Any) -> None:
        pass


def remote_worker(tree: Tree, subscriber: Context, endpoint: Endpoint) -> Any:
    meta = tree.devices.Worker.META
    state = {p.stl_name: values.zero(p.type) for p in meta.all_properties}
    return tree.devices.WorkerRemoteProxy(endpoint, subscriber, "w", "s.b", state, 0)


def exchange(caller: Context, owner: Context, step: int) -> None:
    """The caller commits (sends), the owner runs a cycle (executes, replies), the caller drains
    (receives)."""
    cycle(caller, (3 * step + 1) * MS)
    cycle(owner, (3 * step + 2) * MS)
    cycle(caller, (3 * step + 3) * MS)


# -- the call path ---------------------------------------------------------------------------------


def test_a_call_to_an_object_of_the_same_component_completes_two_cycles_later(
    tree: Tree, worker_class: Any
) -> None:
    owner = Context("owner")
    worker = registered_worker(worker_class, owner)
    phase = ["cycle 1"]
    results: list[tuple[str, int]] = []
    calls: list[Call[int]] = []

    def update() -> None:
        calls.append(worker.add(5, on_result=lambda c: results.append((phase[0], c.result()))))

    cycle(owner, 1 * MS, update=update)
    (call,) = calls
    assert not call.done() and worker.log == []  # buffered, sent at the commit of cycle 1
    phase[0] = "cycle 2"
    cycle(owner, 2 * MS)
    assert worker.log == [("add", 5)]  # executed in the drain of cycle 2
    assert worker.total == 5
    assert not call.done()  # the result is sent at the commit of cycle 2
    phase[0] = "drain 3"
    owner.time = 3 * MS
    with owner.active():
        owner.drain()
        phase[0] = "update 3"
        assert call.done()
        owner.commit(3 * MS)
    assert results == [("drain 3", 5)]
    assert call.result() == 5


def test_a_call_through_a_local_proxy_follows_the_commit_and_drain_path(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    done_in: list[str] = []
    phase = ["caller cycle 1"]
    caller.time = 1 * MS
    with caller.active():
        caller.drain()
        call = proxy.add(2, on_result=lambda c: done_in.append(phase[0]))
        assert not call.done()
        cycle(owner, 1 * MS)  # the owner cycles before the caller commits: nothing arrived
        assert worker.log == []
        caller.commit(1 * MS)
    cycle(owner, 2 * MS)
    assert worker.log == [("add", 2)]
    assert not call.done()
    phase[0] = "caller cycle 2"
    cycle(caller, 2 * MS)
    assert call.done() and call.result() == 2
    assert done_in == ["caller cycle 2"]
    cycle(caller, 3 * MS)
    assert proxy.total == 2  # the state change arrived with the owner's commit


def test_result_on_a_component_thread_raises_at_once_when_not_done(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.peek())
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="is not done"):
        in_cycle(caller, lambda: call.result(timeout=30))
    assert time.monotonic() - started < 5  # raised at once, never waited
    # another thread may wait, up to its timeout
    with pytest.raises(TimeoutError):
        call.result(timeout=0.01)
    exchange(caller, owner, 0)
    assert in_cycle(caller, call.result) == 0  # done: the value, also on a component thread


def test_another_thread_waiting_for_a_result_is_woken_when_it_arrives(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.add(4))
    got: list[object] = []

    def wait() -> None:
        try:
            got.append(call.result(timeout=30))
        except BaseException as error:
            got.append(error)

    waiter = threading.Thread(target=wait)
    waiter.start()
    try:
        exchange(caller, owner, 0)
    finally:
        waiter.join(30)
    assert not waiter.is_alive()
    assert got == [4]


def test_an_implementation_error_reaches_the_caller_as_call_failed(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.fail("boom"))
    exchange(caller, owner, 0)
    error = call.exception()
    assert isinstance(error, CallFailed)
    assert (error.type_name, error.message) == ("KeyError", "'boom'")
    assert isinstance(error.__cause__, KeyError)
    with pytest.raises(CallFailed):
        call.result()
    # the owner keeps running
    again = in_cycle(caller, lambda: proxy.add(1))
    exchange(caller, owner, 1)
    assert again.result() == 1


def test_a_bad_return_value_fails_the_call(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    proxy = tree.devices.WorkerLocalProxy(registered_worker(worker_class, owner), caller)
    call = in_cycle(caller, lambda: proxy.bad_result())
    exchange(caller, owner, 0)
    error = call.exception()
    assert isinstance(error, CallFailed)
    assert error.type_name == "ValueError"
    assert "value 300 does not fit in u8" in error.message
    assert "'badResult" in error.message and "'objtest.Worker'" in error.message


def test_a_void_method_completes_with_none(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.nothing())
    exchange(caller, owner, 0)
    assert call.done()
    assert call.result() is None
    assert worker.log == [("nothing",)]


def test_method_arguments_are_checked_at_the_call_when_checks_are_on(
    tree: Tree, worker_class: Any
) -> None:
    """A wrong argument is an error result naming it, at the caller's next drain; nothing
    reaches the callee."""
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    big = in_cycle(caller, lambda: proxy.add(2**40))
    text = in_cycle(caller, lambda: proxy.add("1"))
    assert not big.done()
    exchange(caller, owner, 0)
    assert str(big.exception()) == (
        "value 1099511627776 does not fit in i32 in argument 'add.amount' of 'objtest.Worker'"
    )
    assert isinstance(text.exception(), ValueError)
    assert "expected i32, got '1' in argument 'add.amount'" in str(text.exception())
    assert worker.log == []


# -- const -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "member"), [("sneak", "total"), ("shout", "added")], ids=["write", "emit"]
)
def test_a_const_method_that_changes_state_fails_the_call(
    tree: Tree, worker_class: Any, method: str, member: str
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    events: list[tuple[int, int]] = []
    in_cycle(caller, lambda: proxy.events.added.connect(lambda a, t: events.append((a, t))))
    args = (9,) if method == "sneak" else ()
    call = in_cycle(caller, lambda: getattr(proxy, method)(*args))
    exchange(caller, owner, 0)
    error = call.exception()
    assert isinstance(error, CallFailed)
    assert error.message == f"const method '{method}' tried to change '{member}'"
    cycle(owner, 10 * MS)
    cycle(caller, 10 * MS)
    assert worker.total == 0 and proxy.total == 0
    assert events == []
    # writes are allowed again once the const method returned
    cycle(owner, 11 * MS, update=lambda: worker.set_next_total(3))
    assert worker.total == 3


def test_a_const_method_may_read(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    cycle(owner, 1 * MS, update=lambda: worker.set_next_total(6))
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.peek())
    exchange(caller, owner, 1)
    assert call.result() == 6


# -- local -----------------------------------------------------------------------------------------


def test_a_local_method_is_synchronous_on_the_native_object(tree: Tree, worker_class: Any) -> None:
    owner = Context("owner")
    worker = registered_worker(worker_class, owner)
    assert in_cycle(owner, lambda: worker.twice(21)) == 42
    assert tree.devices.Worker.META.method("twice").local


def test_a_local_method_through_any_proxy_raises_local_method_error(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    endpoint = Endpoint()
    local = tree.devices.WorkerLocalProxy(registered_worker(worker_class, owner), caller)
    remote = remote_worker(tree, caller, endpoint)
    for proxy in (local, remote):
        with pytest.raises(LocalMethodError) as caught, caller.active():
            proxy.twice(1)
        assert str(caught.value) == LOCAL_MESSAGE
    cycle(caller, 1 * MS)
    assert endpoint.calls == []


# -- deferred --------------------------------------------------------------------------------------


def test_a_deferred_method_completes_in_a_later_owner_cycle(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    assert tree.devices.Worker.META.method("compute").deferred
    call = in_cycle(caller, lambda: proxy.compute(7))
    exchange(caller, owner, 0)
    assert not call.done()
    ((n, promise),) = worker.promises
    assert n == 7
    cycle(owner, 10 * MS)
    cycle(caller, 10 * MS)
    assert not call.done()
    owner.time = 11 * MS
    with owner.active():
        owner.drain()
        promise.set_result(n * 6)
        cycle(caller, 11 * MS)  # nothing crosses before the owner's commit
        assert not call.done()
        owner.commit(11 * MS)
    cycle(caller, 12 * MS)
    assert call.result() == 42
    with pytest.raises(RuntimeError, match="already completed"):
        promise.set_result(1)


def test_a_deferred_method_can_fail_through_its_promise(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.compute(1))
    exchange(caller, owner, 0)
    ((_, promise),) = worker.promises
    in_cycle(owner, lambda: promise.set_exception(ZeroDivisionError("no")))
    exchange(caller, owner, 1)
    error = call.exception()
    assert isinstance(error, CallFailed)
    assert (error.type_name, error.message) == ("ZeroDivisionError", "no")


def test_a_deferred_promise_can_be_handed_on_to_another_call(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")

    def forward(self: Any, n: int, promise: Promise[int]) -> None:
        promise.forward(self.helper.compute(n + 1))

    manager_class = implementation(tree, "ForwardingWorker", compute_impl=forward)
    helper = registered_worker(worker_class, owner, "helper")
    manager = registered_worker(manager_class, owner, "manager")
    manager.helper = helper
    proxy = tree.devices.WorkerLocalProxy(manager, caller)
    call = in_cycle(caller, lambda: proxy.compute(1))
    for step in range(3):
        exchange(caller, owner, step)
    ((n, promise),) = helper.promises
    assert n == 2
    in_cycle(owner, lambda: promise.set_result(20))
    for step in range(3, 7):
        exchange(caller, owner, step)
    assert call.result() == 20


def test_a_dropped_promise_fails_the_call(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.compute(3))
    exchange(caller, owner, 0)
    worker.promises.clear()
    gc.collect()
    exchange(caller, owner, 1)
    assert call.done()
    assert isinstance(call.exception(), CallError)


# -- setters through proxies -----------------------------------------------------------------------


def test_a_setter_through_a_local_proxy_is_applied_by_the_owner(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    seen: list[int] = []
    proxy.on_limit_changed(seen.append)
    call = in_cycle(caller, lambda: proxy.set_next_limit(9))
    assert isinstance(call, Call)
    assert proxy.limit == 0  # the proxy's own value never changes at the call
    cycle(caller, 1 * MS)
    assert worker.limit == 0
    cycle(owner, 2 * MS)  # applied in the owner's drain, visible at its commit
    assert worker.limit == 9
    assert proxy.limit == 0
    cycle(caller, 3 * MS)
    assert proxy.limit == 9
    assert seen == [9]
    assert call.done() and call.result() is None


@pytest.mark.parametrize(
    ("value", "type_name", "message"),
    [
        (150, "ValueError", "invalid value for property limit"),
        (
            2**40,
            "ValueError",
            "value 1099511627776 does not fit in i32 in property 'limit' of 'objtest.Worker'",
        ),
    ],
    ids=["hook", "range"],
)
def test_a_rejected_setter_fails_the_call_with_the_owners_reason(
    tree: Tree, worker_class: Any, value: int, type_name: str, message: str
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.set_next_limit(value))
    exchange(caller, owner, 0)
    error = call.exception()
    assert isinstance(error, CallFailed)
    assert (error.type_name, error.message) == (type_name, message)
    assert worker.limit == 0 and proxy.limit == 0


def test_the_owner_validates_setter_calls_even_with_checks_off(
    tree: Tree, worker_class: Any, checks_off: None
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.set_next_note(5))
    exchange(caller, owner, 0)
    assert isinstance(call.exception(), CallFailed)
    assert worker.note == ""


def test_the_checked_hook_rejects_the_owners_own_write(tree: Tree, worker_class: Any) -> None:
    owner = Context("owner")
    worker = registered_worker(worker_class, owner)
    with pytest.raises(ValueError) as caught:
        in_cycle(owner, lambda: worker.set_next_limit(100))
    assert str(caught.value) == "invalid value for property limit"
    in_cycle(owner, lambda: worker.set_next_limit(99))
    assert worker.get_next_limit() == 99


def test_the_checked_hook_runs_even_with_checks_off(
    tree: Tree, worker_class: Any, checks_off: None
) -> None:
    owner = Context("owner")
    worker = registered_worker(worker_class, owner)
    with pytest.raises(ValueError) as caught:
        in_cycle(owner, lambda: worker.set_next_limit(100))
    assert str(caught.value) == "invalid value for property limit"
    in_cycle(owner, lambda: worker.set_next_total(2**70))  # no range check while off
    assert worker.get_next_total() == 2**70


def test_a_setter_through_a_remote_proxy_is_sent_at_commit_and_completed_at_drain(
    tree: Tree,
) -> None:
    caller = Context("caller")
    endpoint = Endpoint()
    remote = remote_worker(tree, caller, endpoint)
    ok = in_cycle(caller, lambda: remote.set_next_limit(3))
    rejected = in_cycle(caller, lambda: remote.set_next_note("x"))
    assert endpoint.calls == []
    cycle(caller, 1 * MS)
    assert [(name, args) for name, args, _ in endpoint.calls] == [("limit", (3,)), ("note", ("x",))]
    assert remote.limit == 0
    (_, _, first), (_, _, second) = endpoint.calls
    remote._receive_result_(first, None, None)
    remote._receive_result_(second, None, CallFailed("ValueError", "no"))
    assert not ok.done()
    cycle(caller, 2 * MS)
    assert ok.result() is None
    assert isinstance(rejected.exception(), CallFailed)
    assert remote.limit == 0  # the value arrives with the owner's state update, not the reply


def test_a_method_through_a_remote_proxy(tree: Tree) -> None:
    caller = Context("caller")
    endpoint = Endpoint()
    remote = remote_worker(tree, caller, endpoint)
    results: list[int] = []
    call = in_cycle(caller, lambda: remote.add(2, on_result=lambda c: results.append(c.result())))
    cycle(caller, 1 * MS)
    ((name, args, call_id),) = endpoint.calls
    assert (name, args) == ("add", (2,))
    remote._receive_result_(call_id, 12, None)
    remote._receive_result_(call_id, 13, None)  # a duplicate reply is ignored
    assert results == []
    cycle(caller, 2 * MS)
    assert results == [12]
    assert call.result() == 12


# -- removed objects and timeouts ------------------------------------------------------------------


def test_calls_after_removal_complete_with_object_gone_at_the_next_drain(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    worker._unbind_()
    method = in_cycle(caller, lambda: proxy.add(1))  # never raised at call time
    setter = in_cycle(caller, lambda: proxy.set_next_limit(1))
    cycle(caller, 1 * MS)  # sent at this commit
    assert not method.done() and not setter.done()
    cycle(caller, 2 * MS)  # delivered at the next drain
    for call in (method, setter):
        error = call.exception()
        assert isinstance(error, ObjectGone)
        assert str(error) == "object 'local.bus.w' no longer exists"
    assert worker.log == []


def test_a_call_in_flight_during_removal_completes_with_object_gone(
    tree: Tree, worker_class: Any
) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.add(1))
    cycle(caller, 1 * MS)  # queued at the owner
    worker._unbind_()
    cycle(owner, 2 * MS)
    cycle(caller, 3 * MS)
    assert isinstance(call.exception(), ObjectGone)
    assert worker.log == []


def test_remote_calls_complete_with_object_gone_when_the_object_is_removed(tree: Tree) -> None:
    caller = Context("caller")
    endpoint = Endpoint()
    remote = remote_worker(tree, caller, endpoint)
    pending = in_cycle(caller, lambda: remote.add(1))
    cycle(caller, 1 * MS)
    remote._receive_removed_()
    assert not pending.done()  # delivered at the caller's next drain
    cycle(caller, 2 * MS)
    assert str(pending.exception()) == "object 's.b.w' no longer exists"
    late = in_cycle(caller, lambda: remote.add(2))
    cycle(caller, 3 * MS)
    cycle(caller, 4 * MS)
    assert isinstance(late.exception(), ObjectGone)
    assert len(endpoint.calls) == 1


def test_a_call_with_a_timeout_fails_with_call_timeout(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    call = in_cycle(caller, lambda: proxy.add(1, timeout=Duration.parse("5 ms")))
    cycle(caller, 3 * MS)
    assert not call.done()
    cycle(caller, 6 * MS)
    assert isinstance(call.exception(), CallTimeout)
    with pytest.raises(CallTimeout):
        call.result()
    cycle(owner, 7 * MS)  # the late result changes nothing
    cycle(caller, 8 * MS)
    assert isinstance(call.exception(), CallTimeout)


def test_a_call_without_timeout_gets_its_context_s_default_naming_object_and_method(
    tree: Tree, worker_class: Any
) -> None:
    """``kernel.callTimeout`` (issue 21 item 4): an owner that never answers cannot make a
    call wait forever; an explicit ``timeout=`` still wins over the default."""
    owner, caller = Context("owner"), Context("caller")
    caller.call_timeout = 7 * MS
    proxy = tree.devices.WorkerLocalProxy(registered_worker(worker_class, owner), caller)
    defaulted = in_cycle(caller, lambda: proxy.add(1))
    explicit = in_cycle(caller, lambda: proxy.add(2, timeout=Duration.parse("20 ms")))
    cycle(caller, 6 * MS)
    assert not defaulted.done()
    cycle(caller, 7 * MS)
    error = defaulted.exception()
    assert isinstance(error, CallTimeout)
    assert str(error) == "call to 'add' of object 'local.bus.w' timed out"
    assert not explicit.done()
    cycle(caller, 20 * MS)
    assert isinstance(explicit.exception(), CallTimeout)


def test_a_call_answered_before_its_timeout_keeps_its_result(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    proxy = tree.devices.WorkerLocalProxy(registered_worker(worker_class, owner), caller)
    call = in_cycle(caller, lambda: proxy.add(3, timeout=Duration.parse("1 s")))
    exchange(caller, owner, 0)
    cycle(caller, 2_000 * MS)
    assert call.result() == 3


def test_done_callbacks_run_in_the_callers_drain(tree: Tree, worker_class: Any) -> None:
    owner, caller = Context("owner"), Context("caller")
    proxy = tree.devices.WorkerLocalProxy(registered_worker(worker_class, owner), caller)
    threads: list[int] = []
    order: list[str] = []

    def record(c: Call[int]) -> None:
        threads.append(threading.get_ident())
        order.append(f"first {c.result()}")

    call = in_cycle(caller, lambda: proxy.add(1, on_result=record))
    call.add_done_callback(lambda c: order.append("second"))
    exchange(caller, owner, 0)
    assert order == ["first 1", "second"]
    assert threads == [threading.get_ident()]
    call.add_done_callback(lambda c: order.append("late"))  # already done: at once
    assert order[-1] == "late"


# -- the asyncio adapters (runtime.md §10.2) ------------------------------------------------------


def test_awaiting_a_call_resumes_on_the_loop_when_the_result_arrives(
    tree: Tree, worker_class: Any
) -> None:
    """The loop runs in another thread than the components, as with ``sengen.aio``."""
    owner, caller = Context("owner"), Context("caller")
    worker = registered_worker(worker_class, owner)
    proxy = tree.devices.WorkerLocalProxy(worker, caller)
    outcome: list[object] = []

    async def main(call: Call[int]) -> None:
        outcome.append(await asyncio.wait_for(call, timeout=10))

    calls: list[Call[int]] = []
    cycle(caller, 1 * MS, update=lambda: calls.append(proxy.add(4)))
    thread = threading.Thread(target=asyncio.run, args=(main(calls[0]),))
    thread.start()
    cycle(owner, 2 * MS)
    cycle(caller, 3 * MS)
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert outcome == [4]


def test_async_iteration_over_an_event_yields_each_emission(tree: Tree, worker_class: Any) -> None:
    owner = Context("owner")
    worker = registered_worker(worker_class, owner)
    received: list[tuple[object, ...]] = []

    async def main() -> None:
        stream = worker.events.added.__aiter__()
        loop = asyncio.get_running_loop()

        def emit_two() -> None:
            cycle(owner, 1 * MS, update=lambda: worker.events.added.emit(1, 10))
            cycle(owner, 2 * MS, update=lambda: worker.events.added.emit(2, 30))
            cycle(owner, 3 * MS)

        first = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0)  # the subscription is made when iteration starts
        await loop.run_in_executor(None, emit_two)
        received.append(await asyncio.wait_for(first, timeout=10))
        received.append(await asyncio.wait_for(stream.__anext__(), timeout=10))
        await stream.aclose()

    asyncio.run(main())
    assert received == [(1, 10), (2, 30)]
