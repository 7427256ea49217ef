"""The frames the transport exchanges between processes (runtime.md §8.1, §8.2).

Every message starts with a magic, a version and a kind, then the sender's identity (which a
receiver checks against the key the message arrived on: a frame naming another sender is
dropped), then the frame's body: fixed fields and length-prefixed strings; property values, call
arguments, results and event arguments are the class codec's bytes (``codec.ClassCodec``). A
:class:`Batch` carries many frames of one sender in one message, each as its kind, its body's
length and its body: what one owner's commit shows another process travels as one message, so
that a commit of many changes costs one Zenoh put and one callback, not one per change, and is
applied whole. A commit too long for one message goes as :class:`Part` messages ended by a
:class:`Batch`: the receiver applies them together. Decoding never trusts the peer: every
length is checked against the frame and every failure is a :class:`WireError`, which the
transport logs and drops (a malformed frame must never crash or corrupt a kernel).
"""

from __future__ import annotations

import functools
import itertools
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from sengen.runtime.errors import SengenError

MAGIC = b"SG"
VERSION = 3  # 2: a commit's changes in columns (Changes); 3: Column, Added in columns

_HEAD = struct.Struct("<2sBB")
_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_OID_TIME = struct.Struct("<Qq")
_ITEM = struct.Struct("<BI")  # a frame inside a batch: its kind and its body's size
ITEM_HEAD = _ITEM.size
_CHANGES_HEAD = struct.Struct("<qI")  # the time and the count of a commit's changes
_ADDED_HEAD = struct.Struct("<IqQI")  # interest, time, type hash, count of objects
_COLUMN_HEAD = struct.Struct("<qIII")  # the time, the count, the property's id, a value's size
_MAX_VALUE = 8  # bytes of the largest fixed-size value (f64, i64, u64, Duration, TimeStamp)
_MAX_TEXT = 1 << 16  # names, queries and error texts: anything longer is not ours


class WireError(SengenError, ValueError):
    """A frame that cannot be decoded."""


@functools.lru_cache(maxsize=256)
def _header(kind: int, sender: str) -> bytes:
    """Magic, version, kind and sender: the same for every frame of a kind a process sends."""
    data = sender.encode()
    return _HEAD.pack(MAGIC, VERSION, kind) + _U32.pack(len(data)) + data


def envelope(sender: str) -> int:
    """The bytes a message of ``sender`` takes besides its frames' items: its own header, and
    a step stamp's header and step should it be stamped."""
    return 2 * len(_header(Batch.KIND, sender)) + _U64.size


class _Frame:
    """What every frame class has: its ``KIND``, ``sender`` and ``body()``."""

    __slots__ = ()
    KIND: ClassVar[int]
    sender: str

    def body(self) -> bytes:
        raise NotImplementedError

    def encode(self) -> bytes:
        """The frame as a message of its own."""
        return _header(self.KIND, self.sender) + self.body()

    def item(self) -> bytes:
        """The frame as an item of a :class:`Batch`."""
        return item_of(self.KIND, self.body())


def item_of(kind: int, body: bytes) -> bytes:
    """A frame's body as an item of a :class:`Batch`."""
    return _ITEM.pack(kind, len(body)) + body


