"""The ``transport`` component: every session other than ``local`` over Zenoh (runtime.md §8).

The key layout is version 2 (``link``, docs/design/transport-keys.md): all a process sends lives
under its own identity, and a receiver takes the sender's identity from the key a message came
on, never from the payload (a frame naming another sender is dropped and counted). Membership
rides on one liveliness token per process: its loss removes the process's objects everywhere and
fails the calls waiting for it. Interests and the names of published objects are frames on the
sender's ``@all`` key, announced again whenever a process joins, so that a process starting later
learns them; a constant number of Zenoh entities per process, whatever the objects and interests.
Everything else is directed to one process on the sender's ``@to/<receiver>`` key, on reliable,
blocking publishers: one ordered stream per pair of processes, in which an object's snapshot
precedes its updates, a call's result follows the updates of its commit, and the goodbye follows
the last commit. What one owner's commit shows another process is applied whole, under the lock
the subscribers' drains take (``Interests.arrivals``). Zenoh callbacks only decode and enqueue:
what this process shows another is its ``outbox``, what it holds of another's objects are
``handles``. Every table keyed by what a peer sends is bounded: peers without a liveliness token
are few and short-lived, and per peer the announced objects and open interests are capped.
Stepping with other processes is ``step_sync``; duplicate names across processes, ``name_guard``;
the session and the keys, ``link``; the hooks a secure mode uses: ``link.zenoh_config``,
``link.identity_of`` and :meth:`Transport.accepts` (docs/design/transport-keys.md).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import zenoh

from sengen.runtime import Component, RemoteProxy, RunApi
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.directory import Directory
from sengen.runtime.components.transport.faults import MALFORMED, Faults, frame_named
from sengen.runtime.components.transport.handles import (
    Calls,
    RemoteHandle,
    deliver_changes,
    deliver_column,
)
from sengen.runtime.components.transport.link import (
    ALIVE_ANY,
    ALL_ANY,
    TransportConfig,
    alive_key,
    all_key,
    identity_in,
    identity_of,
    open_session,
    parse_alive,
    to_key,
    to_me,
    undeclare,
)
from sengen.runtime.components.transport.name_guard import NameGuard
from sengen.runtime.components.transport.outbox import Outbox
from sengen.runtime.components.transport.security.guard import Guard
from sengen.runtime.components.transport.step_sync import InterestToken, RemoteClock, StepSync
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
    bulk,
    class_codec,
    describe,
    evolution,
    parse_query,
    registry,
    this_process,
)

_log = logging.getLogger("sengen.transport")

LOSS_GRACE = 0.25  # s: how long a process whose token went may still say goodbye
# Processes heard from before their token: at most this many at once, each for this long.
MAX_UNCONFIRMED = 64
UNCONFIRMED_GRACE = 5.0  # s
MAX_GONE = 4096  # processes remembered as gone (their late frames are dropped)
MAX_DYNAMIC = 1024  # classes not imported here that remote objects may bring
# Remote deliveries sort after every local component's (runner indices are small).
_REMOTE_ORDER = 1 << 40
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]")


_Step = Callable[[], None]  # a frame decoded, to apply under the arrivals lock


def _nothing() -> None:
    pass


@dataclass
class _Announced:
    iid: int
    step: int  # -1: a real-time subscriber's interest; else the step a stepped one opened it in
    count: int = 0  # this process's open subscriptions of the interest


@dataclass
class Peer:
    """Another process, as this one knows it."""

    zid: str  # its identity
    number: int
    label: str = ""  # "app/pid" once its token came
    publisher: zenoh.Publisher | None = None
    # Held around every use of ``publisher``: zenoh-python refuses a second thread's use of a
    # publisher while one blocks in a put ("Already mutably borrowed"), and owners' commits,
    # calls and the goodbye at close send from threads of their own.
    sending: threading.Lock = field(default_factory=threading.Lock)
    outbox: Outbox | None = None
    calls: Calls = field(default_factory=Calls)
    handles: dict[int, RemoteHandle] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)  # its handles share it
    closed: bool = False  # left or lost: nothing more is sent to it
    alive: bool = True  # its liveliness token seen (False: heard from before it)
    token: str = ""  # the key of that token: another under its prefix is not its own
    since: float = 0.0  # time.monotonic() when first heard from
    interests: dict[int, str] = field(default_factory=dict)  # its interests open here
    # A commit's messages awaiting its end: (message, where its items start).
    parts: list[tuple[bytes, int]] = field(default_factory=list)
    part_bytes: int = 0
    # Lines about it waiting for its token, which names it by app and pid: (level, format).
    untold: list[tuple[int, str]] = field(default_factory=list)

    def say(self, level: int, text: str) -> None:
        """Log ``text`` naming this process by ``{label}``, at once or when its token comes."""
        if self.alive:
            _log.log(level, text.replace("{label}", self.label))
        elif len(self.untold) < 16:
            self.untold.append((level, text))


def _retire(peer: Peer) -> None:
    """Undeclare the publisher of a peer now closed, unless a put on it blocks (a peer that
    stopped reading): waiting for it would hold up the loss, or the shutdown; the put then
    undeclares it when it returns (:meth:`Transport._put`)."""
    if peer.sending.acquire(blocking=False):
        try:
            if peer.publisher is not None:
                undeclare(peer.publisher)
                peer.publisher = None
        finally:
            peer.sending.release()


class Transport(Component):
    """The shipped ``transport`` component (alias ``zenoh``, ``ether``): real-time-only, it
    opens its Zenoh session in ``init`` and closes it in ``unload``."""

    config_model = TransportConfig

    def __init__(self, settings: TransportConfig | None = None) -> None:
        self.settings = settings or TransportConfig()
        self._session: zenoh.Session | None = None
        self._space: Interests | None = None
        self.zid = ""  # this process's identity (``link.identity_of``)
        self._lock = threading.RLock()
        # Taken by the subscribers' drains: a remote commit lands between two of them, whole.
        self._arrivals: threading.RLock = threading.RLock()
        self._touched: set[RemoteHandle | None] = set()  # changed by the message being applied
        self._peers: dict[str, Peer] = {}
        self._numbers = itertools.count()
        self._iids = itertools.count(1)
        self._order = itertools.count()
        self._announced: dict[Interest, _Announced] = {}
        self._by_iid: dict[int, Interest] = {}
        self._declared: list[zenoh.LivelinessToken | zenoh.Subscriber[None]] = []
        self._everyone: zenoh.Publisher | None = None  # on this process's ``@all``
        self._everyone_sending = threading.Lock()  # as ``Peer.sending``, for ``_everyone``
        # Classes not imported here, by (name, hash): the metadata read from their descriptions
        # (a description is kept only as what it reads to, bounded).
        self._dynamic: dict[tuple[str, int], ClassMeta] = {}
        # Classes imported here, by (name, hash), as the registry first matched them: found
        # once, not at every object's first frame (bounded by the classes imported).
        self._generated: dict[tuple[str, int], tuple[ClassMeta, type[RemoteProxy]]] = {}
        self.faults = Faults()  # what goes wrong on the receive path
        security = self.settings.security  # secure mode: the permissions checked at the owner
        self.guard = None if security is None else Guard(security.granted, self.faults)
        self.bytes_sent = 0
        self.bytes_received = 0
        self.forged = 0  # frames dropped for naming another sender than their key
        self.taken = 0  # remote objects taken in (a handle made)
        self._steps: StepSync | None = None  # in a virtual-time kernel (runtime.md §6.8)
        self._names: NameGuard | None = None
        self._gone: dict[str, None] = {}  # processes declared lost, oldest first
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
        self._arrivals = space.arrivals
        self._session = session = open_session(self.settings)
        self.zid = identity_of(session, self.settings)
        app = _UNSAFE_KEY.sub("_", api.get_app_name() or "sengen")
        liveliness = session.liveliness()
        clock = api.kernel_clock
        if clock is not None and not clock.self_stepping:
            self._steps = StepSync(self, clock)
            api.bus_space.clock_link = self
        self._everyone = session.declare_publisher(
            all_key(self.zid),
            congestion_control=zenoh.CongestionControl.BLOCK,
            reliability=zenoh.Reliability.RELIABLE,
        )
        self._names = names = NameGuard(
            self.zid, self._label, api.bus_space.directory, self._put_all,
            self.settings.max_message_bytes, self.settings.max_objects_per_peer, self.faults,
        )  # fmt: skip
        # Subscribers first, the token last: whoever sees the token can reach this process.
        self._declared += [
            session.declare_subscriber(ALL_ANY, self._on_frame),
            session.declare_subscriber(to_me(self.zid), self._on_frame),
            liveliness.declare_subscriber(
                ALIVE_ANY, self._guarded("a process token", self._on_alive), history=True
            ),
            liveliness.declare_token(alive_key(self.zid, os.getpid(), app)),
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
        if self.settings.security is None:
            _log.info(
                "transport open: no authentication nor access control, every peer that"
                " reaches this process's endpoints is trusted"
            )
        else:
            _log.info(
                "transport secure: identity '%s', mTLS with the certificates of '%s',"
                " permissions from '%s'",
                self.zid, self.settings.security.certificates, self.settings.security.permissions,
            )  # fmt: skip

    def run(self, api: RunApi) -> None:
        # The only work of this thread: processes whose token went without a goodbye are
        # declared lost once the grace for their last frames has passed, and processes heard
        # from without a token are forgotten.
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
            self._announced = {}
        goodbye = wire.Bye(self.zid).encode()
        for peer in peers:
            if peer.outbox is not None:
                peer.outbox.flush()  # the last commit's frames, then the goodbye after them
            self._put(peer, goodbye, "a goodbye", stamp=False)
            if peer.outbox is not None:
                peer.outbox.close_all()
        if self._names is not None:
            self._names.close()
        for entity in reversed(self._declared):
            undeclare(entity)
        self._declared.clear()
        for peer in peers:
            with self._lock:
                peer.closed = True
            _retire(peer)
        if self._everyone_sending.acquire(blocking=False):  # else the session's close does
            try:
                if self._everyone is not None:
                    undeclare(self._everyone)
            finally:
                self._everyone = None
                self._everyone_sending.release()
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
        if self._session is None:
            return
        with self._lock:
            announced = self._announced.get(interest)
            if opened:
                fresh = announced is None
                if announced is None:
                    iid = next(self._iids)
                    steps = self._steps
                    mark = steps.mark() if steps is not None else "r"
                    if steps is not None and mark != "r":  # carried by the next END too
                        steps.opened(iid, interest.text)
                    step = -1 if mark == "r" else int(mark[1:])
                    announced = self._announced[interest] = _Announced(iid, step)
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
                frame = wire.Interest(self.zid, announced.iid, True, announced.step, interest.text)
            else:
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
                fresh = True
                frame = wire.Interest(self.zid, announced.iid, False, announced.step, "")
        if fresh:
            self._put_all(frame.encode(), "an interest")

    def _announce_interests(self) -> None:
        """Every open interest again (a process joined): the ones that know it ignore it."""
        with self._lock:
            frames = [
                wire.Interest(self.zid, a.iid, True, a.step, i.text).item()
                for i, a in self._announced.items()
            ]
        if frames:
            self._put_all(wire.Batch.header(self.zid) + b"".join(frames), "interests")

    def _deliver(self, iid: int, handle: RemoteHandle, adding: bool, later: bool = False) -> None:
        """``later``: at the end of the drain after the subscriber's next one, whose refresh
        follows everything that came before, so that a cycle shows the object's last states
        before its removal (a process that left after its last commit)."""
        interest = self._by_iid.get(iid)
        if interest is None or self._space is None:
            return
        order = (_REMOTE_ORDER, next(self._order))
        for subscription in self._space.subscriptions_of(interest):
            if not subscription.discovery.forwarded:
                delivery = Delivery(adding, subscription, handle, order)
                if later:  # after a drain that began once what came before had landed
                    discovery = subscription.discovery
                    post = discovery.context.post
                    post(post, discovery.deliver, delivery, False)
                else:
                    subscription.discovery.deliver(delivery, False)
                if subscription.log is not None:
                    handle.log(subscription, adding)

    # -- other processes -----------------------------------------------------------------------

    def _admit(self, zid: str, lenient: bool = False) -> Peer | None:
        """The peer a frame came from; a process heard from before its token gets an entry
        only while few are (``MAX_UNCONFIRMED``); None for a process declared lost (unless
        ``lenient``: an announcement)."""
        with self._lock:
            peer = self._peers.get(zid)
            if peer is not None:
                return peer
            if not zid or (zid in self._gone and not lenient):
                return None
            unconfirmed = sum(1 for p in self._peers.values() if not p.alive)
            if unconfirmed >= MAX_UNCONFIRMED:
                self.faults.warn("unknown", f"dropped a message of {zid}: too many processes"
                                 " heard from without a liveliness token")  # fmt: skip
                return None
            peer = self._peers[zid] = Peer(
                zid, next(self._numbers), label=zid, alive=False, since=time.monotonic()
            )
            return peer

    def _label(self, zid: str) -> str:
        peer = self._peers.get(zid)
        return peer.label if peer is not None else zid

    def _known(self) -> list[tuple[str, str, bool]]:
        """The processes whose token arrived (their label is ``app/pid``), and whether they
        are leaving (token gone, grace running)."""
        with self._lock:
            peers = [p for p in self._peers.values() if p.alive]
            return [(p.zid, p.label, p.zid in self._losing) for p in peers]

    def _on_alive(self, sample: zenoh.Sample) -> None:
        key = str(sample.key_expr)
        parsed = parse_alive(key)
        if parsed is None or parsed[0] == self.zid:
            return
        zid, label = parsed
        if self.guard is not None and not self.guard.admits(zid):
            return  # a certificate of the CA, but nothing in the permissions file
        if sample.kind == zenoh.SampleKind.PUT:
            with self._lock:
                self._gone.pop(zid, None)
                # Its token went and came back within the grace: it may have lost this process
                # meanwhile, and with it what it held here. It gets everything again.
                peer = self._peers.get(zid)
                if peer is not None and peer.alive and peer.token not in ("", key):
                    self._forged(key, zid)  # a second token under its prefix: not its lease
                    return
                back = self._losing.pop(zid, None) is not None
                if peer is None:
                    peer = self._peers[zid] = Peer(zid, next(self._numbers))
                peer.label, peer.alive, peer.token = label, True, key
                interests = dict(peer.interests) if back else {}
                untold, peer.untold = peer.untold, []
            if self._steps is not None:
                self._steps.back(zid)
            _log.info("process %s (%s) joined", label, zid)
            for level, text in untold:
                peer.say(level, text)
            for iid, text in sorted(interests.items()):
                if peer.outbox is not None:
                    peer.outbox.close(iid)
                self._open(peer, iid, text)
            if self._names is not None:
                self._names.joined(zid)
            self._announce_interests()
            # And it announces again to this process: its announcements on joining may have
            # left before this process could hear them.
            self._put(peer, wire.Hello(self.zid).encode(), "a hello", stamp=False)
        else:
            # Its last frames and its goodbye travel on another key than the token: give
            # them a moment, so that an orderly leave is not taken for a loss.
            with self._lock:
                peer = self._peers.get(zid)
                if peer is not None and peer.token == key:
                    self._losing.setdefault(zid, time.monotonic() + LOSS_GRACE)

    def _expire_losses(self) -> None:
        now = time.monotonic()
        with self._lock:
            expired = sorted(z for z, deadline in self._losing.items() if deadline <= now)
            for zid in expired:
                del self._losing[zid]
            strangers = [
                p.zid
                for p in self._peers.values()
                if not p.alive and now - p.since > UNCONFIRMED_GRACE
            ]
        for zid in expired:
            self._lost(zid)
        for zid in strangers:
            self.faults.warn("unknown", f"forgot process {zid}: no liveliness token came")
            self._lost(zid, quiet=True)

    def _lost(self, zid: str, left: bool = False, quiet: bool = False) -> None:
        """A process left (``left``: after its last commit, whose states the subscribers'
        next drain shows before the removals) or was lost: its objects go, the calls waiting
        for it fail."""
        how = "left" if left else "lost"
        if self._steps is not None:
            self._steps.lost(zid)  # a step no longer waits for its END markers
        with self._arrivals, self._lock:
            peer = self._peers.pop(zid, None)
            if peer is None:
                return
            if not quiet:
                self._gone[zid] = None
                while len(self._gone) > MAX_GONE:
                    del self._gone[next(iter(self._gone))]
            peer.closed = True
            handles = list(peer.handles.values())
            peer.handles.clear()
            peer.parts.clear()
            for handle in handles:
                for iid in sorted(handle.iids):
                    self._deliver(iid, handle, False, later=left)
        if peer.outbox is not None:
            peer.outbox.close_all()
        if self._names is not None:
            self._names.forget(zid)
        for handle in handles:
            handle.gone(
                ObjectGone(
                    f"object '{handle.address}' no longer exists (process {peer.label} {how})"
                )
            )
        _retire(peer)
        if quiet:
            return
        if left:
            _log.info("process %s left: %d object(s) removed", peer.label, len(handles))
        else:
            _log.warning("process %s lost: %d object(s) removed", peer.label, len(handles))

    def _interest(self, peer: Peer, frame: wire.Interest) -> None:
        """Another process's interest opened or closed."""
        if self._space is None:
            return
        token = InterestToken(peer.zid, frame.iid, None if frame.step < 0 else frame.step,
                              frame.text)  # fmt: skip
        if not frame.opened:
            with self._lock:
                peer.interests.pop(frame.iid, None)
            if self._steps is not None:
                self._steps.token_gone(peer.zid, frame.iid)
            if peer.outbox is not None:
                peer.outbox.close(frame.iid)
            return
        with self._lock:
            if frame.iid in peer.interests:
                return  # announced again (a process joined)
            if len(peer.interests) >= self.settings.max_interests_per_peer:
                limit = self.settings.max_interests_per_peer
                self.faults.warn("interests", f"refused an interest of process {peer.label}:"
                                 f" over maxInterestsPerPeer ({limit})")  # fmt: skip
                return
            peer.interests[frame.iid] = frame.text
        if self._steps is None or self._steps.takes_token(token):
            self._open(peer, frame.iid, frame.text)

    def open_interest(self, zid: str, iid: int, text: str) -> None:
        peer = self._admit(zid)
        if peer is not None:
            self._open(peer, iid, text)

    def _open(self, peer: Peer, iid: int, text: str) -> None:
        try:
            query = parse_query(text)
        except (QueryError, RecursionError) as error:
            self.faults.warn(
                "interest", f"ignoring an invalid interest of process {peer.label}: {error}"
            )
            return
        if self.guard is not None and not self.guard.joins(peer.zid, query.bus or "*"):
            return  # it sees nothing of a session it may not join
        with self._lock:
            if peer.closed:
                return
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
        """To a process's stream, unstamped (the step sync's markers and orders)."""
        peer = self._admit(zid)
        if peer is not None:
            self._put(peer, data, what, stamp=False)

    def _put_all(self, data: bytes, what: str) -> None:
        """On this process's ``@all`` key: for every process."""
        if len(data) > self.settings.max_message_bytes:
            _log.error("message of %d bytes for %s exceeds maxMessageBytes (%d): not sent",
                       len(data), what, self.settings.max_message_bytes)  # fmt: skip
            return
        with self._everyone_sending:
            publisher = self._everyone
            if publisher is None:
                return  # not opened yet, or closed
            try:
                publisher.put(data)
            except zenoh.ZError:  # this session closed meanwhile
                return
        self.bytes_sent += len(data)

    def _put(
        self, peer: Peer, data: bytes, what: str | Callable[[], str], stamp: bool = True
    ) -> bool:
        """Send ``data`` on ``peer``'s stream, stamped with the step when a stepped component
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
        if peer.publisher is None:
            with self._lock:
                if peer.closed or session is None:
                    return False
                if peer.publisher is None:
                    peer.publisher = session.declare_publisher(
                        to_key(self.zid, peer.zid),
                        congestion_control=zenoh.CongestionControl.BLOCK,
                        reliability=zenoh.Reliability.RELIABLE,
                    )
        with peer.sending:
            publisher = peer.publisher
            if publisher is None:
                return False  # undeclared by ``close`` meanwhile
            try:
                publisher.put(data)
            except zenoh.ZError:  # the peer left, or this session closed, meanwhile
                return False
            finally:
                if peer.closed:  # lost while this put blocked: ``_retire`` left it to us
                    undeclare(publisher)
                    peer.publisher = None
        self.bytes_sent += len(data)
        return True

    # -- frames --------------------------------------------------------------------------------

    def _on_frame(self, sample: zenoh.Sample) -> None:
        """A Zenoh thread: the sender is whom the key names; decode, apply, enqueue. Nothing
        a peer sends may raise here."""
        key = str(sample.key_expr)
        sender = identity_in(key)
        if sender == self.zid:
            return
        data = sample.payload.to_bytes()
        self.bytes_received += len(data)
        if len(data) > self.settings.max_message_bytes:
            text = f"dropped a message of {len(data)} bytes on {key} (over maxMessageBytes)"
            self.faults.warn("large message", text)
            return
        claimed = wire.sender_of(data)
        if claimed and claimed != sender:
            self._forged(key, claimed)
            return
        if key.endswith("/@all"):
            self._announced_by(sender, data)
        else:
            self.handle_frame(sender, data)

    def _announced_by(self, sender: str, data: bytes) -> None:
        """A message on a process's ``@all`` key: interests and names, nothing else. Taken from
        any process heard of, even one declared lost: one coming back may announce before its
        token is seen again (a stranger is bounded, and forgotten without a token)."""
        try:
            frame = wire.decode(data)
            peer = self._admit(sender, lenient=True)
            if peer is None:
                return
            frames: list[wire.Frame] = [frame]
            if type(frame) is wire.Batch:
                frames = [wire.read_item(sender, k, data[b:e]) for k, b, e in frame.items()]
            for announcement in frames:
                if isinstance(announcement, wire.Interest):
                    self._interest(peer, announcement)
                elif isinstance(announcement, wire.Names) and self._names is not None:
                    # Names on a bus it may not publish on would only block its owners' names.
                    if self.guard is None or self.guard.publishes(peer.zid, announcement.bus):
                        self._names.names(announcement, peer.alive)
                else:
                    kind = frame_named(type(announcement).__name__)
                    self.faults.warn("announcement", f"dropped {kind} sent to every process")
        except MALFORMED as error:
            text = f"dropped a malformed announcement{self._origin(sender)}: {error}"
            self.faults.warn("message", text)
        except Exception as error:  # a bug: logged with its traceback, keep running
            self.faults.failed("an announcement", error, self._origin(sender))

    def handle_frame(self, sender: str, data: bytes) -> None:
        """Decode and apply a frame of ``sender`` (whom its key names; "" for a frame this
        process checked already); nothing a peer sends may raise here: a malformed frame is
        dropped with a warning, a failure handling a well-formed one is logged with its cause
        (:class:`Faults`)."""
        frame: wire.Frame | None = None
        try:
            frame = wire.decode(data)
            if sender and frame.sender != sender:
                self._forged(sender, frame.sender)
                return
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

    def _forged(self, key: str, claimed: str) -> None:
        self.forged += 1
        self.faults.warn("forged", f"dropped a message on {key} claiming to come from {claimed!r}")

    def _dispatch(self, frame: wire.Frame) -> None:
        if isinstance(frame, wire.Stamped):  # no clock here: the stamp does not matter
            inner = wire.decode(frame.inner)
            if inner.sender != frame.sender:
                self._forged(frame.sender, inner.sender)
                return
            self._dispatch(inner)
            return
        sender = frame.sender
        if isinstance(frame, wire.Bye):  # from the owner itself: its key names it
            with self._lock:
                self._losing.pop(sender, None)
            self._lost(sender, left=True)
            return
        peer = self._admit(sender)
        if peer is None:
            if isinstance(frame, wire.Invoke):
                self._refuse_call(sender, frame.call_id)
            return  # from a process already declared lost
        if isinstance(frame, wire.Part):
            self._hold_part(peer, frame)
        elif isinstance(frame, wire.Batch):
            parts, peer.parts, peer.part_bytes = peer.parts, [], 0
            # A commit of several messages may publish many objects at once.
            with bulk(bool(parts)) as made:
                taken = self.taken
                steps = [s for data, start in parts for s in self._prepare(peer, data, start)]
                steps += self._prepare(peer, frame.data, frame.start)
                self._apply(sender, steps)
                made[0] += self.taken - taken
        else:
            self._apply(sender, [(frame.KIND, self._step(peer, frame))])

    def _hold_part(self, peer: Peer, frame: wire.Part) -> None:
        """A commit's message that another ends: held, within bounds (beyond them, what is
        held is applied at once: the commit shows in pieces, nothing is lost)."""
        peer.parts.append((frame.data, frame.start))
        peer.part_bytes += len(frame.data)
        if peer.part_bytes > 4 * self.settings.max_message_bytes:
            self.faults.warn("commit", f"a commit of process {peer.label} is applied in"
                             f" pieces: over {peer.part_bytes} bytes")  # fmt: skip
            parts, peer.parts, peer.part_bytes = peer.parts, [], 0
            steps = [s for data, start in parts for s in self._prepare(peer, data, start)]
            self._apply(peer.zid, steps)

    def _one(self, peer: Peer, frame: wire.Frame) -> None:
        """A frame of ``peer`` (a batch's item, or a message of its own), under the arrivals
        lock."""
        if isinstance(frame, wire.EndOfStep):
            if self._steps is not None:
                self._steps.end_arrived(frame)
        elif isinstance(frame, wire.StepOrder):
            if self._steps is not None:
                self._steps.ordered(frame)
        elif isinstance(frame, wire.Added):
            self._added(peer, frame)()
        elif isinstance(frame, wire.Interest | wire.Names):
            return  # only on the sender's ``@all`` key (``_announced_by``)
        elif isinstance(frame, wire.Hello):
            self._announce_interests()
            if self._names is not None:
                self._names.again()
        elif isinstance(frame, wire.Result):
            peer.calls.answered(frame)  # only a call sent to this very process
        elif isinstance(frame, wire.Invoke):
            if not self.accepts(peer.zid, frame):
                return
            if peer.outbox is None:  # it holds none of our objects
                self._refuse_call(peer.zid, frame.call_id, peer)
            else:
                peer.outbox.invoke(frame)
        elif isinstance(frame, wire.Changes):
            self._changes(frame.sender, frame.time, frame.oids, frame.states)
        elif isinstance(frame, wire.Column):
            self._column(
                frame.sender, frame.time, frame.oids, frame.member, frame.size, frame.values
            )
        elif isinstance(frame, wire.Bye | wire.Batch | wire.Part | wire.Stamped):
            self._dispatch(frame)
        else:
            handle = peer.handles.get(frame.oid)
            if handle is None:
                return
            if isinstance(frame, wire.Emitted):
                name, args = class_codec(handle.meta).decode_event(frame.event)
                handle.emitted(name, args, frame.time)
            else:
                self._removed(peer, handle, frame.iid)

    def accepts(self, zid: str, frame: wire.Invoke) -> bool:
        """The owner's one point where a remote call or property write is accepted: plain mode
        accepts every one (every peer is trusted); secure mode checks its permissions here, and
        answers a refused call with the refusal."""
        guard = self.guard
        peer = self._peers.get(zid)
        if guard is None or peer is None or peer.outbox is None:
            return True
        target = peer.outbox.target(frame.oid)
        if target is None:
            return True  # answered as unknown on the way
        refusal = guard.invoke_refusal(zid, target.META, frame.setter, frame.payload)
        if refusal is None:
            return True
        peer.outbox.reply(frame.call_id, None, None, refusal)
        return False

    def _refuse_call(self, zid: str, call_id: int, peer: Peer | None = None) -> None:
        """A call that will not be served is answered, so that its caller does not wait."""
        text = "the call will not be served: the object is not known here"
        reply = wire.Result(self.zid, call_id, wire.GONE, "ObjectGone", text, b"").encode()
        if peer is not None:
            self._put(peer, reply, "a call result")
            return
        session = self._session
        if session is not None:
            with contextlib.suppress(zenoh.ZError):  # this session closed meanwhile
                session.put(to_key(self.zid, zid), reply)

    def _prepare(self, peer: Peer, data: bytes, start: int) -> list[tuple[int, _Step]]:
        """The frames of one message, decoded outside the arrivals lock (an object's class and
        state read too), as steps that :meth:`_apply` runs under it; a frame that fails is
        dropped alone."""
        sender = peer.zid
        steps: list[tuple[int, _Step]] = []
        items = wire.items_of(data, start)
        while True:
            try:
                kind, begin, end = next(items)
            except StopIteration:
                return steps
            except MALFORMED as error:  # the frames before it stand
                self._malformed(sender, len(data), error)
                return steps
            try:
                if kind == wire.Column.KIND:  # the hot path: no frame object is built
                    column = wire.Column.split(data, begin, end)
                    steps.append((kind, functools.partial(self._column, sender, *column)))
                elif kind == wire.Changes.KIND:
                    split = wire.Changes.split(data, begin, end)
                    steps.append((kind, functools.partial(self._changes, sender, *split)))
                else:
                    frame = wire.read_item(sender, kind, data[begin:end])
                    steps.append((kind, self._step(peer, frame)))
            except MALFORMED as error:  # drop it, keep the others
                self._malformed(sender, end - begin, error)
            except Exception as error:  # a bug: logged with its traceback, keep the others
                what = frame_named(wire.kind_name(kind))
                self.faults.failed(what, error, self._origin(sender))

    def _step(self, peer: Peer, frame: wire.Frame) -> _Step:
        if isinstance(frame, wire.Added):
            return self._added(peer, frame)
        return functools.partial(self._one, peer, frame)

    def _apply(self, sender: str, steps: list[tuple[int, _Step]]) -> None:
        """What one commit of a peer brings, under the lock the subscribers' drains take: a
        drain sees all of it or none of it."""
        with self._arrivals:
            self._touched.clear()
            for kind, step in steps:
                try:
                    step()
                except MALFORMED as error:
                    self._malformed(sender, 0, error)
                except Exception as error:  # a bug: logged with its traceback, keep the others
                    self.faults.failed(
                        frame_named(wire.kind_name(kind)), error, self._origin(sender)
                    )

    def _malformed(self, sender: str, size: int, error: Exception) -> None:
        origin = self._origin(sender)
        text = f"dropped a malformed frame ({size} bytes) of a batch: {error}"
        self.faults.warn("frame", f"{text} ({origin.lstrip()})" if origin else text)

    def _changes(
        self, sender: str, time: int, oids: Iterable[int], states: Iterable[bytes]
    ) -> None:
        """One remote commit's changes: each to the object this process holds."""
        held = self._holding(sender, oids)
        if held is not None:
            deliver_changes(held[0].lock, held[1], states, time)

    def _column(
        self, sender: str, time: int, oids: Sequence[int], member: int, width: int, values: bytes
    ) -> None:
        """One remote commit's changes of one fixed-size property: to the objects held here."""
        held = self._holding(sender, oids)
        if held is not None:
            deliver_column(held[0].lock, held[1], member, width, values, time)

    def _holding(
        self, sender: str, oids: Iterable[int]
    ) -> tuple[Peer, list[RemoteHandle | None]] | None:
        """The handles of a commit's objects (None for one not held here), noted as touched by
        the message; None from a process already declared lost."""
        peer = self._peers.get(sender)
        if peer is None:
            return None
        handles = list(map(peer.handles.get, oids))
        self._touched.update(handles)
        return peer, handles

    def _added(self, peer: Peer, frame: wire.Added) -> _Step:
        """Objects' first frame: their class found (or read from its description) and their
        states decoded now, outside the arrivals lock; taken in by the step returned. A state
        that does not decode is dropped alone."""
        if peer.closed:
            return _nothing  # a late frame of a lost process
        if self.guard is not None and not self.guard.publishes(peer.zid, frame.bus):
            return _nothing  # a bus it may not publish on: its objects reach no one here
        if frame.iid not in self._by_iid:  # an interest closed meanwhile: its class read still
            if frame.description:
                self._class_of(frame.cls, frame.type_hash, peer, frame.description)
            return _nothing
        found = self._class_of(frame.cls, frame.type_hash, peer, frame.description)
        if found is None:
            return _nothing
        meta, proxy_class = found
        decode = class_codec(meta).decode_state
        objects: list[tuple[int, str, dict[str, Any]]] = []
        for oid, name, state in zip(frame.oids, frame.names, frame.states, strict=True):
            try:
                objects.append((oid, name, decode(state)))
            except MALFORMED as error:
                self._malformed(peer.zid, len(state), error)
        return functools.partial(self._take_in, peer, frame, meta, proxy_class, objects)

    def _take_in(
        self,
        peer: Peer,
        frame: wire.Added,
        meta: ClassMeta,
        proxy_class: type[RemoteProxy],
        objects: list[tuple[int, str, dict[str, Any]]],
    ) -> None:
        iid, bus, time = frame.iid, frame.bus, frame.time
        with self._lock:
            if peer.closed:
                return  # lost meanwhile: no object of it may appear again
            if iid not in self._by_iid:
                return  # the interest closed meanwhile: nothing may hold the object for it
            handles = peer.handles
            send = functools.partial(self._send_call, peer)
            for oid, name, state in objects:
                handle = handles.get(oid)
                if handle is None:
                    if len(handles) >= self.settings.max_objects_per_peer:
                        limit = self.settings.max_objects_per_peer
                        text = f"over maxObjectsPerPeer ({limit})"
                        self.faults.warn(
                            "objects", f"refused an object of process {peer.label}: {text}"
                        )
                        continue
                    handle = RemoteHandle(
                        meta, proxy_class, peer.zid, oid, name, bus, state, time, send, peer.lock
                    )
                    handles[oid] = handle
                    self.taken += 1
                else:
                    handle.snapshot(state, time)
                if iid not in handle.iids:
                    handle.iids.add(iid)
                    self._deliver(iid, handle, True)

    def _removed(self, peer: Peer, handle: RemoteHandle, iid: int) -> None:
        with self._lock:
            if iid not in handle.iids:
                return
            handle.iids.discard(iid)
            # Changes of an earlier message a drain has not shown yet are shown first; those
            # of this message (which may be why it stops matching) go with the removal.
            later = handle not in self._touched and any(p._unread_() for p in handle.proxies)
            self._deliver(iid, handle, False, later)
            if handle.iids:
                return
            peer.handles.pop(handle.oid, None)
        handle.gone(ObjectGone(f"object '{handle.address}' no longer exists"))

    def _class_of(
        self, name: str, type_hash: int, peer: Peer, description: bytes
    ) -> tuple[ClassMeta, type[RemoteProxy]] | None:
        """The generated class of that name and hash; a class known here under another hash is
        refused (logged once per class and process); a class not imported here gets a dynamic
        proxy built from its description (sent with the first object of the class)."""
        found = self._generated.get((name, type_hash))
        if found is not None:
            return found
        entry = registry.by_hash(name, type_hash)
        if entry is not None:
            found = self._generated[(name, type_hash)] = (entry.meta, entry.remote_proxy)
            return found
        if registry.knows_class(name):  # another version: adapted or refused (evolution.md)
            return evolution.adapt(
                name, type_hash, description, peer.zid, lambda: peer.label, peer.say
            )
        with self._lock:
            meta = self._dynamic.get((name, type_hash))
        if meta is None and description:
            try:
                meta = describe.read(description)
            except (describe.DescriptionError, RecursionError) as error:
                self.faults.warn("type", f"type '{name}' of process {peer.label}: {error}")
                return None
            with self._lock:
                if len(self._dynamic) >= MAX_DYNAMIC:
                    text = f"{MAX_DYNAMIC} classes not imported here already"
                    self.faults.warn("type", f"type '{name}' of process {peer.label}: {text}")
                    return None
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
