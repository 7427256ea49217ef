"""The ``transport`` component: every session other than ``local`` over Zenoh (runtime.md §8).

Membership rides on Zenoh liveliness tokens: one per process (its loss removes the process's
objects everywhere and fails the calls waiting for it) and one per interest, under the interest's
bus, whose key carries the query, so that a producer that starts later still receives every
interest (liveliness history) and sees it go when the subscriber closes it or dies. Everything
else is directed to a process's inbox key on reliable, blocking publishers: one ordered stream
per pair of processes, in which an object's snapshot precedes its updates and a call's result
follows the updates of its commit. Zenoh callbacks only decode and enqueue: what this process
shows another is its ``outbox``, what it holds of another's objects are ``handles``. Stepping
with other processes is ``step_sync``; duplicate names across processes, ``name_guard``; the
session and the keys, ``link``.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import zenoh

from sengen.runtime import Component, RemoteProxy, RunApi
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.directory import Directory
from sengen.runtime.components.transport.faults import MALFORMED, Faults, frame_named
from sengen.runtime.components.transport.handles import Calls, RemoteHandle, deliver_changes
from sengen.runtime.components.transport.link import (
    PREFIX,
    TransportConfig,
    interest_key,
    open_session,
    parse_interest,
    undeclare,
)
from sengen.runtime.components.transport.name_guard import NameGuard
from sengen.runtime.components.transport.outbox import Outbox
from sengen.runtime.components.transport.step_sync import RemoteClock, StepSync
from sengen.runtime.errors import CallFailed, ObjectGone
from sengen.runtime.kernel.extension import (
    BusSpace,
    ClassMeta,
    Delivery,
    Interest,
    Interests,
    MethodMeta,
    PropertyMeta,
    QueryError,
    Subscription,
    class_codec,
    describe,
    parse_query,
    registry,
    this_process,
)

_log = logging.getLogger("sengen.transport")

LOSS_GRACE = 0.25  # s: how long a process whose token went may still say goodbye
# Remote deliveries sort after every local component's (runner indices are small).
_REMOTE_ORDER = 1 << 40
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]")


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
    lock: threading.Lock = field(default_factory=threading.Lock)  # its handles share it
    closed: bool = False  # left or lost: nothing more is sent to it


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
        self.faults = Faults()  # what goes wrong on the receive path
        self.bytes_sent = 0
        self.bytes_received = 0
        self._steps: StepSync | None = None  # in a virtual-time kernel (runtime.md §6.8)
        self._names: NameGuard | None = None
        self._gone: set[str] = set()  # processes declared lost
        self._losing: dict[str, float] = {}  # token gone, no goodbye yet: lost at the deadline
        self._remote_clocks: dict[RemoteProxy, RemoteClock] = {}
        self._bus_space: BusSpace | None = None
        self._directory: Directory | None = None

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
        clock = api.kernel_clock
        if clock is not None and not clock.self_stepping:
            self._steps = StepSync(self, clock)
            api.bus_space.clock_link = self
        self._names = names = NameGuard(session, self.zid, self._label, api.bus_space.directory)
        self._declared += [
            liveliness.declare_subscriber(
                f"{PREFIX}/@proc/*/*/*",
                self._guarded("a process token", self._on_process),
                history=True,
            ),
            liveliness.declare_subscriber(
                f"{PREFIX}/*/*/@interest/*/*/*/*",
                self._guarded("an interest token", self._on_interest),
                history=True,
            ),
            liveliness.declare_subscriber(
                f"{PREFIX}/*/*/@obj/*/*/*",
                self._guarded("an object token", names.announced),
                history=True,
            ),
            session.declare_subscriber(f"{PREFIX}/@inbox/{self.zid}", self._on_frame),
            liveliness.declare_token(f"{PREFIX}/@proc/{self.zid}/{os.getpid()}/{app}"),
        ]
        space.listener = self._on_subscription
        for subscription in space.subscriptions():  # opened before the session was
            self._on_subscription(subscription, True)
        api.bus_space.publication_listener = names.published
        space_of = api.bus_space
        self._directory = Directory(
            session,
            self.zid,
            lambda component: this_process(
                api.get_app_name(), api.fetch_monitoring_info(), component
            ),
            space_of.owner_of,
            self._known,
        )
        space_of.processes = self._directory
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
            self._bus_space.processes = None
        if self._directory is not None:
            self._directory.close()
            self._directory = None
        with self._lock:
            peers, self._peers = list(self._peers.values()), {}
            announced, self._announced = list(self._announced.values()), {}
        goodbye = wire.Bye(self.zid).encode()
        for peer in peers:
            self._put(peer, goodbye, "a goodbye", stamp=False)
            if peer.outbox is not None:
                peer.outbox.close_all()
        if self._names is not None:
            self._names.close()
        for entity in [*(a.token for a in announced), *reversed(self._declared)]:
            undeclare(entity)
        self._declared.clear()
        for peer in peers:
            with self._lock:
                peer.closed = True
            if peer.publisher is not None:
                undeclare(peer.publisher)
        if self._session is not None:
            self._session.close()  # type: ignore[no-untyped-call]
            self._session = None

    # -- this process's interests --------------------------------------------------------------

    def _on_subscription(self, subscription: Subscription, opened: bool) -> None:
        """A local subscription opened or closed (any thread): announce its interest while
        any local subscription holds it; a new subscription also gets the remote matches."""
        if subscription.discovery.forwarded or subscription.interest.bus.startswith("local."):
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
                    steps = self._steps
                    mark = steps.mark() if steps is not None else "r"
                    if steps is not None and mark != "r":  # carried by the next END too
                        steps.opened(iid, interest.text)
                    key = interest_key(interest, self.zid, iid, mark)
                    token = session.liveliness().declare_token(key)
                    announced = self._announced[interest] = _Announced(iid, token)
                    self._by_iid[iid] = interest
                announced.count += 1
                held = [h for p in self._peers.values() for h in p.handles.values()]
                for handle in held:
                    if announced.iid in handle.iids:
                        order = (_REMOTE_ORDER, next(self._order))
                        delivery = Delivery(True, subscription, handle, order)
                        subscription.discovery.deliver(delivery, False)
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
        undeclare(announced.token)

    def _deliver(self, iid: int, handle: RemoteHandle, adding: bool) -> None:
        interest = self._by_iid.get(iid)
        if interest is None or self._space is None:
            return
        order = (_REMOTE_ORDER, next(self._order))
        for subscription in self._space.subscriptions_of(interest):
            if not subscription.discovery.forwarded:
                delivery = Delivery(adding, subscription, handle, order)
                subscription.discovery.deliver(delivery, False)
                if subscription.log is not None:
                    handle.log(subscription, adding)

    # -- other processes -----------------------------------------------------------------------

    def _peer(self, zid: str) -> Peer:
        with self._lock:
            peer = self._peers.get(zid)
            if peer is None:
                peer = self._peers[zid] = Peer(zid, next(self._numbers), label=zid)
            return peer

    def _label(self, zid: str) -> str:
        return self._peer(zid).label

    def _known(self) -> list[tuple[str, str, bool]]:
        """The processes whose token arrived (their label is ``app/pid``), and whether they
        are leaving (token gone, grace running)."""
        with self._lock:
            peers = [p for p in self._peers.values() if "/" in p.label]
            return [(p.zid, p.label, p.zid in self._losing) for p in peers]

    def _on_process(self, sample: zenoh.Sample) -> None:
        parts = str(sample.key_expr).split("/")
        if len(parts) != 6 or parts[3] == self.zid:
            return
        zid, label = parts[3], f"{parts[5]}/{parts[4]}"
        if sample.kind == zenoh.SampleKind.PUT:
            with self._lock:
                self._gone.discard(zid)
                self._losing.pop(zid, None)
            if self._steps is not None:
                self._steps.back(zid)
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
        if self._steps is not None:
            self._steps.lost(zid)  # a step no longer waits for its END markers
        with self._lock:
            self._gone.add(zid)
            peer = self._peers.pop(zid, None)
            if peer is None:
                return
            peer.closed = True
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
            undeclare(peer.publisher)
        if left:
            _log.info("process %s left: %d object(s) removed", peer.label, len(handles))
        else:
            _log.warning("process %s lost: %d object(s) removed", peer.label, len(handles))

    def _on_interest(self, sample: zenoh.Sample) -> None:
        token = parse_interest(str(sample.key_expr))
        if token is None or token.zid == self.zid or self._space is None:
            return
        peer = self._peer(token.zid)
        if sample.kind != zenoh.SampleKind.PUT:
            if self._steps is not None:
                self._steps.token_gone(token.zid, token.iid)
            if peer.outbox is not None:
                peer.outbox.close(token.iid)
            return
        if self._steps is None or self._steps.takes_token(token):
            self._open(peer, token.iid, token.text)

    def open_interest(self, zid: str, iid: int, text: str) -> None:
        self._open(self._peer(zid), iid, text)

    def _open(self, peer: Peer, iid: int, text: str) -> None:
        try:
            query = parse_query(text)
        except QueryError as error:
            self.faults.warn(
                "interest", f"ignoring an invalid interest of process {peer.label}: {error}"
            )
            return
        with self._lock:
            if peer.outbox is None:
                send = functools.partial(self._put, peer)
                limit = self.settings.max_message_bytes
                peer.outbox = Outbox(self.zid, self._space_of(), send, limit)
            outbox = peer.outbox
        outbox.open(iid, query)

    def _space_of(self) -> Interests:
        assert self._space is not None
        return self._space

    def send(self, zid: str, data: bytes, what: str) -> None:
        """To a process's inbox, unstamped (the step sync's markers and orders)."""
        self._put(self._peer(zid), data, what, stamp=False)

    def _put(
        self, peer: Peer, data: bytes, what: str | Callable[[], str], stamp: bool = True
    ) -> bool:
        """Send ``data`` to ``peer``'s inbox, stamped with the step when a stepped component
        sends it during a master's step; False (logged) when it is over the size limit."""
        if stamp and self._steps is not None:
            data = self._steps.stamp(data)
        limit = self.settings.max_message_bytes
        if len(data) > limit:
            _log.error(
                "message of %d bytes for %s exceeds maxMessageBytes (%d): not sent",
                len(data), what() if callable(what) else what, limit,
            )  # fmt: skip
            return False
        session = self._session
        publisher = peer.publisher
        if publisher is None:
            with self._lock:
                if peer.closed or session is None:
                    return False
                if peer.publisher is None:
                    peer.publisher = session.declare_publisher(
                        f"{PREFIX}/@inbox/{peer.zid}",
                        congestion_control=zenoh.CongestionControl.BLOCK,
                        reliability=zenoh.Reliability.RELIABLE,
                    )
                publisher = peer.publisher
        try:
            publisher.put(data)
        except zenoh.ZError:  # the peer left, or this session closed, meanwhile
            return False
        self.bytes_sent += len(data)
        return True

    # -- frames --------------------------------------------------------------------------------

    def _on_frame(self, sample: zenoh.Sample) -> None:
        """A Zenoh thread: decode, then only enqueue. Nothing a peer sends may raise here."""
        data = sample.payload.to_bytes()
        self.bytes_received += len(data)
        if len(data) > self.settings.max_message_bytes:
            text = f"dropped a message of {len(data)} bytes (over maxMessageBytes)"
            self.faults.warn("large message", text)
            return
        self.handle_frame("", data)

    def handle_frame(self, sender: str, data: bytes) -> None:
        """Decode and apply a frame; nothing a peer sends may raise here: a malformed frame is
        dropped with a warning, a failure handling a well-formed one is logged with its cause
        (:class:`Faults`)."""
        frame: wire.Frame | None = None
        try:
            frame = wire.decode(data)
            if isinstance(frame, wire.Stamped) and self._steps is not None:
                self._steps.hold(frame)  # until the hand-over that opens step frame.step + 1
                return
            self._dispatch(frame)
        except MALFORMED as error:  # drop it, keep running
            origin = self._origin(sender or wire.sender_of(data))
            text = f"dropped a malformed message{origin} ({len(data)} bytes): {error}"
            self.faults.warn("message", text)
        except Exception as error:  # a bug: logged with its traceback, keep running
            if frame is None:
                self.faults.failed("a message", error, self._origin(sender))
            else:
                what = frame_named(type(frame).__name__)
                self.faults.failed(what, error, self._origin(sender or frame.sender))

    def _dispatch(self, frame: wire.Frame) -> None:
        if isinstance(frame, wire.Batch):
            self._batch(frame)
            return
        if isinstance(frame, wire.Stamped):  # no clock here: the stamp does not matter
            self._dispatch(wire.decode(frame.inner))
            return
        if isinstance(frame, wire.EndOfStep):
            if self._steps is not None:
                self._steps.end_arrived(frame)
            return
        if isinstance(frame, wire.Bye):
            with self._lock:
                self._losing.pop(frame.sender, None)
            self._lost(frame.sender, left=True)
            return
        if isinstance(frame, wire.StepOrder):
            if self._steps is not None:
                self._steps.ordered(frame)
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
        elif isinstance(frame, wire.Changes):
            self._changes(frame.sender, frame.time, frame.oids, frame.states)
        else:
            handle = peer.handles.get(frame.oid)
            if handle is None:
                return
            if isinstance(frame, wire.Emitted):
                name, args = class_codec(handle.meta).decode_event(frame.event)
                handle.emitted(name, args, frame.time)
            else:
                self._removed(peer, handle, frame.iid)

    def _batch(self, batch: wire.Batch) -> None:
        """The frames of one message in order; a frame that fails is dropped alone."""
        sender, data = batch.sender, batch.data
        for kind, start, end in batch.items():
            try:
                if kind == wire.Changes.KIND:  # the hot path: no frame object is built
                    self._changes(sender, *wire.Changes.split(data, start, end))
                else:
                    self._dispatch(wire.read_item(sender, kind, data[start:end]))
            except MALFORMED as error:  # drop it, keep the others
                origin = self._origin(sender)
                text = f"dropped a malformed frame ({end - start} bytes) of a batch: {error}"
                self.faults.warn("frame", f"{text} ({origin.lstrip()})" if origin else text)
            except Exception as error:  # a bug: logged with its traceback, keep the others
                what = frame_named(wire.kind_name(kind))
                self.faults.failed(what, error, self._origin(sender))

    def _changes(
        self, sender: str, time: int, oids: Iterable[int], states: Iterable[bytes]
    ) -> None:
        """One remote commit's changes: each to the object this process holds."""
        peer = self._peers.get(sender)
        if peer is None:
            return  # from a process already declared lost
        deliver_changes(peer.lock, map(peer.handles.get, oids), states, time)

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
            if frame.iid not in self._by_iid:
                return  # the interest closed meanwhile: nothing may hold the object for it
            handle = peer.handles.get(frame.oid)
            if handle is None:
                send = functools.partial(self._send_call, peer)
                handle = RemoteHandle(
                    meta, proxy_class, peer.zid, frame.oid, frame.name, frame.bus, state,
                    frame.time, send, peer.lock,
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
                self.faults.warn("type", f"type '{name}' of process {peer.label}: {error}")
                return None
            with self._lock:
                meta = self._dynamic.setdefault((name, type_hash), meta)
            _log.info("type '%s' is not imported here: dynamic proxies for its objects", name)
        if meta is None:
            text = f"type '{name}' of process {peer.label} came without its description"
            self.faults.warn("type", text)
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
            proxy._receive_result_(call_id, None, CallFailed("ValueError", str(error)))
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
            proxy._receive_result_(call_id, None, CallFailed("MessageTooLarge", text))

    def remote_clock(self, proxy: Any) -> RemoteClock:
        """For a master here: the kernel clock of another process behind ``proxy``."""
        with self._lock:
            clock = self._remote_clocks.get(proxy)
            if clock is None:
                handle = proxy._endpoint_
                assert isinstance(handle, RemoteHandle)
                clock = self._remote_clocks[proxy] = RemoteClock(self, handle, proxy)
            return clock

    def _origin(self, zid: str) -> str:
        """Whence a message came, to say so in a log line ("" when not known)."""
        if not zid:
            return ""
        peer = self._peers.get(zid)
        return f" from process {peer.label if peer is not None else zid}"

    def _guarded(
        self, what: str, handler: Callable[[zenoh.Sample], None]
    ) -> Callable[[zenoh.Sample], None]:
        """``handler`` as a Zenoh callback: a failure is logged with its cause, not raised into
        Zenoh's thread."""

        def callback(sample: zenoh.Sample) -> None:
            try:
                handler(sample)
            except Exception as error:  # a bug: logged with its traceback, keep running
                self.faults.failed(what, error)

        return callback