class _Writer:
    __slots__ = ("out",)

    def __init__(self) -> None:
        self.out = bytearray()

    def u8(self, value: int) -> _Writer:
        self.out += _U8.pack(value)
        return self

    def u32(self, value: int) -> _Writer:
        self.out += _U32.pack(value)
        return self

    def u64(self, value: int) -> _Writer:
        self.out += _U64.pack(value)
        return self

    def i64(self, value: int) -> _Writer:
        self.out += _I64.pack(value)
        return self

    def text(self, value: str) -> _Writer:
        data = value.encode()
        self.out += _U32.pack(len(data))
        self.out += data
        return self

    def rest(self, data: bytes = b"") -> bytes:
        self.out += data
        return bytes(self.out)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos

    def _take(self, layout: struct.Struct) -> int:
        end = self.pos + layout.size
        if end > len(self.data):
            raise WireError(f"frame truncated at byte {self.pos}")
        (value,) = layout.unpack_from(self.data, self.pos)
        self.pos = end
        return int(value)

    def u8(self) -> int:
        return self._take(_U8)

    def u32(self) -> int:
        return self._take(_U32)

    def u64(self) -> int:
        return self._take(_U64)

    def i64(self) -> int:
        return self._take(_I64)

    def text(self) -> str:
        size = self.u32()
        end = self.pos + size
        if size > _MAX_TEXT or end > len(self.data):
            raise WireError(f"bad text length {size} at byte {self.pos - 4}")
        try:
            value = self.data[self.pos : end].decode()
        except UnicodeDecodeError as error:
            raise WireError(f"text at byte {self.pos} is not UTF-8") from error
        self.pos = end
        return value

    def pair(self) -> tuple[int, int]:
        """An object id and a time, in one unpack (the hot frames start so)."""
        end = self.pos + _OID_TIME.size
        if end > len(self.data):
            raise WireError(f"frame truncated at byte {self.pos}")
        oid, time = _OID_TIME.unpack_from(self.data, self.pos)
        self.pos = end
        return int(oid), int(time)

    def rest(self) -> bytes:
        value = self.data[self.pos :]
        self.pos = len(self.data)
        return value


# Result status codes: how a call ended, so the caller raises the same error class as in-process.
OK, FAILED, GONE, DROPPED, TIMED_OUT = range(5)


@dataclass(frozen=True, slots=True)
class Added(_Frame):
    """Objects of one class on one bus (re)matching interest ``iid`` of the receiver at one
    commit: their full states (the snapshot), and, the first time their class goes to the
    receiver, the class's type description. Laid out in columns, the fixed fields, the object
    ids, where each name and each state ends, then the names and the states, so that a
    publication of many objects costs a receiver a few C calls per message, not per object."""

    KIND: ClassVar[int] = 1
    # An item's bytes besides its bus's, its class's and its description's, and its objects'.
    FIXED: ClassVar[int] = ITEM_HEAD + _ADDED_HEAD.size + 3 * 4
    sender: str
    iid: int
    time: int
    bus: str
    cls: str
    type_hash: int
    description: bytes
    oids: tuple[int, ...]
    names: tuple[str, ...]
    states: tuple[bytes, ...]  # each ``ClassCodec.encode_properties`` of every property

    def body(self) -> bytes:
        names = [name.encode() for name in self.names]
        return Added.columns(
            self.iid, self.time, self.bus, self.cls, self.type_hash, self.description,
            pack_ids(self.oids), names, self.states,
        )[ITEM_HEAD:]  # fmt: skip

    @staticmethod
    def columns(
        iid: int,
        time: int,
        bus: str,
        cls: str,
        type_hash: int,
        description: bytes,
        ids: bytes,
        names: Sequence[bytes],
        states: Sequence[bytes],
    ) -> bytes:
        """The item of objects whose ids are packed (:func:`pack_ids`) and whose names (UTF-8)
        and states are given, without building the frame: what a publication sends."""
        count = len(states)
        w = _Writer()
        w.out += _ADDED_HEAD.pack(iid, time, type_hash, count)
        w.text(bus).text(cls).u32(len(description))
        w.out += description
        w.out += ids
        ends = _ends(count)
        w.out += ends.pack(*itertools.accumulate(map(len, names)))
        w.out += ends.pack(*itertools.accumulate(map(len, states)))
        w.out += b"".join(names)
        w.out += b"".join(states)
        return item_of(Added.KIND, bytes(w.out))

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Added:
        data, pos = r.data, r.pos
        if pos + _ADDED_HEAD.size > len(data):
            raise WireError(f"an addition of {len(data) - pos} bytes is too short")
        iid, time, type_hash, count = _ADDED_HEAD.unpack_from(data, pos)
        r.pos += _ADDED_HEAD.size
        bus, class_name, size = r.text(), r.text(), r.u32()
        if r.pos + size > len(data):
            raise WireError(f"bad description length {size}")
        description = data[r.pos : r.pos + size]
        pos = r.pos + size
        if count == 0 or pos + 16 * count > len(data):
            raise WireError(f"{count} objects do not fit in {len(data) - r.pos} bytes")
        oids = _ids(count).unpack_from(data, pos)
        pos += 8 * count
        name_ends = _ends(count).unpack_from(data, pos)
        state_ends = _ends(count).unpack_from(data, pos + 4 * count)
        pos += 8 * count
        names, states = data[pos : pos + name_ends[-1]], data[pos + name_ends[-1] :]
        for ends, column in ((name_ends, names), (state_ends, states)):
            if ends[-1] != len(column) or list(ends) != sorted(ends):
                raise WireError(f"the columns of {count} objects do not add up")
        r.pos = len(data)
        try:
            text = names.decode()
        except UnicodeDecodeError as error:
            raise WireError("object names are not UTF-8") from error
        starts = (0, *name_ends[:-1])
        if len(text) == len(names):  # ASCII (the usual): characters are bytes
            named = tuple(map(text.__getitem__, map(slice, starts, name_ends)))
        else:
            try:
                named = tuple(names[b:e].decode() for b, e in zip(starts, name_ends, strict=True))
            except UnicodeDecodeError as error:
                raise WireError("object names are not UTF-8") from error
        cut = tuple(map(states.__getitem__, map(slice, (0, *state_ends[:-1]), state_ends)))
        return cls(sender, iid, time, bus, class_name, type_hash, description, oids, named, cut)


