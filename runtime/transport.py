"""The ``transport`` component: every session other than ``local`` over Zenoh (runtime.md §8).

Membership rides on Zenoh liveliness tokens: one per process (its loss removes the process's
objects everywhere and fails the calls waiting for it) and one per interest, under the interest's
bus, whose key carries the query, so that a producer that starts later still receives every
interest (liveliness history) and sees it go when the subscriber closes it or dies. Everything
else is directed to a process's inbox key on reliable, blocking publishers: one ordered stream
per pair of processes, in which an object's snapshot precedes its updates and a call's result
follows the updates of its commit. Zenoh callbacks only decode and enqueue (``remote``).
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import zenoh
from pydantic import BaseModel, ConfigDict, Field
from sengen.runtime import describe, wire
from sengen.runtime.buses import BusSpace, Source
from sengen.runtime.calls import Call
from sengen.runtime.component import Component
from sengen.runtime.context import Context
from sengen.runtime.discovery import Delivery, Interest, Interests, Subscription
from sengen.runtime.duration import Duration, TimeStamp
from sengen.runtime.errors import CallFailed, ObjectGone
from sengen.runtime.meta import ClassMeta, MethodMeta, PropertyMeta
from sengen.runtime.objects import NativeObject
from sengen.runtime.proxies import RemoteProxy
from sengen.runtime.query import QueryError, parse_query
from sengen.runtime.registry import registry
from sengen.runtime.remote import Calls, Outbox, RemoteHandle, class_codec
from sengen.runtime.runner import RunApi
from sengen.runtime.stepping import KernelClock, StepPlan

_log = logging.getLogger("sengen.transport")

PREFIX = "sengen/v1"
DEFAULT_RENDEZVOUS = "tcp/127.0.0.1:7447"
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024
LOSS_GRACE = 0.25  # s: how long a process whose token went may still say goodbye
# Remote deliveries sort after every local component's (runner indices are small).
_REMOTE_ORDER = 1 << 40
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]")


class TransportConfig(BaseModel):
    """The ``load: [{name: transport, ...}]`` keys (runtime.md §8.2)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    mode: Literal["peer", "client"] = "peer"
    rendezvous: str | None = DEFAULT_RENDEZVOUS
    listen: list[str] | None = None
    connect: list[str] | None = None
    multicast_scouting: bool = Field(default=False, alias="multicastScouting")
    lease_ms: int | None = Field(default=None, alias="leaseMs", gt=0)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE, alias="maxMessageBytes", gt=0)
    zenoh: dict[str, Any] = Field(default_factory=dict)


def zenoh_config(settings: TransportConfig, listen: list[str], connect: list[str]) -> zenoh.Config:
    """Zenoh's configuration: sengen's choices, then the ``zenoh:`` passthrough on top."""
    config = zenoh.Config()
    config.insert_json5("mode", json.dumps(settings.mode))
    # Multicast scouting would pick a non-loopback interface: off unless asked for.
    config.insert_json5("scouting/multicast/enabled", json.dumps(settings.multicast_scouting))
    config.insert_json5("scouting/gossip/enabled", "true")
    if settings.mode == "peer":
        config.insert_json5("listen/endpoints", json.dumps(listen))
    config.insert_json5("connect/endpoints", json.dumps(connect))
    if settings.lease_ms is not None:
        config.insert_json5("transport/link/tx/lease", str(settings.lease_ms))
    for path, value in _leaves(settings.zenoh):
        config.insert_json5(path, json.dumps(value))
    return config


def _leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{a: {b: 1}}`` as ``("a/b", 1)``: a passthrough key replaces one setting, not a subtree."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _leaves(value, path + "/")
        else:
            yield path, value


def open_session(settings: TransportConfig) -> zenoh.Session:
    """The one-machine scheme of §8.2 unless endpoints are explicit: listen on the rendezvous
    endpoint, or, when another process holds it, on an ephemeral port connected to it."""
    if settings.listen is not None or settings.connect is not None:
        listen, connect = settings.listen or [], settings.connect or []
        return zenoh.open(zenoh_config(settings, listen, connect))
    rendezvous = settings.rendezvous
    if rendezvous is None:
        return zenoh.open(zenoh_config(settings, [], []))
    if settings.mode == "client":
        return zenoh.open(zenoh_config(settings, [], [rendezvous]))
    try:
        return zenoh.open(zenoh_config(settings, [rendezvous], []))
    except zenoh.ZError:
        host = rendezvous.rpartition(":")[0]
        return zenoh.open(zenoh_config(settings, [f"{host}:0"], [rendezvous]))


