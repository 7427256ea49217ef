"""Other processes' objects by name: duplicates (runtime.md §3.13) and detected buses.

The objects a source of this process publishes on a bus that travels are announced in
``wire.Names`` frames on the process's ``@all`` key, batched (one frame per bus for what was
published and withdrawn since the last one, sent by a thread of this guard as soon as it can),
each name with its registration wall time; everything again when a process joins, so that it
learns them. No Zenoh declaration per object: the cost is a frame per batch, not a token per
object. When another process announces the same name on the same bus, the earlier registration
keeps the name (ties: the lower process id); the other owner withdraws its object from the bus,
in its own drain; both processes log an error naming the object and the other process, once.
A process heard from before its liveliness token is checked once the token comes (so that the
error names it by app and pid). What a peer may announce is bounded (``maxObjectsPerPeer``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sengen.runtime import NativeObject
from sengen.runtime.components.transport import wire
from sengen.runtime.components.transport.faults import Faults
from sengen.runtime.kernel.extension import BusDirectory, Source

_log = logging.getLogger("sengen.transport")

_BATCH_BYTES = 1 << 18  # a names message goes before it would pass this


@dataclass
class _Published:
    """An object of this process on a bus that travels."""

    obj: NativeObject
    source: Source
    registered: int  # wall time of the registration, ns
    withdrawn: bool = False


@dataclass
class _Holder:
    """What one other process announced: by bus, each name's registration time."""

    buses: dict[str, dict[str, int]] = field(default_factory=dict)
    count: int = 0
    alive: bool = False  # its token came: duplicates with it are reported