@dataclass(frozen=True, slots=True)
class Changes(_Frame):
    """One commit of one owner: the properties each object changed, full values. Laid out in
    columns, the time, the count, the object ids, where each state ends, then the states, so
    that a receiver takes it apart in a few C calls (:meth:`split`), not an item at a time."""

    KIND: ClassVar[int] = 2
    FIXED: ClassVar[int] = ITEM_HEAD + _CHANGES_HEAD.size  # an item's bytes before its columns
    PER_CHANGE: ClassVar[int] = 12  # the id (8) and where the state ends (4)
    sender: str
    time: int
    oids: tuple[int, ...]
    states: tuple[bytes, ...]

    def body(self) -> bytes:
        ends = list(itertools.accumulate(map(len, self.states)))
        head = Changes.item_head(self.time, pack_ids(self.oids), ends)
        return head[ITEM_HEAD:] + b"".join(self.states)

    @staticmethod
    def item_head(time: int, ids: bytes, ends: Sequence[int]) -> bytes:
        """The item of a commit's changes up to their states, which follow it (``ends[-1]``
        bytes): the item's head, then the time, the count, the object ids packed
        (:func:`pack_ids`) and where each state ends. A writer appends the states itself, so
        they are not copied once more into the item."""
        count = len(ends)
        size = _CHANGES_HEAD.size + len(ids) + 4 * count + (ends[-1] if count else 0)
        packed = _packed_range(ends) if type(ends) is range else _ends(count).pack(*ends)
        return _ITEM.pack(Changes.KIND, size) + _CHANGES_HEAD.pack(time, count) + ids + packed

    @staticmethod
    def split(data: bytes, start: int, end: int) -> tuple[int, tuple[int, ...], Iterator[bytes]]:
        """Time, object ids and states of the body ``data[start:end]``, checked, without building
        the frame: the hot path of remote traffic."""
        if end - start < _CHANGES_HEAD.size:
            raise WireError(f"changes of {end - start} bytes are too short")
        time, count = _CHANGES_HEAD.unpack_from(data, start)
        pos = start + _CHANGES_HEAD.size
        if count == 0 or pos + Changes.PER_CHANGE * count > end:
            raise WireError(f"{count} changes do not fit in {end - start} bytes")
        oids = _ids(count).unpack_from(data, pos)
        pos += 8 * count
        ends = _ends(count).unpack_from(data, pos)
        pos += 4 * count
        states = data[pos:end]
        if ends[-1] != len(states) or list(ends) != sorted(ends):
            raise WireError(f"the states of {count} changes do not add up to {len(states)} bytes")
        return time, oids, map(states.__getitem__, map(slice, (0, *ends[:-1]), ends))

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Changes:
        time, oids, states = cls.split(r.data, r.pos, len(r.data))
        r.pos = len(r.data)
        return cls(sender, time, oids, tuple(states))


