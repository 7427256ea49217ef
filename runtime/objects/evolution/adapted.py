"""The adapted proxy (evolution.md §1.1, §2): a remote proxy of the local class whose owner
holds another version of it. Its handle keeps the producer's metadata and bytes; the proxy
converts what comes in (state, updates at its drain, events on arrival, results) and what goes
out (call arguments, setter values) with the pair's plan, and logs what does not convert."""

from __future__ import annotations

import logging
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Final

from sengen.runtime.errors import CallFailed
from sengen.runtime.objects.calls import Call, completed
from sengen.runtime.objects.codec import codec
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.evolution.classes import LABEL, ClassPlan, Decode
from sengen.runtime.objects.evolution.convert import Convert, Notes, ValueFailure
from sengen.runtime.objects.meta import MethodMeta, PropertyMeta
from sengen.runtime.objects.proxies import RemoteProxy, refused
from sengen.runtime.objects.values import Invalid, zero

_log = logging.getLogger("sengen.transport")
_U32: Final = struct.Struct("<I")
# Distinct (pair, process, member, kind) keys remembered for "first time WARNING" (§5.3); past
# this many, every further line is DEBUG: memory stays bounded whatever the traffic.
_MAX_KEYS: Final = 4096
# Lossy adjustments of several properties: (local name, (kind, note)).
_Named = list[tuple[str, tuple[str, str]]]


