"""Other processes' objects by name: duplicates (runtime.md §3.13) and detected buses.

Every object a source of this process publishes on a bus that travels is announced with a
liveliness token carrying its registration wall time. When another process announces the same
name on the same bus, the earlier registration keeps the name (ties: the lower process id);
the other owner withdraws its object from the bus, in its own drain; both processes log an
error naming the object and the other process, once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import zenoh

from sengen.runtime import NativeObject
from sengen.runtime.components.transport.link import object_key, parse_object, undeclare
from sengen.runtime.kernel.extension import BusDirectory, Source

_log = logging.getLogger("sengen.transport")


@dataclass
class _Published:
    """An object of this process on a bus that travels."""

    obj: NativeObject
    source: Source
    registered: int  # wall time of the registration, ns
    token: zenoh.LivelinessToken
    withdrawn: bool = False


class NameGuard:
    def __init__(
        self,
        session: zenoh.Session,
        zid: str,
        label: Callable[[str], str],
        directory: BusDirectory,
    ) -> None:
        self._session = session
        self._directory = directory  # other processes' objects make their buses detected
        self._zid = zid
        self._label = label  # a process's name for the log, from its id
        self._lock = threading.Lock()
        self._published: dict[tuple[str, str], _Published] = {}
        self._names: dict[tuple[str, str], dict[str, int]] = {}  # (bus, name): {process: time}
        self._reported: set[tuple[str, str, str]] = set()  # (bus, name, process)

    def published(self, source: Source, obj: NativeObject, added: bool) -> None:
        """A source of this process added or removed an object (on its owner's thread)."""
        key = (source.bus, obj.name)
        if source.bus.startswith("local."):
            return
        if added:
            registered = time.time_ns()
            name_key = object_key(source.bus, self._zid, registered, obj.name)
            token = self._session.liveliness().declare_token(name_key)
            with self._lock:
                self._published[key] = _Published(obj, source, registered, token)
            self._check(key)
            return
        with self._lock:
            published = self._published.get(key)
            if published is None or published.obj is not obj:
                return
            del self._published[key]
        undeclare(published.token)

    def announced(self, sample: zenoh.Sample) -> None:
        """Another process's object token came or went (a Zenoh thread)."""
        parsed = parse_object(str(sample.key_expr))
        if parsed is None or parsed[1] == self._zid:
            return
        bus, zid, registered, name = parsed
        with self._lock:
            holders = self._names.setdefault((bus, name), {})
            known = zid in holders
            if sample.kind == zenoh.SampleKind.PUT:
                holders[zid] = registered
            else:
                holders.pop(zid, None)
            if not holders:
                del self._names[(bus, name)]
        if sample.kind == zenoh.SampleKind.PUT and not known:
            self._directory.add(bus)
        elif sample.kind != zenoh.SampleKind.PUT and known:
            self._directory.remove(bus)
        self._check((bus, name))

    def close(self) -> None:
        with self._lock:
            published, self._published = list(self._published.values()), {}
        for entry in published:
            undeclare(entry.token)

    def _check(self, key: tuple[str, str]) -> None:
        with self._lock:
            published = self._published.get(key)
            holders = dict(self._names.get(key, {}))
            if published is None or published.withdrawn or not holders:
                return
            fresh = [z for z in sorted(holders) if (*key, z) not in self._reported]
            self._reported.update((*key, z) for z in fresh)
            first = min((t, z) for z, t in holders.items())
            lost = first < (published.registered, self._zid)
            if lost:
                published.withdrawn = True
        address = f"{key[0]}.{key[1]}"
        for zid in fresh:
            if lost and (holders[zid], zid) == first:
                _log.error(
                    "object '%s' is also published by process %s, which registered it first:"
                    " withdrawn from bus '%s'",
                    address,
                    self._label(zid),
                    key[0],
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