@dataclass(frozen=True, slots=True)
class Column(_Frame):
    """One commit of one owner that changed the same one fixed-size property of many objects
    (objects of a class updated alike, the common case): the time, the count, the property's
    member id, the size of one value, the object ids, then the values packed one after the
    other as the property's codec packs one (``codec.ClassCodec.column_writer``), so that
    the sender packs and the receiver unpacks them all in one C call each."""

    KIND: ClassVar[int] = 16
    FIXED: ClassVar[int] = ITEM_HEAD + _COLUMN_HEAD.size  # an item's bytes before its columns
    sender: str
    time: int
    member: int
    size: int
    oids: tuple[int, ...]
    values: bytes

    def body(self) -> bytes:
        head = Column.item_head(self.time, self.member, self.size, pack_ids(self.oids))
        return head[ITEM_HEAD:] + self.values

    @staticmethod
    def item_head(time: int, member: int, size: int, ids: bytes) -> bytes:
        """The item up to its values, which follow it (``size`` bytes for each id)."""
        count = len(ids) // 8
        body = _COLUMN_HEAD.size + len(ids) + count * size
        return _ITEM.pack(Column.KIND, body) + _COLUMN_HEAD.pack(time, count, member, size) + ids

    @staticmethod
    def split(data: bytes, start: int, end: int) -> tuple[int, tuple[int, ...], int, int, bytes]:
        """Time, object ids, member id, value size and packed values of the body
        ``data[start:end]``, checked, without building the frame: the hot path of remote
        traffic."""
        if end - start < _COLUMN_HEAD.size:
            raise WireError(f"a column of {end - start} bytes is too short")
        time, count, member, size = _COLUMN_HEAD.unpack_from(data, start)
        pos = start + _COLUMN_HEAD.size
        if count == 0 or not 0 < size <= _MAX_VALUE or pos + (8 + size) * count != end:
            raise WireError(f"{count} values of {size} bytes do not fit in {end - start} bytes")
        oids = _ids(count).unpack_from(data, pos)
        pos += 8 * count
        return time, oids, member, size, data[pos:end]

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Column:
        time, oids, member, size, values = cls.split(r.data, r.pos, len(r.data))
        r.pos = len(r.data)
        return cls(sender, time, member, size, oids, values)


@functools.lru_cache(maxsize=64)
def _ids(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}Q")


@functools.lru_cache(maxsize=64)
def _ends(count: int) -> struct.Struct:
    return struct.Struct(f"<{count}I")


@functools.lru_cache(maxsize=64)
def _packed_range(ends: range) -> bytes:
    """The ends of states of one size (a range), packed: commits of equal payloads repeat them."""
    return _ends(len(ends)).pack(*ends)


def pack_ids(oids: Sequence[int]) -> bytes:
    """Object ids as the ids column of :class:`Changes`."""
    return _ids(len(oids)).pack(*oids)


@dataclass(frozen=True, slots=True)
class Emitted(_Frame):
    """An event of an object, at its commit time."""

    KIND: ClassVar[int] = 3
    sender: str
    oid: int
    time: int
    event: bytes

    def body(self) -> bytes:
        return _OID_TIME.pack(self.oid, self.time) + self.event

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Emitted:
        oid, time = r.pair()
        return cls(sender, oid, time, r.rest())