class Adapter:
    """A pair's plan as one producer process's objects use it, with the log lines' state."""

    def __init__(self, plan: ClassPlan, label: Callable[[], str]) -> None:
        self.plan = plan
        self._label = label
        # By remote property id: how its bytes are read, the local name that takes the value
        # (None: only remote, or not dynamic in both) and the conversion (None: identical).
        self._wire: dict[int, tuple[Decode, str | None, Convert | None]] = {}
        for ident, (theirs, prop) in plan.properties.items():
            if prop is None or not prop.dynamic:
                self._wire[ident] = (codec(theirs.type)[1], None, None)
            else:
                convert = None if prop.direct else prop.incoming
                self._wire[ident] = (prop.read, prop.local.stl_name, convert)
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    # -- log lines (§5.3) --------------------------------------------------------------------------

    def _level(self, member: str, kind: str) -> int:
        key = (member, kind)
        with self._lock:
            if key in self._seen or len(self._seen) >= _MAX_KEYS:
                return logging.DEBUG
            self._seen.add(key)
        return logging.WARNING

    def failed(self, where: str, address: str, failure: ValueFailure) -> str:
        """Log a value failure; its ``<where>: <reason>`` text."""
        position = where + "".join(f" > {s}" for s in failure.steps)
        kind = " ".join(failure.reason.split()[:2])  # "no enumerator", "cannot read", …
        _log.log(
            self._level(where, kind),
            "cannot adapt %s of '%s' (process %s): %s",
            position, address, self._label(), failure.reason,
        )  # fmt: skip
        return f"{position}: {failure.reason}"

    def lossy(self, where: str, address: str, notes: Notes) -> None:
        for kind, note in notes:
            _log.log(
                self._level(where, kind),
                "lossy adaptation of %s of '%s' (process %s): %s",
                where, address, self._label(), note,
            )  # fmt: skip

    # -- values coming in (R → L) -----------------------------------------------------------------

    def state(self, remote: Mapping[str, Any], address: str) -> dict[str, Any]:
        """A publication's full state, by local STL name: every local property, a missing or
        failed one at its zero value (§4.2, §5.1)."""
        local: dict[str, Any] = {}
        by_local = self.plan.by_local
        for prop in self.plan.local.all_properties:
            plan = by_local.get(prop.stl_name)
            if plan is None or plan.remote.stl_name not in remote:
                local[prop.stl_name] = zero(prop.type)
                continue
            where = f"property '{prop.stl_name}'"
            notes: Notes = []
            try:
                local[prop.stl_name] = plan.incoming(remote[plan.remote.stl_name], notes)
            except ValueFailure as failure:
                self.failed(where, address, failure)
                local[prop.stl_name] = zero(prop.type)
            if notes:
                self.lossy(where, address, notes)
        return local

    def latest(
        self, changes: Iterable[bytes | Mapping[str, Any]], address: str
    ) -> tuple[dict[str, Any], list[Invalid]]:
        """As ``ClassCodec.latest``, newest first: the latest local value of each property
        dynamic in both versions. A value that fails to convert keeps the property as it was;
        a value already superseded by a newer change is decoded past, never converted."""
        values: dict[str, Any] = {}
        done: set[str] = set()
        errors: list[Invalid] = []
        failures: list[tuple[str, ValueFailure]] = []
        notes: _Named = []
        for change in changes:
            if isinstance(change, bytes):
                try:
                    found = self._decoded(change, done, failures, notes)
                except (Invalid, struct.error, IndexError) as error:
                    errors.append(error if isinstance(error, Invalid) else Invalid(str(error)))
                    continue
            else:
                found = self._mapped(change, done, failures, notes)
            values.update(found)
            done.update(found)
        for name, failure in failures:
            self.failed(f"property '{name}'", address, failure)
        if notes:
            for name, note in notes:
                self.lossy(f"property '{name}'", address, [note])
        return values, errors

    def _decoded(
        self,
        data: bytes,
        done: set[str],
        failures: list[tuple[str, ValueFailure]],
        notes: _Named,
    ) -> dict[str, Any]:
        """One encoded change of the remote layout: its properties converted, whole or not at
        all (a malformed change is dropped as the class codec drops it)."""
        view = memoryview(data)
        (count,) = _U32.unpack_from(view, 0)
        pos, found = 4, {}
        wire = self._wire
        failed: list[tuple[str, ValueFailure]] = []
        for _ in range(count):
            (ident,) = _U32.unpack_from(view, pos)
            entry = wire.get(ident)
            if entry is None:
                raise Invalid(f"unknown property id {ident} of '{self.plan.remote.qualified_name}'")
            read, name, convert = entry
            value, pos = read(view, pos + 4)
            if name is None or name in done:
                continue
            if convert is None:
                found[name] = value
                continue
            mine: Notes = []
            try:
                found[name] = convert(value, mine)
            except ValueFailure as failure:
                failed.append((name, failure))
                continue
            notes.extend((name, n) for n in mine)
        if pos != len(view):
            raise Invalid(f"{len(view) - pos} unexpected bytes at the end")
        for name, why in failed:
            failures.append((name, why))
            done.add(name)
        return found

    def _mapped(
        self,
        change: Mapping[str, Any],
        done: set[str],
        failures: list[tuple[str, ValueFailure]],
        notes: _Named,
    ) -> dict[str, Any]:
        """A change already decoded in the remote version (by the handle): converted."""
        found = {}
        for plan in self.plan.by_local.values():
            name = plan.local.stl_name
            if plan.dynamic and name not in done and plan.remote.stl_name in change:
                mine: Notes = []
                try:
                    found[name] = plan.incoming(change[plan.remote.stl_name], mine)
                except ValueFailure as failure:
                    failures.append((name, failure))
                    done.add(name)
                    continue
                notes.extend((name, n) for n in mine)
        return found

    def event(self, stl_name: str, args: tuple[Any, ...], address: str) -> tuple[Any, ...] | None:
        """A remote event's arguments as the local event takes them; None: not delivered."""
        plan = self.plan.events.get(stl_name)
        if plan is None or plan.args is None:
            return None
        notes: Notes = []
        converted = []
        local = self.plan.local.event(stl_name)
        assert local is not None
        for (at, convert), arg in zip(plan.args, local.args, strict=True):
            try:
                converted.append(convert(args[at], notes))
            except ValueFailure as failure:
                self.failed(f"event '{stl_name}' argument '{arg.stl_name}'", address, failure)
                return None
        if notes:
            self.lossy(f"event '{stl_name}'", address, notes)
        return tuple(converted)

    # -- calls going out (L → R) -------------------------------------------------------------------

    def outgoing(
        self, member: MethodMeta | PropertyMeta, args: tuple[Any, ...], address: str
    ) -> tuple[MethodMeta | PropertyMeta, tuple[Any, ...]] | CallFailed:
        """The remote member and arguments of a local call, or why it fails (§4.3, §4.4)."""
        q, label = self.plan.local.qualified_name, self._label()
        notes: Notes = []
        if isinstance(member, PropertyMeta):
            prop = self.plan.by_local.get(member.stl_name)
            where = f"property '{member.stl_name}'"
            if prop is None:
                text = (
                    f"{where} is not defined by the remote implementation of '{q}'"
                    f" (process {label})"
                )
                return CallFailed("MissingMember", text)
            try:
                value = prop.outgoing(args[0], notes)
            except ValueFailure as failure:
                return CallFailed("AdaptationError", self.failed(where, address, failure))
            self.lossy(where, address, notes)
            return prop.remote, (value,)
        plan = self.plan.methods[member.stl_name]
        if plan.error is not None:
            return CallFailed(plan.error[0], plan.error[1].replace(LABEL, label))
        theirs = self.plan.remote.method(member.stl_name)
        assert theirs is not None
        converted = []
        for (at, convert), name in zip(plan.remote_args, plan.names, strict=True):
            where = f"method '{member.stl_name}' argument '{name}'"
            try:
                converted.append(convert(args[at], notes))
            except ValueFailure as failure:
                return CallFailed("AdaptationError", self.failed(where, address, failure))
        self.lossy(f"method '{member.stl_name}'", address, notes)
        return theirs, tuple(converted)


