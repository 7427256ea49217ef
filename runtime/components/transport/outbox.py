"""The producer's side of an object crossing a process boundary (runtime.md §8.1),
transport-neutral: what this process shows another one.

An :class:`Outbox` per remote process holds one subscription per interest that process
announced. Its subscriptions use the change-log mode of the owners' publishers, run at once on
the owner's thread (:class:`ImmediateContext`): the full state when an object starts matching,
the changed properties of each commit, the events and the removal, all in the owner's commit
order, so the frames leave in an order in which the snapshot always precedes the updates and a
call's result follows the updates of its commit. The records of one commit leave as one message
(``wire.Batch``), or, when too long for one, as ``wire.Part`` messages ended by a ``wire.Batch``
at the owner's commit end (``flush``), which the receiver applies whole; each owner builds its
messages apart. The calls that process sends to the objects it holds run on their owners
(:meth:`Outbox.invoke`) and answer on the same stream.

The subscriber's side is :mod:`~sengen.runtime.components.transport.handles`.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import logging
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

from sengen.runtime import Call, NativeObject
from sengen.runtime.components.transport import wire
from sengen.runtime.errors import CallDropped, CallError, CallFailed, CallTimeout, ObjectGone
from sengen.runtime.kernel.extension import (
    ClassCodec,
    ClassMeta,
    Context,
    Delivery,
    Discovery,
    EventMeta,
    Interests,
    LogRecord,
    MethodMeta,
    Prop,
    PropertyMeta,
    Query,
    Subscription,
    class_codec,
    describe,
    route_call,
)

_log = logging.getLogger("sengen.transport")

# (message, what it carries: named only if the message is refused, so built only then)
Send = Callable[[bytes, Callable[[], str]], object]
# A message goes before it would pass this much, and a longer commit is cut into messages of
# this much: Zenoh's own batches are of this size, and its threads then write while the commit
# goes on (in bench/transport.py, commits of 100 changes of 4 KiB went out 1.5 times as fast so
# as in one message of 400 KiB each).
_SOON = 1 << 16


class ImmediateContext(Context):
    """The context of subscriptions held for another process: what an owner posts to it runs at
    once on the owner's thread, so that the frames leave in the owner's commit order."""

    def post(self, function: Callable[..., Any], *args: Any) -> None:
        function(*args)

    def post_kind(self, kind: int, function: Callable[..., Any], *args: Any) -> None:
        function(*args)


class _RemoteDiscovery(Discovery):
    """No proxies for another process's subscriptions: the change log carries every fact."""

    forwarded = True

    def deliver(self, delivery: Delivery, own: bool) -> None:
        pass


class _Exposed(NamedTuple):
    """An object another process holds, as its owner's commits need it."""

    oid: int
    codec: ClassCodec
    singles: dict[str, Callable[[Any], bytes | bytearray]]  # ``codec.singles``
    owner: Context


class _Encoded(NamedTuple):
    """Changes of a commit, encoded as the columns of ``wire.Changes``: their objects' ids
    (packed), where each state ends (a ``range`` when they are of one size), their states (each
    ``sep`` then a piece, ``codec.Column``); and what changed (to name a change in a log line),
    the objects and their changed properties, in the same order."""

    ids: bytes
    ends: Sequence[int]
    sep: bytes
    pieces: Sequence[bytes | bytearray]
    objects: Sequence[NativeObject]
    props: Sequence[Sequence[Prop]]

    def part(self, start: int, end: int) -> _Encoded:
        """Changes ``start`` to ``end`` alone."""
        ends = self.ends
        part: Sequence[int]
        if type(ends) is range:
            part = range(ends.step, ends.step * (end - start) + 1, ends.step)
        else:
            base = ends[start - 1] if start else 0
            part = [e - base for e in ends[start:end]]
        ids, pieces = self.ids[8 * start : 8 * end], self.pieces[start:end]
        objects, props = self.objects[start:end], self.props[start:end]
        return _Encoded(ids, part, self.sep, pieces, objects, props)

    def what(self) -> str:
        """The change, named (an item of one change that does not fit in a message)."""
        return _changed_what(self.objects[0], self.props[0])

    def number(self) -> int:
        return len(self.ends)

    def size(self) -> int:
        """The bytes of the item."""
        return wire.Changes.FIXED + wire.Changes.PER_CHANGE * len(self.ends) + self.ends[-1]

    def taken(self) -> Sequence[int]:
        """The bytes the changes before each index take in the item, beyond its fixed part."""
        per_change = wire.Changes.PER_CHANGE
        return [0, *(end + per_change * i for i, end in enumerate(self.ends, 1))]

    def item(self, time: int) -> tuple[bytes, bytes]:
        """The item: its head, and its states, appended apart."""
        sep = self.sep
        return wire.Changes.item_head(time, self.ids, self.ends) + sep, sep.join(self.pieces)