@dataclass(frozen=True, slots=True)
class Removed(_Frame):
    """An object stopped matching interest ``iid`` (or was removed)."""

    KIND: ClassVar[int] = 4
    sender: str
    iid: int
    oid: int

    def body(self) -> bytes:
        return _Writer().u32(self.iid).rest(_U64.pack(self.oid))

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Removed:
        iid, oid = r.u32(), r.u64()
        _end(r)
        return cls(sender, iid, oid)


@dataclass(frozen=True, slots=True)
class Invoke(_Frame):
    """A method call (``setter`` false) or a writable property's setter (true)."""

    KIND: ClassVar[int] = 5
    sender: str
    call_id: int
    oid: int
    setter: bool
    payload: bytes

    def body(self) -> bytes:
        w = _Writer().u64(self.call_id).u64(self.oid)
        return w.u8(int(self.setter)).rest(self.payload)

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Invoke:
        call_id, oid, setter = r.u64(), r.u64(), r.u8()
        if setter > 1:
            raise WireError(f"bad call flag {setter}")
        return cls(sender, call_id, oid, bool(setter), r.rest())


@dataclass(frozen=True, slots=True)
class Result(_Frame):
    """The end of a call: ``status`` OK with the encoded value, or an error class and text."""

    KIND: ClassVar[int] = 6
    sender: str
    call_id: int
    status: int
    error_type: str
    message: str
    value: bytes

    def body(self) -> bytes:
        w = _Writer().u64(self.call_id).u8(self.status)
        return w.text(self.error_type).text(self.message).rest(self.value)

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Result:
        call_id, status = r.u64(), r.u8()
        if status > TIMED_OUT:
            raise WireError(f"bad result status {status}")
        error_type, message = r.text(), r.text()
        return cls(sender, call_id, status, error_type, message, r.rest())


@dataclass(frozen=True, slots=True)
class Stamped(_Frame):
    """A message a stepped component sent in step ``step``: held by a stepped receiver until
    the hand-over that opens step ``step + 1`` (runtime.md §6.8)."""

    KIND: ClassVar[int] = 7
    sender: str
    step: int
    inner: bytes

    def body(self) -> bytes:
        return _Writer().u64(self.step).rest(self.inner)

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Stamped:
        step = r.u64()
        return cls(sender, step, r.rest())


@dataclass(frozen=True, slots=True)
class EndOfStep(_Frame):
    """END(step) of the sending kernel (``kernel``: its clock object's id), after the last
    frame of that step on this stream, with the interests its stepped components opened in
    the step (id and query text), which the receiver opens at the hand-over."""

    KIND: ClassVar[int] = 8
    sender: str
    step: int
    kernel: int
    interests: tuple[tuple[int, str], ...]

    def body(self) -> bytes:
        w = _Writer().u64(self.step).u64(self.kernel)
        w.u32(len(self.interests))
        for iid, text in self.interests:
            w.u32(iid).text(text)
        return w.rest()

    @classmethod
    def read(cls, sender: str, r: _Reader) -> EndOfStep:
        step, kernel, count = r.u64(), r.u64(), r.u32()
        if count > len(r.data):
            raise WireError(f"bad interest count {count}")
        interests = tuple((r.u32(), r.text()) for _ in range(count))
        _end(r)
        return cls(sender, step, kernel, interests)


@dataclass(frozen=True, slots=True)
class StepOrder(_Frame):
    """From a master, just before its ``processNoFlush`` call opening step ``step``: the Zenoh
    ids of the clock set (where END markers go) and of the kernels whose END(step - 1) the
    receiver awaits first."""

    KIND: ClassVar[int] = 9
    sender: str
    step: int
    members: tuple[str, ...]
    awaited: tuple[str, ...]

    def body(self) -> bytes:
        w = _Writer().u64(self.step)
        for group in (self.members, self.awaited):
            w.u32(len(group))
            for zid in group:
                w.text(zid)
        return w.rest()

    @classmethod
    def read(cls, sender: str, r: _Reader) -> StepOrder:
        step = r.u64()
        groups: list[tuple[str, ...]] = []
        for _ in range(2):
            count = r.u32()
            if count > len(r.data):
                raise WireError(f"bad member count {count}")
            groups.append(tuple(r.text() for _ in range(count)))
        _end(r)
        return cls(sender, step, groups[0], groups[1])