class _Results:
    """What the transport answers a call of an adapted proxy to: the result decoded in the
    remote version (``META``), converted here, then handed to the proxy."""

    __slots__ = ("META", "_adapter", "_method", "_proxy")

    def __init__(self, proxy: AdaptedProxy, adapter: Adapter, method: str | None) -> None:
        self.META = adapter.plan.remote
        self._adapter = adapter
        self._method = method
        self._proxy = proxy

    def _receive_result_(self, call_id: int, value: Any, error: BaseException | None) -> None:
        proxy, method = self._proxy, self._method
        if method is not None and error is None:
            convert = self._adapter.plan.methods[method].result
            notes: Notes = []
            try:
                value = None if convert is None else convert(value, notes)
            except ValueFailure as failure:
                where = f"method '{method}' result"
                text = self._adapter.failed(where, proxy._address_, failure)
                value, error = None, CallFailed("AdaptationError", text)
            self._adapter.lossy(f"method '{method}' result", proxy._address_, notes)
        elif method is None:
            value = None
        proxy._receive_result_(call_id, value, error)


class AdaptedProxy(RemoteProxy):
    """The methods an adapted proxy class (one per pair, process and local class) overrides;
    mixed in before the local class's generated remote proxy."""

    __slots__ = ()
    _ADAPTER_: ClassVar[Adapter]

    def __init__(
        self,
        endpoint: Any,
        context: Context,
        name: str,
        bus: str,
        state: Mapping[str, Any],
        commit_time: int,
    ) -> None:
        local = self._ADAPTER_.state(state, f"{bus}.{name}")
        super().__init__(endpoint, context, name, bus, local, commit_time)

    def _refresh_(self) -> None:
        arrived = self._arrived_
        if arrived[1]:  # decoded in the remote version: converted with the encoded ones
            queue = arrived[3]
            if queue is None:
                queue = arrived[3] = deque()
            queue.append((arrived[1], arrived[0]))
            arrived[1] = {}
        super()._refresh_()

    def _latest_(self, changes: Iterable[bytes | Mapping[str, Any]]) -> dict[str, Any]:
        address = self._address_
        values, errors = self._ADAPTER_.latest(changes, address)
        if errors:
            refused(address, errors)
        return values

    def _receive_event_(self, stl_name: str, args: tuple[Any, ...], creation_time: int) -> None:
        converted = self._ADAPTER_.event(stl_name, args, self._address_)
        if converted is not None:
            self._queue_event_(stl_name, converted, creation_time)

    def _send_call_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        adapter = self._ADAPTER_
        outcome = adapter.outgoing(member, args, self._address_)
        if isinstance(outcome, CallFailed):
            completed(caller, call, None, outcome)  # the caller's next drain, nothing sent
            return
        remote, remote_args = outcome
        method = member.stl_name if isinstance(member, MethodMeta) else None
        results = _Results(self, adapter, method)  # converts the result back, then to us
        self._send_at_commit_(results, remote, remote_args, call, caller)

    @classmethod
    def _recorded_(cls, handle: Any) -> Recorded:
        """What the handle of one of these objects gives its change logs (§7)."""
        return Recorded(cls._ADAPTER_, handle)


class Recorded:
    """An adapted object as change logs (a recorder) hold it (§7): the local class, its values
    and event arguments under its names. The handle posts its records with this in its place
    (one per handle: the recorder keys its objects by identity)."""

    __slots__ = ("META", "_adapter", "_owner", "bus", "name")

    def __init__(self, adapter: Adapter, owner: Any) -> None:
        self.META = adapter.plan.local
        self._adapter = adapter
        self._owner = owner  # the handle: proxies are still its own
        self.bus: str = owner.bus
        self.name: str = owner.name

    def view_for(self, context: Context) -> Any:
        return self._owner.view_for(context)

    def state(self, remote: Mapping[str, Any]) -> dict[str, Any]:
        """An ``add`` record's values: the whole local state."""
        return self._adapter.state(remote, f"{self.bus}.{self.name}")

    def changes(self, remote: Mapping[str, Any]) -> dict[str, Any]:
        """A ``set`` record's values: the changed properties dynamic in both versions."""
        values, _ = self._adapter.latest((remote,), f"{self.bus}.{self.name}")
        return values

    def event(self, stl_name: str, args: tuple[Any, ...]) -> dict[str, Any] | None:
        """An ``event`` record's arguments by local name; None: not delivered here."""
        converted = self._adapter.event(stl_name, args, f"{self.bus}.{self.name}")
        local = self.META.event(stl_name)
        if converted is None or local is None:
            return None
        return {a.stl_name: v for a, v in zip(local.args, converted, strict=True)}


def adapted_proxy(adapter: Adapter, base: type[RemoteProxy]) -> type[RemoteProxy]:
    """The proxy class of ``base``'s objects owned by ``adapter``'s process."""
    namespace = {"__slots__": (), "_ADAPTER_": adapter}
    cls: type[RemoteProxy] = type(base.__name__, (AdaptedProxy, base), namespace)
    return cls