class _Packed(NamedTuple):
    """Changes of a commit that changed the same one fixed-size property of every object, as
    the columns of ``wire.Column``: the objects' ids (packed), the property's member id, the
    size of one value and the values packed; and what changed, the objects in the same order
    and the property."""

    ids: bytes
    member: int
    width: int
    values: bytes
    objects: Sequence[NativeObject]
    prop: Sequence[Prop]  # ``Prop.alone``

    def part(self, start: int, end: int) -> _Packed:
        width = self.width
        ids, values = self.ids[8 * start : 8 * end], self.values[width * start : width * end]
        return _Packed(ids, self.member, width, values, self.objects[start:end], self.prop)

    def what(self) -> str:
        return _changed_what(self.objects[0], self.prop)

    def number(self) -> int:
        return len(self.ids) // 8

    def size(self) -> int:
        return wire.Column.FIXED + len(self.ids) + len(self.values)

    def taken(self) -> Sequence[int]:
        step = 8 + self.width
        return range(0, step * (self.number() + 1), step)

    def item(self, time: int) -> tuple[bytes, bytes]:
        return wire.Column.item_head(time, self.member, self.width, self.ids), self.values


class _Alike(NamedTuple):
    """The objects of an owner's last commit that changed one property alike, and those of
    them exposed (all, or those a filter keeps): the next commit is likely to change the same
    objects again (another property, perhaps), then their ids and codec are known."""

    objects: list[NativeObject]
    exposed: list[NativeObject]  # ``objects`` itself when every one is
    ids: bytes  # of the exposed ones
    codec: ClassCodec | None  # None: none is exposed


_oid_of = operator.attrgetter("oid")


def _changed_what(obj: NativeObject, props: Sequence[Prop]) -> str:
    return f"{obj._address_} ({', '.join(p.meta.stl_name for p in props)})"


def _a_commit() -> str:
    return "a commit's changes"


def _alike(obj: NativeObject, other: NativeObject) -> bool:
    """Whether the additions of ``obj`` and ``other`` go in one ``wire.Added``."""
    return obj.META is other.META and obj.bus == other.bus


def _published(bus: str, names: list[bytes]) -> str:
    if len(names) == 1:
        return f"{bus}.{names[0].decode()}"
    return f"the publication of {len(names)} objects on '{bus}'"


def _event_what(obj: NativeObject, meta: EventMeta) -> str:
    return f"{obj._address_}.{meta.stl_name}"