@dataclass(frozen=True, slots=True)
class Bye(_Frame):
    """The sender is leaving in order: everything it sent before has arrived."""

    KIND: ClassVar[int] = 10
    sender: str

    def body(self) -> bytes:
        return b""

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Bye:
        _end(r)
        return cls(sender)


@dataclass(frozen=True, slots=True)
class Batch(_Frame):
    """Frames of the sender in the order it sent them, each as its kind, its body's size and its
    body: never a batch, never a :class:`Stamped` (a stepped sender stamps the whole batch).
    ``data`` is the message read, its items from ``start`` on: they are read from it in place
    (:meth:`items`), not copied out."""

    KIND: ClassVar[int] = 11
    sender: str
    data: bytes
    start: int

    def body(self) -> bytes:
        return self.data[self.start :]

    @staticmethod
    def header(sender: str) -> bytes:
        """The start of a batch message, to which items are appended (:meth:`_Frame.item`,
        :meth:`Changes.item_head`)."""
        return _header(Batch.KIND, sender)

    def items(self) -> Iterator[tuple[int, int, int]]:
        """Kind, start and end in ``data`` of each frame's body, checked as they come: a
        :class:`WireError` ends the batch, the frames before it stand."""
        return items_of(self.data, self.start)

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Batch:
        start, r.pos = r.pos, len(r.data)
        return cls(sender, r.data, start)


def items_of(data: bytes, start: int) -> Iterator[tuple[int, int, int]]:
    """Kind, start and end in ``data`` of each frame's body of a :class:`Batch` or :class:`Part`
    message from ``start`` on, checked as they come: a :class:`WireError` ends the message, the
    frames before it stand."""
    pos, end = start, len(data)
    while pos < end:
        if pos + ITEM_HEAD > end:
            raise WireError(f"batch item truncated at byte {pos}")
        kind, size = _ITEM.unpack_from(data, pos)
        if kind not in _IN_BATCH:
            raise WireError(f"frame kind {kind} in a batch")
        pos += ITEM_HEAD
        if pos + size > end:
            raise WireError(f"batch item of {size} bytes truncated at byte {pos}")
        yield kind, pos, pos + size
        pos += size


@dataclass(frozen=True, slots=True)
class Interest(_Frame):
    """An interest of the sender opened (``opened``) or closed: ``step`` is -1 for a real-time
    subscriber's, the step a stepped one opened it in otherwise (runtime.md §6.8)."""

    KIND: ClassVar[int] = 12
    sender: str
    iid: int
    opened: bool
    step: int
    text: str

    def body(self) -> bytes:
        return _Writer().u32(self.iid).u8(int(self.opened)).i64(self.step).text(self.text).rest()

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Interest:
        iid, opened, step, text = r.u32(), r.u8(), r.i64(), r.text()
        if opened > 1 or step < -1:
            raise WireError(f"bad interest flag {opened} or step {step}")
        _end(r)
        return cls(sender, iid, bool(opened), step, text)


