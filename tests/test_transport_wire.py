"""The transport's frames: golden bytes for each kind (a wire change must be deliberate) and
round trips of random values through every kind (hypothesis)."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sengen.runtime.components.transport import wire

SENDER = "0123456789abcdef0123456789abcdef"

# One frame of each kind with values that are not zeros, and its bytes (hex) after the header.
GOLDEN: list[tuple[wire.Frame, str]] = [
    (
        wire.Added(
            SENDER,
            7,
            -5,
            "s.b",
            "p.C",
            0xABCDEF,
            b"D",
            (0x1122334455667788, 9),
            ("n", "é"),
            (b"S", b"TU"),
        ),
        "07000000fbffffffffffffffefcdab00000000000200000003000000732e6203000000702e4301000000"
        "4488776655443322110900000000000000010000000300000001000000030000006ec3a9535455",
    ),
    (
        wire.Changes(SENDER, 42, (3, 9), (b"ab", b"cde")),
        "2a00000000000000020000000300000000000000090000000000000002000000050000006162636465",
    ),
    (
        wire.Column(
            SENDER, 42, 0x01020304, 8, (3, 9), bytes.fromhex("000000000000f83f" "00000000000002c0")
        ),
        "2a00000000000000020000000403020108000000030000000000000009000000000000000000000000"
        "00f83f00000000000002c0",
    ),
    (wire.Emitted(SENDER, 5, 77, b"ev"), "05000000000000004d000000000000006576"),
    (wire.Removed(SENDER, 3, 0xFEDC), "03000000dcfe000000000000"),
    (wire.Invoke(SENDER, 12, 34, True, b"xy"), "0c000000000000002200000000000000017879"),
    (
        wire.Result(SENDER, 12, wire.FAILED, "E", "no", b"v"),
        "0c00000000000000010100000045020000006e6f76",
    ),
    (wire.Stamped(SENDER, 9, b"in"), "0900000000000000696e"),
    (
        wire.EndOfStep(SENDER, 4, 99, ((2, "q"),)),
        "0400000000000000630000000000000001000000020000000100000071",
    ),
    (
        wire.StepOrder(SENDER, 6, ("a",), ("b", "c")),
        "06000000000000000100000001000000610200000001000000620100000063",
    ),
    (wire.Bye(SENDER), ""),
    (wire.Hello(SENDER), ""),
    (
        wire.Interest(SENDER, 8, True, -1, "SELECT"),
        "0800000001ffffffffffffffff0600000053454c454354",
    ),
    (
        wire.Names(SENDER, "s.b", (("x", 1000),), ("y",)),
        "03000000732e62010000000100000078e803000000000000010000000100000079",
    ),
]


def _header(kind: int) -> str:
    return (b"SG" + bytes([wire.VERSION, kind]) + len(SENDER).to_bytes(4, "little")).hex() + (
        SENDER.encode().hex()
    )


@pytest.mark.parametrize("frame, body", GOLDEN, ids=lambda v: type(v).__name__)
def test_each_frame_kind_has_pinned_bytes(frame: wire.Frame, body: str) -> None:
    assert frame.encode().hex() == _header(frame.KIND) + body
    assert wire.decode(frame.encode()) == frame


def test_every_frame_kind_is_pinned() -> None:
    pinned = {type(f) for f, _ in GOLDEN}
    assert pinned | {wire.Batch, wire.Part} == set(wire._KINDS.values())


def test_a_batch_and_a_part_carry_items_and_differ_by_kind_only() -> None:
    items = wire.Removed(SENDER, 3, 4).item() + wire.Bye(SENDER).item()
    batch = wire.Batch.header(SENDER) + items
    part = wire.Part.header(SENDER) + items
    assert batch.hex() == _header(11) + "040c0000000300000004000000000000000a00000000"
    assert batch[4:] == part[4:] and (batch[3], part[3]) == (11, 14)
    decoded = wire.decode(part)
    assert isinstance(decoded, wire.Part)
    assert list(decoded.items()) == list(wire.decode(batch).items())  # type: ignore[union-attr]


texts = st.text(max_size=40)
u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
blobs = st.binary(max_size=64)
senders = st.text(alphabet="0123456789abcdef", min_size=1, max_size=32)

FRAMES = st.one_of(
    st.integers(1, 6).flatmap(
        lambda n: st.builds(
            wire.Added,
            senders,
            u32,
            i64,
            texts,
            texts,
            u64,
            blobs,
            st.tuples(*[u64] * n),
            st.tuples(*[texts] * n),
            st.tuples(*[blobs] * n),
        )
    ),
    st.integers(1, 8).flatmap(
        lambda n: st.builds(
            wire.Changes,
            senders,
            i64,
            st.tuples(*[u64] * n),
            st.tuples(*[blobs] * n),
        )
    ),
    st.tuples(st.integers(1, 8), st.integers(1, 8)).flatmap(
        lambda shape: st.builds(
            wire.Column,
            senders,
            i64,
            u32,
            st.just(shape[1]),
            st.tuples(*[u64] * shape[0]),
            st.binary(min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]),
        )
    ),
    st.builds(wire.Emitted, senders, u64, i64, blobs),
    st.builds(wire.Removed, senders, u32, u64),
    st.builds(wire.Invoke, senders, u64, u64, st.booleans(), blobs),
    st.builds(wire.Result, senders, u64, st.integers(0, wire.TIMED_OUT), texts, texts, blobs),
    st.builds(wire.Stamped, senders, u64, blobs),
    st.builds(
        wire.EndOfStep, senders, u64, u64, st.lists(st.tuples(u32, texts), max_size=4).map(tuple)
    ),
    st.builds(
        wire.StepOrder,
        senders,
        u64,
        st.lists(texts, max_size=4).map(tuple),
        st.lists(texts, max_size=4).map(tuple),
    ),
    st.builds(wire.Bye, senders),
    st.builds(wire.Hello, senders),
    st.builds(wire.Interest, senders, u32, st.booleans(), st.integers(-1, 2**63 - 1), texts),
    st.builds(
        wire.Names,
        senders,
        texts,
        st.lists(st.tuples(texts, i64), max_size=6).map(tuple),
        st.lists(texts, max_size=6).map(tuple),
    ),
)


@settings(max_examples=300, deadline=None)
@given(FRAMES)
def test_every_frame_round_trips_alone_and_in_a_batch(frame: Any) -> None:
    assert wire.decode(frame.encode()) == frame
    if frame.KIND == wire.Stamped.KIND:
        return  # never an item of a batch
    batch = wire.decode(wire.Batch.header(frame.sender) + frame.item())
    assert isinstance(batch, wire.Batch)
    ((kind, start, end),) = list(batch.items())
    assert wire.read_item(frame.sender, kind, batch.data[start:end]) == frame


@settings(max_examples=300, deadline=None)
@given(FRAMES, st.data())
def test_a_cut_or_flipped_frame_is_a_wire_error_or_another_frame(frame: Any, data: Any) -> None:
    encoded = bytearray(frame.encode())
    cut = data.draw(st.integers(0, len(encoded)))
    with contextlib.suppress(wire.WireError):
        wire.decode(bytes(encoded[:cut]))
    position = data.draw(st.integers(0, len(encoded) - 1))
    encoded[position] ^= data.draw(st.integers(1, 255))
    with contextlib.suppress(wire.WireError):
        wire.decode(bytes(encoded))