class Outbox:
    """What this process shows one remote process: the objects matching its interests. It is
    the :class:`~sengen.runtime.kernel.subscriptions.ChangeSink` of its subscriptions: the
    owners write their commits' changes and events straight into the message being built."""

    def __init__(self, sender: str, space: Interests, send: Send, limit: int) -> None:
        self.sender = sender
        self._send = send
        self._limit = limit  # maxMessageBytes
        self._header = wire.Batch.header(sender)
        self._part = wire.Part.header(sender)  # a message whose commit goes on in the next
        # A message may take this many bytes, leaving room for a step stamp.
        self._room = limit - wire.envelope(sender) + len(self._header)
        self._soon = min(_SOON, self._room)  # a message this long goes at once
        # The message being built for each owner (under the lock): owners commit on threads of
        # their own, and a message never ends one owner's commit in the middle of another's.
        self._messages: dict[Context | None, bytearray] = {}
        self._owner: Context | None = None  # whose message ``_message`` is
        self._message = self._messages[None] = bytearray(self._header)
        self._discovery = _RemoteDiscovery(ImmediateContext("transport"), space)
        self._subscriptions: dict[int, Subscription] = {}
        self._holders: dict[NativeObject, list[int]] = {}  # which interests hold an object
        self._exposed: dict[int, NativeObject] = {}  # by object id: what calls may reach
        # What a change of an exposed object needs, found once per object: its id, its class's
        # codec and its owner.
        self._wire: dict[NativeObject, _Exposed] = {}
        self._owners: dict[Context, int] = {}  # how many exposed objects each owner has
        self._last: dict[Context, _Alike] = {}  # each owner's last alike commit, while exposed
        self._described: set[ClassMeta] = set()  # classes whose description went already
        self._lock = threading.Lock()

    def open(self, iid: int, query: Query) -> None:
        """Interest ``iid`` of the remote process: the owners evaluate it from their next drain."""
        with self._lock:
            if iid in self._subscriptions:
                return  # announced again (history and live, or a reconnection)
            # Registered before the owners can answer: their records check it.
            self._subscriptions[iid] = subscription = self._discovery.subscribe(
                query, log=functools.partial(self._records, iid), sink=self
            )
        del subscription

    def close(self, iid: int) -> None:
        with self._lock:
            subscription = self._subscriptions.pop(iid, None)
            for obj, iids in list(self._holders.items()):
                if iid in iids:
                    iids.remove(iid)
                    if not iids:
                        self._forget(obj)
        if subscription is not None:
            subscription.close()

    def close_all(self) -> None:
        for iid in list(self._subscriptions):
            self.close(iid)

    def target(self, oid: int) -> NativeObject | None:
        with self._lock:
            return self._exposed.get(oid)

    # -- the owners' commits (their threads) --------------------------------------------------

    def changes(
        self,
        owner: Context,
        time: int,
        objects: list[NativeObject],
        props: list[Sequence[Prop]],
    ) -> bool:
        """The exposed objects that changed, one copy whatever the interests holding them, as
        one :class:`~sengen.runtime.components.transport.wire.Column` or
        :class:`~sengen.runtime.components.transport.wire.Changes` item (or more, should they
        not fit in one message). The hot path of remote traffic."""
        with self._lock:
            if not self._owners.get(owner):
                return False
            self._select(owner)
            encoded = self._alike(owner, objects, props) or self._each(objects, props)
            if encoded.number():
                self._place(time, encoded)
        return True

    def _alike(
        self, owner: Context, objects: list[NativeObject], props: list[Sequence[Prop]]
    ) -> _Encoded | _Packed | None:
        """A commit that changed the same one property of objects of one class (updated alike,
        the common case): the changes of those exposed, encoded without a Python step per
        object; None for any other commit, or when a value fails: then each is encoded alone,
        and the one that fails is named."""
        if not objects:
            return None
        first = props[0]
        if len(first) != 1 or props.count(first) != len(props):  # Props: by identity
            return None
        last = self._last.get(owner)
        if last is None or objects != last.objects:  # by identity
            last = self._last[owner] = self._alike_of(objects)
        if last.codec is None:
            return _Encoded(b"", [], b"", [], [], [])  # nothing exposed changed
        exposed = last.exposed
        key = first[0].key
        packed = last.codec.column_writers.get(key)
        try:
            if packed is not None:
                write, member, width = packed
                return _Packed(last.ids, member, width, write(exposed), exposed, first)
            ends, sep, pieces = last.codec.columns[key](exposed)
        except (ValueError, TypeError):  # a value checks let through
            return None
        return _Encoded(last.ids, ends, sep, pieces, exposed, [first] * len(exposed))

    def _alike_of(self, objects: list[NativeObject]) -> _Alike:
        found = list(map(self._wire.get, objects))
        if None not in found:
            kept = cast(list[_Exposed], found)
            exposed = objects
        else:
            kept = [e for e in found if e is not None]
            exposed = [o for o, e in zip(objects, found, strict=True) if e is not None]
        if not kept:
            return _Alike(objects, [], b"", None)
        ids = wire.pack_ids(list(map(_oid_of, kept)))
        # Objects of one class: one codec (a subclass sharing the Prop reads the same).
        return _Alike(objects, exposed, ids, kept[0].codec)

    def _each(self, objects: list[NativeObject], changed: list[Sequence[Prop]]) -> _Encoded:
        """The changes of the exposed objects of a commit, encoded one by one: a value that
        fails is logged and left out."""
        exposed = self._wire
        oids: list[int] = []
        states: list[bytes | bytearray] = []
        kept: list[NativeObject] = []
        kept_props: list[Sequence[Prop]] = []
        for obj, props in zip(objects, changed, strict=True):
            found = exposed.get(obj)
            if found is None:
                continue
            try:
                if len(props) == 1:  # ``ClassCodec.changed_state``, inlined
                    state = found.singles[props[0].key](obj)
                else:
                    state = found.codec.changed_state(obj, props)
            except (ValueError, TypeError) as error:  # a value checks let through
                _log.error("set of %s not sent: %s", obj._address_, error)
                continue
            oids.append(found.oid)
            states.append(state)
            kept.append(obj)
            kept_props.append(props)
        ends = list(itertools.accumulate(map(len, states)))
        return _Encoded(wire.pack_ids(oids), ends, b"", states, kept, kept_props)

    def _place(self, time: int, encoded: _Encoded | _Packed) -> None:
        """A commit's changes into items of messages (under the lock). A message goes before it
        would pass ``_SOON`` bytes: Zenoh's threads write it while the next one is placed. A
        commit longer than that on its own is cut into items that fill a message each; a
        single change longer than a message can hold is logged and not sent (:meth:`_placed`)."""
        if len(self._message) + encoded.size() > self._soon and len(self._message) > len(
            self._header
        ):
            self._flush(final=False)
        if len(self._message) + encoded.size() <= self._soon:
            self._changes(time, encoded)
            return
        taken, count, start = encoded.taken(), encoded.number(), 0
        fixed = encoded.size() - taken[-1]  # the item's bytes before its columns
        while start < count:
            room = self._soon - len(self._message) - fixed
            end = bisect.bisect_right(taken, taken[start] + room, start + 1) - 1
            if end == start:  # not one more change fits in this message
                if len(self._message) > len(self._header):
                    self._flush(final=False)
                    continue
                end = start + 1
            self._changes(time, encoded.part(start, end))
            start = end

    def _changes(self, time: int, encoded: _Encoded | _Packed) -> None:
        """Changes of a commit as an item of the message (under the lock)."""
        what = encoded.what if encoded.number() == 1 else _a_commit
        head, tail = encoded.item(time)
        self._add(head, what, tail)

    def events(
        self,
        owner: Context,
        time: int,
        emitted: list[tuple[NativeObject, EventMeta, tuple[Any, ...]]],
    ) -> None:
        with self._lock:
            self._select(owner)
            exposed = self._wire
            for obj, meta, args in emitted:
                found = exposed.get(obj)
                if found is None:
                    continue
                try:
                    payload = found.codec.encode_event(meta.stl_name, args)
                except (ValueError, TypeError) as error:
                    _log.error("event of %s not sent: %s", obj._address_, error)
                    continue
                frame = wire.Emitted(self.sender, found.oid, time, payload)
                self._add(frame.item(), functools.partial(_event_what, obj, meta))

    def flush(self) -> None:
        """The end of the commit (or kernel work) of the owner on this thread: its message
        goes (every owner's, off an owner's thread)."""
        owner = Context.current()
        with self._lock:
            for key in list(self._messages) if owner is None else [owner, None]:
                if key in self._messages:
                    self._select(key)
                    self._flush()

    def _select(self, owner: Context | None) -> None:
        """Build ``owner``'s message from now on (under the lock)."""
        if owner is not self._owner:
            self._owner = owner
            message = self._messages.get(owner)
            if message is None:
                message = self._messages[owner] = bytearray(self._header)
            self._message = message

    def _records(self, iid: int, records: list[LogRecord]) -> None:
        """An owner's additions and removals of one commit (or piece of kernel work), on the
        owner's thread; they end the commit's message, which its :meth:`flush` sends. The
        additions of objects of one class on one bus go together (:meth:`_expose`)."""
        with self._lock:
            if iid not in self._subscriptions:
                return  # closed while the owner was answering
            self._select(Context.current())
            run: list[tuple[NativeObject, dict[str, Any]]] = []
            time = 0
            for kind, at, owner, _, values in records:
                obj = cast(NativeObject, owner)  # owners log their own objects only
                if run and (kind != "add" or at != time or not _alike(obj, run[0][0])):
                    self._expose(iid, time, run)
                    run = []
                if kind == "add":
                    time = at
                    run.append((obj, values))
                else:
                    self._withdraw(iid, obj)
            if run:
                self._expose(iid, time, run)

    def _expose(self, iid: int, time: int, run: list[tuple[NativeObject, dict[str, Any]]]) -> None:
        """Objects of one class on one bus match interest ``iid``: their publication, with
        their full states, as ``wire.Added`` items of about a message each, so that a message
        goes while the next is built (under the lock). An object whose state does not encode is
        logged and left out."""
        first = run[0][0]
        meta = first.META
        codec = class_codec(meta)
        oids: list[int] = []
        names: list[bytes] = []
        states: list[bytes] = []
        for obj, values in run:
            try:
                state = codec.encode_state(values)
            except (ValueError, TypeError) as error:  # a value checks let through
                _log.error("add of %s not sent: %s", obj._address_, error)
                continue
            self._hold(iid, obj)
            oids.append(obj.id)
            names.append(obj.name.encode())
            states.append(state)
        if not states:
            return
        description = b""
        if meta not in self._described:
            self._described.add(meta)
            description = describe.describe(meta)
        bus, count, start = first.bus or "", len(states), 0
        # Bytes of an item besides its objects', and each object's (id, two ends, name, state).
        fixed = wire.Added.FIXED + len(bus.encode()) + len(meta.qualified_name.encode())
        sizes = [16 + len(name) + len(state) for name, state in zip(names, states, strict=True)]
        most = min(self._soon, self._room - len(self._header))  # what one message can take
        while start < count:
            size, end = fixed + len(description) + sizes[start], start + 1
            while end < count and size + sizes[end] <= most:
                size += sizes[end]
                end += 1
            item = wire.Added.columns(
                iid, time, bus, meta.qualified_name, meta.type_hash, description,
                wire.pack_ids(oids[start:end]), names[start:end], states[start:end],
            )  # fmt: skip
            what = functools.partial(_published, bus, names[start:end])
            self._add(item, what)
            start, description = end, b""

    def _hold(self, iid: int, obj: NativeObject) -> None:
        """``obj`` is exposed for interest ``iid`` (under the lock)."""
        holders = self._holders.get(obj)
        if holders is None:
            holders = self._holders[obj] = []
            owner = obj._ctx_
            assert owner is not None  # an owner logs its registered objects
            codec = class_codec(obj.META)
            self._wire[obj] = _Exposed(obj.id, codec, codec.singles, owner)
            self._last.pop(owner, None)  # its objects exposed change
            self._owners[owner] = self._owners.get(owner, 0) + 1
            self._exposed[obj.id] = obj
        if iid not in holders:
            holders.append(iid)

    def _withdraw(self, iid: int, obj: NativeObject) -> None:
        """``obj`` stopped matching interest ``iid``, or is gone (under the lock)."""
        found = self._wire.get(obj)
        oid = found.oid if found is not None else obj.id
        holders = self._holders.get(obj)
        if holders is not None and iid in holders:
            holders.remove(iid)
            if not holders:
                self._forget(obj)
        self._add(wire.Removed(self.sender, iid, oid).item(), lambda: obj._address_)

    def _add(self, item: bytes, what: Callable[[], str], tail: bytes = b"") -> None:
        """An item of the message being built (under the lock); ``tail`` is the rest of it,
        appended apart so that it is not copied into ``item`` first."""
        start = len(self._message)
        self._message += item
        if tail:
            self._message += tail
        if len(self._message) >= self._soon:
            self._placed(start, what)

    def _placed(self, start: int, what: Callable[[], str]) -> None:
        """The message is long enough to go with the item just written at ``start``; if it
        overflows with it, it goes without it, and the item starts the next. An item that could
        never fit is logged and not sent."""
        message = self._message
        if len(message) <= self._room:
            self._flush(final=False)
            return
        item = message[start:]
        del message[start:]
        if len(self._header) + len(item) > self._room:
            _log.error(
                "message of %d bytes for %s exceeds maxMessageBytes (%d): not sent",
                len(item) + wire.envelope(self.sender), what(), self._limit,
            )  # fmt: skip
            return
        self._flush(final=False)
        self._message += item

    def _flush(self, final: bool = True) -> None:
        """Send the message being built (under the lock, so that messages keep their order):
        ``final`` ends what it holds of a commit, else the commit goes on in the next one."""
        message = self._message
        if len(message) > len(self._header):
            self._message = self._messages[self._owner] = bytearray(self._header)
            if not final:
                message[: len(self._part)] = self._part
            self._send(bytes(message), lambda: "a batch of frames")

    def _forget(self, obj: NativeObject) -> None:
        """No interest holds ``obj`` any more (under the lock)."""
        del self._holders[obj]
        found = self._wire.pop(obj)
        self._exposed.pop(found.oid, None)
        self._last.pop(found.owner, None)  # it may hold ``obj``
        left = self._owners[found.owner] - 1
        if left:
            self._owners[found.owner] = left
        else:
            del self._owners[found.owner]

    # -- calls from the remote process --------------------------------------------------------

    def invoke(self, frame: wire.Invoke) -> None:
        """Run a remote call on the owner, as a proxy call from outside any component would."""
        target = self.target(frame.oid)
        if target is None:
            self.reply(frame.call_id, None, None, ObjectGone(f"object {frame.oid:#x} is not known"))
            return
        codec = class_codec(target.META)
        member: MethodMeta | PropertyMeta | None
        try:
            if frame.setter:
                values = codec.decode_properties(frame.payload)
                if len(values) != 1:
                    raise ValueError("a setter call carries exactly one property")
                ((name, value),) = values.items()
                member = target.META.property(name)
                args: tuple[Any, ...] = (value,)
            else:
                name, args = codec.decode_call(frame.payload)
                member = target.META.method(name)
        except ValueError as error:
            self.reply(frame.call_id, None, None, CallFailed("InvalidCall", str(error)))
            return
        assert member is not None
        refusal = _refusal(target, member)
        if refusal is not None:
            self.reply(frame.call_id, None, None, refusal)
            return
        call: Call[Any] = Call(f"{target._address_}.{member.stl_name}")
        call.add_done_callback(lambda done: self._answer(frame.call_id, member, target, done))
        route_call(target, member, args, call, None)

    def _answer(
        self, call_id: int, member: MethodMeta | PropertyMeta, target: NativeObject, call: Call[Any]
    ) -> None:
        error = call.exception()
        value = None if error is not None else call.result()
        self.reply(call_id, member, target, error, value)

    def reply(
        self,
        call_id: int,
        member: MethodMeta | PropertyMeta | None,
        target: NativeObject | None,
        error: BaseException | None,
        value: Any = None,
    ) -> None:
        """The result frame of a call; sent under the lock so that it follows its commit."""
        payload = b""
        if error is None and isinstance(member, MethodMeta) and target is not None:
            try:
                payload = class_codec(target.META).encode_result(member.stl_name, value)
            except ValueError as problem:
                error = CallFailed("InvalidResult", str(problem))
        status, kind, text = _status(error)
        item = wire.Result(self.sender, call_id, status, kind, text, payload).item()
        if len(self._header) + len(item) > self._room:  # the caller learns why, not waiting
            text = f"the result needs {len(item)} bytes, over maxMessageBytes ({self._limit})"
            item = wire.Result(
                self.sender, call_id, wire.FAILED, "MessageTooLarge", text, b""
            ).item()
        with self._lock:
            self._select(target._ctx_ if target is not None else None)
            self._add(item, lambda: "a call result")
            self._flush()


def _refusal(target: NativeObject, member: MethodMeta | PropertyMeta) -> CallError | None:
    """Non-writable properties and ``[local]`` methods cannot be driven from outside (§8.2)."""
    where = f"{target._address_}.{member.stl_name}"
    if isinstance(member, PropertyMeta):
        if not member.writable:
            return CallFailed("AttributeError", f"property '{where}' is not writable")
    elif member.local:
        return CallFailed(
            "LocalMethodError",
            f"calling local methods is not permitted across component boundaries ({where})",
        )
    return None


def _status(error: BaseException | None) -> tuple[int, str, str]:
    if error is None:
        return wire.OK, "", ""
    if isinstance(error, ObjectGone):
        return wire.GONE, "ObjectGone", str(error)
    if isinstance(error, CallDropped):
        return wire.DROPPED, "CallDropped", str(error)
    if isinstance(error, CallTimeout):
        return wire.TIMED_OUT, "CallTimeout", str(error)
    if isinstance(error, CallFailed):
        return wire.FAILED, error.type_name, error.message
    return wire.FAILED, type(error).__name__, str(error)