@dataclass(frozen=True, slots=True)
class Names(_Frame):
    """Objects of the sender on ``bus`` announced (name and registration wall time, ns) and
    withdrawn (names), by one commit: duplicate names across processes, detected buses."""

    KIND: ClassVar[int] = 13
    sender: str
    bus: str
    added: tuple[tuple[str, int], ...]
    withdrawn: tuple[str, ...]

    def body(self) -> bytes:
        w = _Writer().text(self.bus).u32(len(self.added))
        for name, registered in self.added:
            w.text(name).i64(registered)
        w.u32(len(self.withdrawn))
        for name in self.withdrawn:
            w.text(name)
        return w.rest()

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Names:
        bus, count = r.text(), r.u32()
        if count > len(r.data):
            raise WireError(f"bad name count {count}")
        added = tuple((r.text(), r.i64()) for _ in range(count))
        count = r.u32()
        if count > len(r.data):
            raise WireError(f"bad name count {count}")
        withdrawn = tuple(r.text() for _ in range(count))
        _end(r)
        return cls(sender, bus, added, withdrawn)


@dataclass(frozen=True, slots=True)
class Part(Batch):
    """A :class:`Batch` whose commit goes on in the next message: held by the receiver until
    the :class:`Batch` that ends it, then applied with it."""

    KIND: ClassVar[int] = 14

    @staticmethod
    def header(sender: str) -> bytes:
        return _header(Part.KIND, sender)

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Part:
        start, r.pos = r.pos, len(r.data)
        return cls(sender, r.data, start)


@dataclass(frozen=True, slots=True)
class Hello(_Frame):
    """The sender saw the receiver join: the receiver announces its interests and names again,
    on its ``@all`` key, which the sender is known by then to hear."""

    KIND: ClassVar[int] = 15
    sender: str

    def body(self) -> bytes:
        return b""

    @classmethod
    def read(cls, sender: str, r: _Reader) -> Hello:
        _end(r)
        return cls(sender)


Frame = (
    Added
    | Changes
    | Column
    | Emitted
    | Removed
    | Invoke
    | Result
    | Stamped
    | EndOfStep
    | StepOrder
    | Bye
    | Batch
    | Interest
    | Names
    | Part
    | Hello
)
_KINDS: dict[int, type[Frame]] = {
    k.KIND: k
    for k in (
        Added,
        Changes,
        Column,
        Emitted,
        Removed,
        Invoke,
        Result,
        Stamped,
        EndOfStep,
        StepOrder,
        Bye,
        Batch,
        Interest,
        Names,
        Part,
        Hello,
    )
}


_IN_BATCH = frozenset(_KINDS) - {Stamped.KIND, Batch.KIND, Part.KIND}


def _end(r: _Reader) -> None:
    if r.pos != len(r.data):
        raise WireError(f"{len(r.data) - r.pos} unexpected bytes at the end")


def decode(data: bytes) -> Frame:
    """The frame in ``data``, or :class:`WireError`."""
    if len(data) < _HEAD.size:
        raise WireError(f"frame of {len(data)} bytes is too short")
    magic, version, kind = _HEAD.unpack_from(data, 0)
    if magic != MAGIC:
        raise WireError("not a sengen frame")
    if version != VERSION:
        raise WireError(f"unsupported frame version {version}")
    frame_type = _KINDS.get(kind)
    if frame_type is None:
        raise WireError(f"unknown frame kind {kind}")
    r = _Reader(data, _HEAD.size)
    sender = r.text()
    return frame_type.read(sender, r)


def kind_name(kind: int) -> str:
    """The name of a frame kind, to name a frame in a log line."""
    frame_type = _KINDS.get(kind)
    return frame_type.__name__ if frame_type is not None else f"kind {kind}"


def sender_of(data: bytes) -> str:
    """The sender a message's header names, or "" when its header cannot be read: to say where
    a message that fails to decode came from."""
    if len(data) < _HEAD.size or _HEAD.unpack_from(data, 0)[0] != MAGIC:
        return ""
    try:
        return _Reader(data, _HEAD.size).text()
    except WireError:
        return ""


def read_item(sender: str, kind: int, body: bytes) -> Frame:
    """A frame of a :class:`Batch` (its kind checked by :meth:`Batch.read`), or
    :class:`WireError`."""
    return _KINDS[kind].read(sender, _Reader(body, 0))