class NameGuard:
    def __init__(
        self,
        me: str,
        label: Callable[[str], str],
        directory: BusDirectory,
        send: Callable[[bytes, str], None],
        max_bytes: int,
        max_per_peer: int,
        faults: Faults,
    ) -> None:
        self._me = me
        self._label = label  # a process's name for the log, from its id
        self._directory = directory  # other processes' objects make their buses detected
        self._send = send  # on this process's ``@all`` key
        self._max_bytes = min(max_bytes, _BATCH_BYTES)
        self._max_per_peer = max_per_peer
        self._faults = faults
        self._lock = threading.Lock()
        self._published: dict[tuple[str, str], _Published] = {}
        self._holders: dict[str, _Holder] = {}
        self._reported: set[tuple[str, str, str]] = set()  # (bus, name, process)
        # Announcements waiting for the sender thread, in order: (bus, added (name, time),
        # withdrawn). A receiver applies a frame's withdrawals before its additions, so a name
        # added then withdrawn before the thread ran goes in two segments (``_segment``).
        self._pending: list[tuple[str, list[tuple[str, int]], list[str]]] = []
        self._everything = False  # a process joined: announce all that is published
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="sengen-names", daemon=True)
        self._thread.start()

    # -- this process's objects ----------------------------------------------------------------

    def published(self, source: Source, objects: list[NativeObject], added: bool) -> None:
        """A source of this process added or removed objects (on its owner's thread)."""
        bus = source.bus
        if bus.startswith("local."):
            return
        with self._lock:
            if added:
                registered = time.time_ns()
                names = self._segment(bus, None)[1]
                for obj in objects:
                    self._published[(bus, obj.name)] = _Published(obj, source, registered)
                    names.append((obj.name, registered))
            else:
                for obj in objects:
                    published = self._published.get((bus, obj.name))
                    if published is None or published.obj is not obj:
                        continue
                    del self._published[(bus, obj.name)]
                    self._segment(bus, obj.name)[2].append(obj.name)
            self._wake.notify()
            # Only names another process announced on this bus can clash.
            held = added and any(h.alive and bus in h.buses for h in self._holders.values())
        if held:
            for obj in objects:
                self._check((bus, obj.name))

    def _segment(
        self, bus: str, withdrawing: str | None
    ) -> tuple[str, list[tuple[str, int]], list[str]]:
        """The pending segment of ``bus`` to append to (under the lock): a new one when
        ``withdrawing`` a name the last one adds, which the receiver would otherwise keep.
        The name is announced all the same: whoever registered it earlier logs the clash."""
        last = next((p for p in reversed(self._pending) if p[0] == bus), None)
        if last is None or (withdrawing is not None and any(withdrawing == n for n, _ in last[1])):
            last = (bus, [], [])
            self._pending.append(last)
        return last

    def joined(self, zid: str) -> None:
        """A process's token came: what it announced is checked now that it has a name, and it
        learns everything this process publishes."""
        with self._lock:
            holder = self._holders.setdefault(zid, _Holder())
            holder.alive = True
            keys = [(bus, name) for bus, names in holder.buses.items() for name in names]
            self._everything = True
            self._wake.notify()
        for key in keys:
            self._check(key)

    def again(self) -> None:
        """Everything this process publishes, announced again (a process asked)."""
        with self._lock:
            self._everything = True
            self._wake.notify()

    def _run(self) -> None:
        with self._lock:
            while True:
                self._wake.wait_for(lambda: self._closed or self._pending or self._everything)
                if self._closed:
                    return
                batches, self._pending = self._pending, []
                if self._everything:  # then all that is published, not only what is new
                    self._everything = False
                    everything: dict[str, list[tuple[str, int]]] = {}
                    for (bus, name), published in self._published.items():
                        if not published.withdrawn:
                            everything.setdefault(bus, []).append((name, published.registered))
                    batches += [(bus, added, []) for bus, added in everything.items()]
                self._lock.release()
                try:
                    for bus, added, withdrawn in batches:
                        self._announce(bus, added, withdrawn)
                finally:
                    self._lock.acquire()

    def _announce(self, bus: str, added: list[tuple[str, int]], withdrawn: list[str]) -> None:
        """Names frames of at most ``_max_bytes`` each (on the sender thread), the withdrawals
        first: a receiver applies them before the additions, split across frames or not."""
        while added or withdrawn:
            size, count_added, count_withdrawn = 256 + len(bus), 0, 0
            for name in withdrawn:
                size += 8 + len(name.encode())
                if size > self._max_bytes and count_withdrawn:
                    break
                count_withdrawn += 1
            for name, _ in added if count_withdrawn == len(withdrawn) else ():
                size += 16 + len(name.encode())
                if size > self._max_bytes and (count_added or count_withdrawn):
                    break
                count_added += 1
            frame = wire.Names(
                self._me, bus, tuple(added[:count_added]), tuple(withdrawn[:count_withdrawn])
            )
            added, withdrawn = added[count_added:], withdrawn[count_withdrawn:]
            self._send(frame.encode(), "names of objects")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify()
        self._thread.join()

    # -- other processes' objects --------------------------------------------------------------

    def names(self, frame: wire.Names, alive: bool) -> None:
        """Another process announced and withdrew names (a Zenoh thread)."""
        zid, bus = frame.sender, frame.bus
        refused = 0
        with self._lock:
            holder = self._holders.setdefault(zid, _Holder(alive=alive))
            before = bus in holder.buses
            names = holder.buses.setdefault(bus, {})
            for name in frame.withdrawn:
                if names.pop(name, None) is not None:
                    holder.count -= 1
            for name, registered in frame.added:
                if name not in names:
                    if holder.count >= self._max_per_peer:
                        refused += 1
                        continue
                    holder.count += 1
                names[name] = registered
            if not names:
                del holder.buses[bus]
            after = bus in holder.buses
        detected, gone = after and not before, before and not after
        if refused:
            self._faults.warn("names", f"refused {refused} object name(s) of process"
                              f" {self._label(zid)}: over maxObjectsPerPeer"
                              f" ({self._max_per_peer})")  # fmt: skip
        if detected:
            self._directory.add(bus)
        elif gone:
            self._directory.remove(bus)
        if alive:
            for name, _ in frame.added:
                self._check((bus, name))

    def forget(self, zid: str) -> None:
        """A process left or was lost: its names go."""
        with self._lock:
            holder = self._holders.pop(zid, None)
            self._reported = {r for r in self._reported if r[2] != zid}
        if holder is not None:
            for bus in holder.buses:
                self._directory.remove(bus)

    def _check(self, key: tuple[str, str]) -> None:
        bus, name = key
        with self._lock:
            published = self._published.get(key)
            if published is None or published.withdrawn:
                return
            holders = {
                z: h.buses[bus][name]
                for z, h in self._holders.items()
                if h.alive and name in h.buses.get(bus, ())
            }
            if not holders:
                return
            fresh = [z for z in sorted(holders) if (*key, z) not in self._reported]
            self._reported.update((*key, z) for z in fresh)
            first = min((t, z) for z, t in holders.items())
            lost = first < (published.registered, self._me)
            if lost:
                published.withdrawn = True
        address = f"{bus}.{name}"
        for zid in fresh:
            if lost and (holders[zid], zid) == first:
                _log.error(
                    "object '%s' is also published by process %s, which registered it first:"
                    " withdrawn from bus '%s'",
                    address,
                    self._label(zid),
                    bus,
                )
            elif not lost:
                _log.error(
                    "object '%s' is also published by process %s, which registered it later:"
                    " this process keeps the name",
                    address,
                    self._label(zid),
                )
        owner = published.obj._ctx_
        if lost and owner is not None:
            owner.post(_withdraw, published.source, published.obj)


def _withdraw(source: Source, obj: NativeObject) -> None:
    """In the owner's drain: the object leaves the bus it lost to another process."""
    if obj.bus == source.bus:
        source.remove(obj)