def _interest_key(interest: Interest, zid: str, iid: int, mark: str) -> str:
    """``mark``: ``r`` for a real-time subscriber, ``s<k>`` for a stepped one in step k."""
    session, _, bus = interest.bus.partition(".")
    text = base64.urlsafe_b64encode(interest.text.encode()).decode().rstrip("=")
    return f"{PREFIX}/{session}/{bus}/@interest/{zid}/{iid}/{mark}/{text}"


@dataclass(frozen=True)
class _Token:
    zid: str
    iid: int
    step: int | None  # None: a real-time subscriber's
    text: str


def _parse_interest(key: str) -> _Token | None:
    """An interest token's parts, None when the key is not one of ours."""
    parts = key.split("/")
    if len(parts) != 9 or parts[4] != "@interest" or not parts[6].isdigit():
        return None
    mark = parts[7]
    if mark != "r" and not (mark.startswith("s") and mark[1:].isdigit()):
        return None
    try:
        text = base64.urlsafe_b64decode(parts[8] + "=" * (-len(parts[8]) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return _Token(parts[5], int(parts[6]), None if mark == "r" else int(mark[1:]), text)


def _undeclare(entity: zenoh.LivelinessToken | zenoh.Subscriber[None] | zenoh.Publisher) -> None:
    entity.undeclare()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs


def _object_key(bus: str, zid: str, registered: int, name: str) -> str:
    session, _, bus_name = bus.partition(".")
    text = base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")
    return f"{PREFIX}/{session}/{bus_name}/@obj/{zid}/{registered}/{text}"


def _parse_object(key: str) -> tuple[str, str, int, str] | None:
    """(bus, process, registration time, name) of an object token, None if not one of ours."""
    parts = key.split("/")
    if len(parts) != 8 or parts[4] != "@obj" or not parts[6].isdigit():
        return None
    try:
        name = base64.urlsafe_b64decode(parts[7] + "=" * (-len(parts[7]) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return f"{parts[2]}.{parts[3]}", parts[5], int(parts[6]), name


@dataclass
class _Published:
    """An object of this process on a bus that travels, announced for §3.13."""

    obj: NativeObject
    source: Source
    registered: int  # wall time of the registration, ns: the earlier one keeps the name
    token: zenoh.LivelinessToken
    withdrawn: bool = False


@dataclass
class _Announced:
    iid: int
    token: zenoh.LivelinessToken
    count: int = 0  # this process's open subscriptions of the interest


@dataclass
class Peer:
    """Another process, as this one knows it."""

    zid: str
    number: int
    label: str = ""
    publisher: zenoh.Publisher | None = None
    outbox: Outbox | None = None
    calls: Calls = field(default_factory=Calls)
    handles: dict[int, RemoteHandle] = field(default_factory=dict)


class Transport(Component):
    """The shipped ``transport`` component (alias ``zenoh``, ``ether``): real-time-only, it
    opens its Zenoh session in ``init`` and closes it in ``unload``."""

    config_model = TransportConfig

    def __init__(self, settings: TransportConfig | None = None) -> None:
        self.settings = settings or TransportConfig()
        self._session: zenoh.Session | None = None
        self._space: Interests | None = None
        self.zid = ""
        self._lock = threading.RLock()
        self._peers: dict[str, Peer] = {}
        self._numbers = itertools.count()
        self._iids = itertools.count(1)
        self._order = itertools.count()
        self._announced: dict[Interest, _Announced] = {}
        self._by_iid: dict[int, Interest] = {}
        self._declared: list[zenoh.LivelinessToken | zenoh.Subscriber[None]] = []
        self._warned: set[tuple[str, str]] = set()
        # Classes not imported here, by (name, hash): descriptions and the metadata built.
        self._descriptions: dict[tuple[str, int], bytes] = {}
        self._dynamic: dict[tuple[str, int], ClassMeta] = {}
        self._warned_at = 0.0
        self.bytes_sent = 0
        self.bytes_received = 0
        # Stepping across processes (runtime.md §6.8).
        self._clock: KernelClock | None = None
        self._steps = threading.Condition(self._lock)
        self._in_set = False  # stepped by a master at least once
        self._held: list[tuple[int, int, str, bytes]] = []  # (step, arrival, sender, frame)
        self._arrivals = itertools.count()
        self._ends: dict[str, int] = {}  # the last END step each kernel sent us
        self._kernels: dict[str, int] = {}  # process -> its kernel's id, from END markers
        self._end_interests: list[tuple[int, int, str, str]] = []  # (kernel, iid, zid, text)
        self._opened: list[tuple[int, str]] = []  # stepped interests since our last END
        self._last_end = -1
        self._gone: set[str] = set()  # processes declared lost
        self._losing: dict[str, float] = {}  # token gone, no goodbye yet: lost at the deadline
        self._remote_clocks: dict[RemoteProxy, RemoteClock] = {}
        # One name on one bus in two processes (runtime.md §3.13).
        self._bus_space: BusSpace | None = None
        self._published: dict[tuple[str, str], _Published] = {}
        self._names: dict[tuple[str, str], dict[str, int]] = {}  # (bus, name): {process: time}
        self._conflicts: set[tuple[str, str, str]] = set()  # (bus, name, process) reported

    def is_real_time_only(self) -> bool:
        return True

    def preload(self, api: RunApi) -> None:
        api.bus_space.transport_loaded = True

    def init(self, api: RunApi) -> None:
        self._bus_space = api.bus_space
        space = api.bus_space.interests
        self._space = space
        self._session = session = open_session(self.settings)
        self.zid = str(session.zid())
        app = _UNSAFE_KEY.sub("_", api.get_app_name() or "sengen")
        liveliness = session.liveliness()
        self._declared += [
            liveliness.declare_subscriber(f"{PREFIX}/@proc/*/*/*", self._on_process, history=True),
            liveliness.declare_subscriber(
                f"{PREFIX}/*/*/@interest/*/*/*/*", self._on_interest, history=True
            ),
            liveliness.declare_subscriber(
                f"{PREFIX}/*/*/@obj/*/*/*", self._on_object, history=True
            ),
            session.declare_subscriber(f"{PREFIX}/@inbox/{self.zid}", self._on_frame),
            liveliness.declare_token(f"{PREFIX}/@proc/{self.zid}/{os.getpid()}/{app}"),
        ]
        clock = api.kernel_clock
        if clock is not None and not clock.self_stepping:
            self._clock = clock
            clock.member = self.zid
            clock.sync = self
            api.bus_space.clock_link = self
        space.listener = self._on_subscription
        for subscription in space.subscriptions():  # opened before the session was
            self._on_subscription(subscription, True)
        api.bus_space.publication_listener = self._on_publication
        _log.info("transport up: zenoh id %s, %s mode", self.zid, self.settings.mode)

    def run(self, api: RunApi) -> None:
        # The only work of this thread: processes whose token went without a goodbye are
        # declared lost once the grace for their last frames has passed.
        while not api.wait_for_stop(LOSS_GRACE / 4):
            self._expire_losses()

    def unload(self, api: RunApi) -> None:
        self.close()

    def close(self) -> None:
        """Say goodbye on every stream, after everything sent on it, then undeclare
        everything (peers see the removals at once) and close the session."""
        if self._space is not None:
            self._space.listener = None
        if self._bus_space is not None:
            self._bus_space.publication_listener = None
        with self._lock:
            peers, self._peers = list(self._peers.values()), {}
            announced, self._announced = list(self._announced.values()), {}
            published, self._published = list(self._published.values()), {}
        goodbye = wire.Bye(self.zid).encode()
        for peer in peers:
            self._put(peer, goodbye, "a goodbye", stamp=False)
            if peer.outbox is not None:
                peer.outbox.close_all()
        tokens = [*(a.token for a in announced), *(p.token for p in published)]
        for entity in [*tokens, *reversed(self._declared)]:
            _undeclare(entity)
        self._declared.clear()
        for peer in peers:
            if peer.publisher is not None:
                _undeclare(peer.publisher)
        if self._session is not None:
            self._session.close()  # type: ignore[no-untyped-call]
            self._session = None

    # -- this process's interests --------------------------------------------------------------

    def _on_subscription(self, subscription: Subscription, opened: bool) -> None:
        """A local subscription opened or closed (any thread): announce its interest while
        any local subscription holds it; a new subscription also gets the remote matches."""
        if subscription._discovery.forwarded or subscription.interest.bus.startswith("local."):
            return
        interest = subscription.interest
        session = self._session
        if session is None:
            return
        with self._lock:
            announced = self._announced.get(interest)
            if opened:
                if announced is None:
                    iid = next(self._iids)
                    mark = self._mark()
                    if mark != "r":  # carried by the next END marker too
                        self._opened.append((iid, interest.text))
                    key = _interest_key(interest, self.zid, iid, mark)
                    token = session.liveliness().declare_token(key)
                    announced = self._announced[interest] = _Announced(iid, token)
                    self._by_iid[iid] = interest
                announced.count += 1
                held = [h for p in self._peers.values() for h in p.handles.values()]
                for handle in held:
                    if announced.iid in handle.iids:
                        order = (_REMOTE_ORDER, next(self._order))
                        delivery = Delivery(True, subscription, handle, order)
                        subscription._discovery.deliver(delivery, False)
                        if subscription.log is not None:
                            handle.log(subscription, True)
                return
            if announced is None:
                return
            announced.count -= 1
            if announced.count > 0:
                return
            del self._announced[interest]
            del self._by_iid[announced.iid]
            for peer in self._peers.values():
                for oid, handle in list(peer.handles.items()):
                    handle.iids.discard(announced.iid)
                    if not handle.iids:
                        del peer.handles[oid]
        _undeclare(announced.token)

    def _mark(self) -> str:
        """How a subscription made on this thread is announced: ``s<k>`` from a stepped
        component (``k``: the current step, 0 before any), ``r`` otherwise."""
        context = Context.current()
        if self._clock is None or context is None or not context.stepped:
            return "r"
        plan = self._clock.plan
        return f"s{plan.step if plan is not None else 0}"

    def _deliver(self, iid: int, handle: RemoteHandle, adding: bool) -> None:
        interest = self._by_iid.get(iid)
        if interest is None or self._space is None:
            return
        order = (_REMOTE_ORDER, next(self._order))
        for subscription in self._space.subscriptions_of(interest):
            if not subscription._discovery.forwarded:
                delivery = Delivery(adding, subscription, handle, order)
                subscription._discovery.deliver(delivery, False)
                if subscription.log is not None:
                    handle.log(subscription, adding)

    # -- one name on one bus in two processes (runtime.md §3.13) -----------------------------

    def _on_publication(self, source: Source, obj: NativeObject, added: bool) -> None:
        """A source of this process added or removed an object (its owner's thread)."""
        session = self._session
        key = (source.bus, obj.name)
        if session is None or source.bus.startswith("local."):
            return
        if added:
            registered = time.time_ns()
            name_key = _object_key(source.bus, self.zid, registered, obj.name)
            token = session.liveliness().declare_token(name_key)
            with self._lock:
                self._published[key] = _Published(obj, source, registered, token)
            self._check_name(key)
            return
        with self._lock:
            published = self._published.get(key)
            if published is None or published.obj is not obj:
                return
            del self._published[key]
        _undeclare(published.token)

    def _on_object(self, sample: zenoh.Sample) -> None:
        parsed = _parse_object(str(sample.key_expr))
        if parsed is None or parsed[1] == self.zid:
            return
        bus, zid, registered, name = parsed
        with self._lock:
            holders = self._names.setdefault((bus, name), {})
            if sample.kind == zenoh.SampleKind.PUT:
                holders[zid] = registered
            else:
                holders.pop(zid, None)
                if not holders:
                    del self._names[(bus, name)]
        self._check_name((bus, name))

    def _check_name(self, key: tuple[str, str]) -> None:
        """The earlier registration keeps the name (ties: the lower process id); the other
        owner withdraws its object from the bus; both processes log an error."""
        with self._lock:
            published = self._published.get(key)
            holders = dict(self._names.get(key, {}))
            if published is None or published.withdrawn or not holders:
                return
            fresh = [z for z in sorted(holders) if (*key, z) not in self._conflicts]
            self._conflicts.update((*key, z) for z in fresh)
            mine = (published.registered, self.zid)
            first = min((t, z) for z, t in holders.items())
            lost = first < mine
            if lost:
                published.withdrawn = True
        address = f"{key[0]}.{key[1]}"
        for zid in fresh:
            other = self._peer(zid).label
            if lost and (holders[zid], zid) == first:
                _log.error(
                    "object '%s' is also published by process %s, which registered it first:"
                    " withdrawn from bus '%s'",
                    address, other, key[0],
                )  # fmt: skip
            elif not lost:
                _log.error(
                    "object '%s' is also published by process %s, which registered it later:"
                    " this process keeps the name",
                    address, other,
                )  # fmt: skip
        if lost:
            owner = published.obj._ctx
            if owner is not None:
                owner.post(_withdraw, published.source, published.obj)

    # -- other processes -----------------------------------------------------------------------

    def _peer(self, zid: str) -> Peer:
        with self._lock:
            peer = self._peers.get(zid)
            if peer is None:
                peer = self._peers[zid] = Peer(zid, next(self._numbers), label=zid)
            return peer

    def _on_process(self, sample: zenoh.Sample) -> None:
        parts = str(sample.key_expr).split("/")
        if len(parts) != 6 or parts[3] == self.zid:
            return
        zid, label = parts[3], f"{parts[5]}/{parts[4]}"
        if sample.kind == zenoh.SampleKind.PUT:
            with self._lock:
                self._gone.discard(zid)
                self._losing.pop(zid, None)
            self._peer(zid).label = label
            _log.info("process %s (%s) joined", label, zid)
        else:
            # Its last frames and its goodbye travel on another path than the token: give
            # them a moment, so that an orderly leave is not taken for a loss.
            with self._lock:
                self._losing.setdefault(zid, time.monotonic() + LOSS_GRACE)

    def _expire_losses(self) -> None:
        now = time.monotonic()
        with self._lock:
            expired = sorted(z for z, deadline in self._losing.items() if deadline <= now)
            for zid in expired:
                del self._losing[zid]
        for zid in expired:
            self._lost(zid)

    def _lost(self, zid: str, left: bool = False) -> None:
        """A process left (``left``) or was lost: its objects go, the calls waiting for it
        fail."""
        how = "left" if left else "lost"
        with self._lock:
            self._gone.add(zid)  # a step no longer waits for its END markers
            self._steps.notify_all()
            peer = self._peers.pop(zid, None)
            if peer is None:
                return
            handles = list(peer.handles.values())
            peer.handles.clear()
            for handle in handles:
                for iid in sorted(handle.iids):
                    self._deliver(iid, handle, False)
        if peer.outbox is not None:
            peer.outbox.close_all()
        for handle in handles:
            handle.gone(
                ObjectGone(
                    f"object '{handle.address}' no longer exists (process {peer.label} {how})"
                )
            )
        if peer.publisher is not None:
            _undeclare(peer.publisher)
        if left:
            _log.info("process %s left: %d object(s) removed", peer.label, len(handles))
        else:
            _log.warning("process %s lost: %d object(s) removed", peer.label, len(handles))

    def _on_interest(self, sample: zenoh.Sample) -> None:
        token = _parse_interest(str(sample.key_expr))
        if token is None or token.zid == self.zid or self._space is None:
            return
        peer = self._peer(token.zid)
        if sample.kind != zenoh.SampleKind.PUT:
            if peer.outbox is not None:
                peer.outbox.close(token.iid)
            return
        # A stepped kernel opens the interests of stepped subscribers at a hand-over, from
        # their END markers, so that the step does not depend on when the token arrived; only
        # those made before any step may open at once, before this kernel's first step too.
        stepped = self._clock is not None and token.step is not None
        if stepped and (token.step or self._in_set):
            return
        self._open(peer, token.iid, token.text)

    def _open(self, peer: Peer, iid: int, text: str) -> None:
        try:
            query = parse_query(text)
        except QueryError as error:
            self._warn(f"ignoring an invalid interest of process {peer.label}: {error}")
            return
        with self._lock:
            if peer.outbox is None:
                send = functools.partial(self._put, peer)
                peer.outbox = Outbox(self.zid, self._space_of(), send)
            outbox = peer.outbox
        outbox.open(iid, query)

    def _space_of(self) -> Interests:
        assert self._space is not None
        return self._space

    def _put(self, peer: Peer, data: bytes, what: str, stamp: bool = True) -> bool:
        """Send ``data`` to ``peer``'s inbox, stamped with the step when a stepped component
        sends it during a master's step; False (logged) when it is over the size limit."""
        clock = self._clock
        if stamp and clock is not None and clock.plan is not None:
            context = Context.current()
            if context is not None and context.stepped:
                data = wire.Stamped(self.zid, clock.plan.step, data).encode()
        limit = self.settings.max_message_bytes
        if len(data) > limit:
            _log.error(
                "message of %d bytes for %s exceeds maxMessageBytes (%d): not sent",
                len(data), what, limit,
            )  # fmt: skip
            return False
        session = self._session
        if session is None:
            return False
        publisher = peer.publisher
        if publisher is None:
            with self._lock:
                if peer.publisher is None:
                    peer.publisher = session.declare_publisher(
                        f"{PREFIX}/@inbox/{peer.zid}",
                        congestion_control=zenoh.CongestionControl.BLOCK,
                        reliability=zenoh.Reliability.RELIABLE,
                    )
                publisher = peer.publisher
        publisher.put(data)
        self.bytes_sent += len(data)
        return True

    # -- frames --------------------------------------------------------------------------------

    def _on_frame(self, sample: zenoh.Sample) -> None:
        """A Zenoh thread: decode, then only enqueue. Nothing a peer sends may raise here."""
        data = sample.payload.to_bytes()
        self.bytes_received += len(data)
        if len(data) > self.settings.max_message_bytes:
            self._warn(f"dropped a message of {len(data)} bytes (over maxMessageBytes)")
            return
        try:
            frame = wire.decode(data)
            if isinstance(frame, wire.Stamped) and self._clock is not None:
                with self._lock:  # until the hand-over that opens step frame.step + 1
                    self._held.append((frame.step, next(self._arrivals), frame.sender, frame.inner))
                return
            self._dispatch(frame)
        except Exception as error:  # a malformed frame: drop it, keep running
            self._warn(f"dropped a malformed message ({len(data)} bytes): {error}")

    def _dispatch(self, frame: wire.Frame) -> None:
        if isinstance(frame, wire.Stamped):  # no clock here: the stamp does not matter
            self._dispatch(wire.decode(frame.inner))
            return
        if isinstance(frame, wire.EndOfStep):
            self._end_arrived(frame)
            return
        if isinstance(frame, wire.Bye):
            with self._lock:
                self._losing.pop(frame.sender, None)
            self._lost(frame.sender, left=True)
            return
        if isinstance(frame, wire.StepOrder):
            clock = self._clock
            if clock is not None:
                clock.plan = StepPlan(frame.step, frame.members, frame.awaited)
            return
        if isinstance(frame, wire.Added):
            self._added(frame)
            return
        peer = self._peers.get(frame.sender)
        if peer is None:
            return  # from a process already declared lost
        if isinstance(frame, wire.Result):
            peer.calls.answered(frame)
        elif isinstance(frame, wire.Invoke):
            if peer.outbox is None:  # it holds none of our objects
                text = f"object {frame.oid:#x} is not known"
                reply = wire.Result(self.zid, frame.call_id, wire.GONE, "ObjectGone", text, b"")
                self._put(peer, reply.encode(), "a call result")
            else:
                peer.outbox.invoke(frame)
        else:
            handle = peer.handles.get(frame.oid)
            if handle is None:
                return
            codec = class_codec(handle.meta)
            if isinstance(frame, wire.Changed):
                handle.changed(codec.decode_properties(frame.state), frame.time)
            elif isinstance(frame, wire.Emitted):
                name, args = codec.decode_event(frame.event)
                handle.emitted(name, args, frame.time)
            else:
                self._removed(peer, handle, frame.iid)

    def _added(self, frame: wire.Added) -> None:
        if frame.description:  # sent once per class: kept even if this frame is not used
            with self._lock:
                self._descriptions.setdefault((frame.cls, frame.type_hash), frame.description)
        if frame.iid not in self._by_iid or frame.sender in self._gone:
            return  # an interest closed meanwhile, or a late frame of a lost process
        peer = self._peer(frame.sender)
        found = self._class_of(frame.cls, frame.type_hash, peer)
        if found is None:
            return
        meta, proxy_class = found
        state = class_codec(meta).decode_properties(frame.state)
        with self._lock:
            if frame.sender in self._gone:
                return  # lost meanwhile: no object of it may appear again
            handle = peer.handles.get(frame.oid)
            if handle is None:
                send = functools.partial(self._send_call, peer)
                handle = RemoteHandle(
                    meta, proxy_class, peer.zid, frame.oid, frame.name, frame.bus, state,
                    frame.time, send,
                )  # fmt: skip
                peer.handles[frame.oid] = handle
            else:
                handle.snapshot(state, frame.time)
            if frame.iid in handle.iids:
                return
            handle.iids.add(frame.iid)
            self._deliver(frame.iid, handle, True)

    def _removed(self, peer: Peer, handle: RemoteHandle, iid: int) -> None:
        with self._lock:
            if iid not in handle.iids:
                return
            handle.iids.discard(iid)
            self._deliver(iid, handle, False)
            if handle.iids:
                return
            peer.handles.pop(handle.oid, None)
        handle.gone(ObjectGone(f"object '{handle.address}' no longer exists"))

    def _class_of(
        self, name: str, type_hash: int, peer: Peer
    ) -> tuple[ClassMeta, type[RemoteProxy]] | None:
        """The generated class of that name and hash; a class known here under another hash is
        refused (logged once per class and process); a class not imported here gets a dynamic
        proxy built from its description."""
        entry = registry.by_hash(name, type_hash)
        if entry is not None:
            return entry.meta, entry.remote_proxy
        key = (name, peer.zid)
        if registry.knows_class(name):
            if key not in self._warned:
                self._warned.add(key)
                _log.warning(
                    "type '%s' has an incompatible remote implementation (process %s)",
                    name, peer.label,
                )  # fmt: skip
            return None
        with self._lock:
            meta = self._dynamic.get((name, type_hash))
            description = self._descriptions.get((name, type_hash))
        if meta is None and description is not None:
            try:
                meta = describe.read(description)
            except describe.DescriptionError as error:
                self._warn(f"type '{name}' of process {peer.label}: {error}")
                return None
            with self._lock:
                meta = self._dynamic.setdefault((name, type_hash), meta)
            _log.info("type '%s' is not imported here: dynamic proxies for its objects", name)
        if meta is None:
            self._warn(f"type '{name}' of process {peer.label} came without its description")
            return None
        return meta, describe.dynamic_proxy(meta)

    def _send_call(
        self,
        peer: Peer,
        handle: RemoteHandle,
        proxy: RemoteProxy,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call_id: int,
    ) -> None:
        """A proxy's call, at its caller's commit."""
        codec = class_codec(handle.meta)
        setter = isinstance(member, PropertyMeta)
        try:
            if setter:
                payload = codec.encode_properties({member.stl_name: args[0]})
            else:
                payload = codec.encode_call(member.stl_name, args)
        except ValueError as error:
            proxy._receive_result(call_id, None, CallFailed("ValueError", str(error)))
            return
        data = wire.Invoke(self.zid, call_id, handle.oid, setter, payload).encode()
        peer.calls.add(call_id, proxy, member)
        if not self._put(peer, data, f"{handle.address}.{member.stl_name}"):
            peer.calls.forget({call_id})
            limit = self.settings.max_message_bytes
            text = (
                f"call of {handle.address}.{member.stl_name} needs {len(data)} bytes,"
                f" over maxMessageBytes ({limit})"
            )
            proxy._receive_result(call_id, None, CallFailed("MessageTooLarge", text))

    # -- stepping across processes (runtime.md §6.8) --------------------------------------------

    def begin(self, plan: StepPlan) -> None:
        """Opening step k on this kernel: END(k - 1) first if it was never sent (the first step,
        or just joined), then wait for the awaited kernels' END(k - 1), then hand over what they
        sent in earlier steps, in (kernel, order of sending) order."""
        previous = plan.step - 1
        self._in_set = True
        if self._last_end < previous:
            self._send_end(previous, plan.members)
        with self._steps:
            while not self._steps.wait_for(lambda: self._ends_in(plan), timeout=1.0):
                waiting = [z for z in plan.awaited if z not in self._gone]
                _log.debug("step %d waits for END(%d) of %s", plan.step, previous, waiting)
            held = [h for h in self._held if h[0] <= previous]
            self._held = [h for h in self._held if h[0] > previous]
            interests, self._end_interests = self._end_interests, []
            kernels = dict(self._kernels)
        held.sort(key=lambda h: (h[0], kernels.get(h[2], 0), h[2], h[1]))
        for _, _, sender, data in held:
            try:
                self._dispatch(wire.decode(data))
            except Exception as error:
                self._warn(f"dropped a malformed message from {sender}: {error}")
        for _, iid, zid, text in sorted(interests):
            self._open(self._peer(zid), iid, text)

    def _ends_in(self, plan: StepPlan) -> bool:
        previous = plan.step - 1
        return all(self._ends.get(z, -1) >= previous or z in self._gone for z in plan.awaited)

    def end(self, plan: StepPlan) -> None:
        """After step k's commits, whose frames are already on their way: END(k)."""
        self._send_end(plan.step, plan.members)

    def _send_end(self, step: int, members: tuple[str, ...]) -> None:
        assert self._clock is not None
        with self._lock:
            opened, self._opened = self._opened, []
        frame = wire.EndOfStep(self.zid, step, self._clock.ident, tuple(opened)).encode()
        for zid in members:
            if zid != self.zid:
                self._put(self._peer(zid), frame, "an end-of-step marker", stamp=False)
        self._last_end = step

    def _end_arrived(self, frame: wire.EndOfStep) -> None:
        with self._steps:
            self._ends[frame.sender] = max(frame.step, self._ends.get(frame.sender, -1))
            self._kernels[frame.sender] = frame.kernel
            for iid, text in frame.interests:
                self._end_interests.append((frame.kernel, iid, frame.sender, text))
            self._steps.notify_all()

    def remote_clock(self, proxy: Any) -> RemoteClock:
        """The master's handle on a kernel clock of another process (one per proxy)."""
        with self._lock:
            clock = self._remote_clocks.get(proxy)
            if clock is None:
                handle = self._handle_of(proxy)
                clock = self._remote_clocks[proxy] = RemoteClock(self, handle, proxy)
            return clock

    def _handle_of(self, proxy: RemoteProxy) -> RemoteHandle:
        endpoint = proxy._endpoint
        assert isinstance(endpoint, RemoteHandle)
        return endpoint

    def order_step(self, handle: RemoteHandle, plan: StepPlan) -> None:
        """Tell a remote kernel its plan, just ahead of the call that opens the step."""
        peer = self._peer(handle.zid)
        frame = wire.StepOrder(self.zid, plan.step, plan.members, plan.awaited)
        self._put(peer, frame.encode(), "a step order", stamp=False)

    def _warn(self, text: str) -> None:
        """At most one warning a second: a flood of bad frames must not flood the log."""
        now = time.monotonic()
        if now - self._warned_at >= 1.0:
            self._warned_at = now
            _log.warning("%s", text)


class RemoteClock:
    """A kernel clock of another process, as a master steps it (runtime.md §6.3, §6.8): its
    commands are ``[confirmed]`` calls sent at once, whose results a wait collects; the plan
    of each step travels ahead of the ``processNoFlush`` call on the same ordered stream."""

    remote = True

    def __init__(self, transport: Transport, handle: RemoteHandle, proxy: RemoteProxy) -> None:
        self._transport = transport
        self._handle = handle
        self._proxy = proxy
        self.member = handle.zid
        self.plan: StepPlan | None = None
        published = getattr(proxy, "time", None)
        self._time = published.ns if isinstance(published, TimeStamp) else 0

    @property
    def time(self) -> int:
        return self._time

    def issue_process_no_flush(self, delta: int) -> Callable[[], int]:
        if self.plan is not None:
            self._transport.order_step(self._handle, self.plan)
        self._time += delta
        wait = self._invoke("processNoFlush", (Duration(delta),))
        return lambda: _ns(wait()) or 0

    def issue_flush_outputs(self) -> Callable[[], int | None]:
        wait = self._invoke("flushOutputs", ())
        return lambda: _ns(wait())

    def process_no_flush(self, delta: int) -> int:
        return self.issue_process_no_flush(delta)()

    def flush_outputs(self) -> int | None:
        return self.issue_flush_outputs()()

    def _invoke(self, name: str, args: tuple[Any, ...]) -> Callable[[], Any]:
        proxy = self._proxy
        member = proxy.META.method(name)
        assert member is not None
        call: Call[Any] = Call(f"{proxy._address}.{name}")
        done = threading.Event()
        call.add_done_callback(lambda _: done.set())
        proxy._send_call(member, args, call, None)  # at once, not at a commit

        def wait() -> Any:
            done.wait()  # a lost process fails the call: never forever
            error = call.exception()
            if error is not None:
                _log.warning("kernel clock %s: %s failed: %s", proxy._address, name, error)
                return None
            return call.result()

        return wait


def _ns(value: Any) -> int | None:
    return value.ns if isinstance(value, Duration) else None


def _withdraw(source: Source, obj: NativeObject) -> None:
    """In the owner's drain: the object leaves the bus it lost to another process."""
    if obj.bus == source.bus:
        source.remove(obj)
