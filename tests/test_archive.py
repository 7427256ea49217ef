"""The archive format (runtime.md §9.2): MCAP that the ``mcap`` package reads, every message valid
against its channel's JSON Schema, records and seeks read back as written, byte-identical files,
archives cut short, splits, and every bad file as one line."""

from __future__ import annotations

import errno
import io
import json
import os
import random
import struct
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import mcap.reader
import mcap.writer
import pytest
from objects_support import Tree, imported_tree

from sengen.runtime import TimeStamp
from sengen.runtime.archive import ArchiveError, ArchiveReader, ArchiveWriter, Record, part_path
from sengen.runtime.archive import writer as writer_module
from sengen.runtime.kernel.config.loader import writable_file_problem
from sengen.runtime.objects import values
from sengen.runtime.objects.jsonform import json_form
from sengen.runtime.objects.meta import (
    ArrayMeta,
    ClassMeta,
    EnumMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)

ROOT = "objgen_archive"
MS = 1_000_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tree]:
    with imported_tree(tmp_path_factory.mktemp("archive"), ROOT) as generated:
        yield generated


# -- random values in the shell's JSON form ----------------------------------------------------


def raw_value(meta: TypeMeta, rnd: random.Random) -> Any:
    """A random configuration-form value of ``meta`` (checked by values.from_config)."""
    meta = resolve_alias(meta)
    if isinstance(meta, QuantityMeta):
        low = meta.minimum if meta.minimum is not None else -1000
        high = meta.maximum if meta.maximum is not None else 1000
        if meta.value_type.qualified_name in ("f32", "f64"):
            return rnd.uniform(low, high)
        return rnd.randint(int(low), int(high))
    if isinstance(meta, NativeMeta):
        name = meta.qualified_name
        if name == "bool":
            return rnd.random() < 0.5
        if name == "string":
            return "".join(rnd.choice('abcé ñ"\\/\n😀') for _ in range(rnd.randint(0, 8)))
        if name == "Duration":
            return f"{rnd.randint(-10**12, 10**12)} ns"
        if name == "TimeStamp":
            return str(TimeStamp(rnd.randint(0, 2**62)))
        if name == "f32":
            return struct.unpack("<f", struct.pack("<f", rnd.uniform(-1e6, 1e6)))[0]
        if name == "f64":
            return rnd.uniform(-1e9, 1e9)
        if meta.signed:
            return rnd.randint(-(2 ** (meta.bits - 1)), 2 ** (meta.bits - 1) - 1)
        return rnd.randint(0, 2**meta.bits - 1)
    if isinstance(meta, EnumMeta):
        return rnd.choice(meta.enumerators).stl_name
    if isinstance(meta, StructMeta):
        return {f.stl_name: raw_value(f.type, rnd) for f in meta.fields}
    if isinstance(meta, VariantMeta):
        alternative = rnd.choice(meta.alternatives)
        return {"type": alternative.tag, "value": raw_value(alternative.type, rnd)}
    if isinstance(meta, SequenceMeta | ArrayMeta):
        if isinstance(meta, ArrayMeta):
            size = meta.size
        else:
            size = rnd.randint(0, min(meta.max_size or 4, 4))
        if meta.is_bytes:
            return [rnd.randint(0, 255) for _ in range(size)]
        return [raw_value(meta.element, rnd) for _ in range(size)]
    assert isinstance(meta, OptionalMeta)
    return None if rnd.random() < 0.3 else raw_value(meta.target, rnd)


def json_state(
    meta: ClassMeta, rnd: random.Random, names: list[str] | None = None
) -> dict[str, Any]:
    """Random values of (some) properties, as the recorder writes them."""
    out = {}
    for prop in meta.all_properties:
        if names is None or prop.stl_name in names:
            value = values.from_config(prop.type)(raw_value(prop.type, rnd))
            out[prop.stl_name] = json_form(prop.type, value)
    return out


def event_args(meta: ClassMeta, event: str, rnd: random.Random) -> dict[str, Any]:
    found = meta.event(event)
    assert found is not None
    return {
        a.stl_name: json_form(a.type, values.from_config(a.type)(raw_value(a.type, rnd)))
        for a in found.args
    }


# -- a random history ------------------------------------------------------------------------


def history(tree: Tree, seed: int, steps: int = 300) -> list[tuple[str, Any]]:
    """Random additions, changes, events and removals of Gauges and Workers, in time order."""
    rnd = random.Random(seed)
    classes = {"Gauge": tree.devices.Gauge.META, "Worker": tree.devices.Worker.META}
    events = {"Gauge": ["ticked", "pinged"], "Worker": ["added"]}
    live: dict[str, str] = {}
    ops: list[tuple[str, Any]] = []
    time = rnd.randint(0, 10 * MS)
    serial = 0
    for _ in range(steps):
        time += rnd.choice((0, 1, rnd.randint(1, 30 * MS)))
        choice = rnd.random()
        if not live or choice < 0.08:
            serial += 1
            kind = rnd.choice(sorted(classes))
            address = f"s{serial % 2}/b/{kind.lower()}{serial}"
            live[address] = kind
            ops.append(("added", (time, address, classes[kind], json_state(classes[kind], rnd))))
            continue
        address = rnd.choice(sorted(live))
        meta = classes[live[address]]
        if choice < 0.12 and len(live) > 1:
            del live[address]
            ops.append(("removed", (time, address)))
        elif choice < 0.3:
            event = rnd.choice(events[live[address]])
            ops.append(("event", (time, address, event, event_args(meta, event, rnd))))
        else:
            names = rnd.sample([p.stl_name for p in meta.all_properties], rnd.randint(1, 3))
            ops.append(("changed", (time, address, json_state(meta, rnd, names))))
    return ops


def write(path: Path, ops: list[tuple[str, Any]], **options: Any) -> ArchiveWriter:
    writer = ArchiveWriter(path, name="test", selections=["SELECT * FROM s0.b"], **options)
    for index, (kind, args) in enumerate(ops):
        getattr(writer, kind)(*args)
        if options.get("flush_every") and index % 17 == 16:
            writer.flush()
    writer.close()
    return writer


def expected(ops: list[tuple[str, Any]]) -> list[Record]:
    """The records a reader must give for ``ops``."""
    classes: dict[str, str] = {}
    out = []
    for kind, args in ops:
        if kind == "added":
            time, address, meta, state = args
            classes[address] = meta.qualified_name
            out.append(Record("added", time, address, meta.qualified_name, state))
        elif kind == "changed":
            time, address, changed = args
            out.append(Record("state", time, address, classes[address], changed))
        elif kind == "event":
            time, address, event, arguments = args
            out.append(Record("event", time, address, classes[address], arguments, event))
        else:
            time, address = args
            out.append(Record("removed", time, address, classes.pop(address)))
    return out


def state_at(records: list[Record], time: int) -> dict[str, dict[str, Any]]:
    state: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.time_ns > time:
            break
        if record.kind == "added":
            state[record.address] = dict(record.values)
        elif record.kind == "state":
            state[record.address].update(record.values)
        elif record.kind == "removed":
            del state[record.address]
    return state


# -- the format --------------------------------------------------------------------------------


def test_mcaps_own_reader_decodes_every_message_and_each_fits_its_channels_schema(
    tree: Tree, tmp_path: Path
) -> None:
    path = tmp_path / "run.mcap"
    ops = history(tree, seed=random.randrange(10**6))
    write(path, ops, keyframe_period_ns=50 * MS, chunk_bytes=4096)
    counts: dict[str, int] = {}
    validators: dict[int, Any] = {}
    with path.open("rb") as stream:
        reader = mcap.reader.make_reader(stream)
        assert reader.get_header().profile == "sengen"
        for schema, channel, message in reader.iter_messages():
            assert schema is not None and schema.encoding == "jsonschema"
            assert channel.message_encoding == "json"
            if schema.id not in validators:
                document = json.loads(schema.data)
                jsonschema.Draft202012Validator.check_schema(document)
                validators[schema.id] = jsonschema.Draft202012Validator(document)
            validators[schema.id].validate(json.loads(message.data))
            kind = channel.metadata["sengen.kind"]
            counts[kind] = counts.get(kind, 0) + 1
            assert message.log_time == message.publish_time
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        names = [m.name for m in reader.iter_metadata()]
    kinds = [kind for kind, _ in ops]
    assert counts["added"] == kinds.count("added") and counts["removed"] == kinds.count("removed")
    assert counts["event"] == kinds.count("event")
    assert counts["state"] == kinds.count("added") + kinds.count("changed")
    assert counts["keyframe"] > 3
    assert names[0] == "sengen" and set(names[1:]) == {"sengen.type"}
    # A value the schema does not allow is refused: the schemas are not empty shells.
    gauge = next(v for v in validators.values() if v.schema.get("title") == "objtest.Gauge")
    with pytest.raises(jsonschema.ValidationError):
        gauge.validate({"level": "high"})
    with pytest.raises(jsonschema.ValidationError):
        gauge.validate({"mode": "nosuch"})
    with pytest.raises(jsonschema.ValidationError):
        gauge.validate({"nosuch": 1})


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
def test_records_and_states_read_back_as_written(
    tree: Tree, tmp_path: Path, compression: str
) -> None:
    seed = random.randrange(10**6)
    ops = history(tree, seed)
    path = tmp_path / "run.mcap"
    write(path, ops, compression=compression, keyframe_period_ns=40 * MS, chunk_bytes=2048)
    records = expected(ops)
    with ArchiveReader(path) as reader:
        assert list(reader.records()) == records, seed
        info = reader.info()
        assert not info.cut_short and info.compression == compression
        assert (info.start_ns, info.end_ns) == (records[0].time_ns, records[-1].time_ns)
        assert info.counts == {
            kind: sum(r.kind == kind for r in records)
            for kind in ("added", "state", "event", "removed")
        }
        assert set(info.objects) == {r.address for r in records}
        assert info.classes == ("objtest.Gauge", "objtest.Worker")
        assert info.selections == ("SELECT * FROM s0.b",) and info.name == "test"
        # The types come back from the archive alone: the same classes, by structure.
        assert reader.types["objtest.Gauge"].type_hash == tree.devices.Gauge.META.type_hash
        rnd = random.Random(seed)
        for time in [
            info.start_ns,
            info.end_ns,
            *rnd.sample(range(info.start_ns, info.end_ns), 20),
        ]:
            found = reader.state_at(time)
            assert {a: dict(r.values) for a, r in found.items()} == state_at(records, time), time
        start, end = sorted(rnd.sample(range(info.start_ns, info.end_ns), 2))
        some = sorted({r.address for r in records})[:2]
        window = [r for r in records if start <= r.time_ns <= end and r.address in some]
        assert list(reader.records(start_ns=start, end_ns=end, objects=some)) == window


def test_equal_input_gives_identical_bytes(tree: Tree, tmp_path: Path) -> None:
    ops = history(tree, seed=random.randrange(10**6))
    write(tmp_path / "a.mcap", ops, keyframe_period_ns=20 * MS)
    write(tmp_path / "b.mcap", ops, keyframe_period_ns=20 * MS)
    assert (tmp_path / "a.mcap").read_bytes() == (tmp_path / "b.mcap").read_bytes()


def test_an_archive_cut_short_is_read_up_to_its_last_whole_chunk(
    tree: Tree, tmp_path: Path
) -> None:
    ops = history(tree, seed=random.randrange(10**6))
    path = tmp_path / "run.mcap"
    writer = ArchiveWriter(path, name="t", selections=["q"], keyframe_period_ns=30 * MS)
    flushed_at = []
    for index, (kind, args) in enumerate(ops):
        getattr(writer, kind)(*args)
        if index % 50 == 49:
            writer.flush()
            flushed_at.append((index + 1, path.stat().st_size))
    # As a SIGKILL leaves it: flushed chunks, no summary; then a cut inside the last chunk.
    whole = path.read_bytes()
    records = expected(ops)
    for count, size in flushed_at[-2:]:
        for cut in (size, size - 7):
            damaged = tmp_path / f"cut{cut}.mcap"
            damaged.write_bytes(whole[:cut])
            with ArchiveReader(damaged) as reader:
                info = reader.info()
                assert info.cut_short
                got = list(reader.records())
                # Everything before the cut chunk; the records of one chunk go together.
                assert got == records[: len(got)]
                assert len(got) == count if cut == size else len(got) < count
                assert info.end_ns >= got[-1].time_ns
                reader.state_at(info.end_ns)
    writer.close()


@pytest.mark.parametrize(
    "split", [{"split_ns": 300 * MS}, {"split_bytes": 6000, "chunk_bytes": 2000}]
)
def test_split_by_duration_or_size_gives_parts_that_each_read_on_their_own(
    tree: Tree, tmp_path: Path, split: dict[str, int]
) -> None:
    ops = history(tree, seed=random.randrange(10**6), steps=400)
    path = tmp_path / "run.mcap"
    writer = write(path, ops, keyframe_period_ns=100 * MS, **split)
    assert len(writer.parts) > 2 and writer.parts[1] == part_path(path, 1)
    assert part_path(path, 1).name == "run-001.mcap"
    records = expected(ops)
    joined: list[Record] = []
    for part in writer.parts:
        with ArchiveReader(part) as reader:
            assert not reader.cut_short
            got = list(reader.records())
            # Each part starts with a keyframe: the state of objects added in an earlier part.
            first = got[0].time_ns if got else reader.start_ns
            found = reader.state_at(max(first, reader.start_ns))
            before = joined + [r for r in got if r.time_ns <= first]
            assert {a: dict(r.values) for a, r in found.items()} == state_at(before, first)
            joined.extend(got)
    assert joined == records


# -- bad files -----------------------------------------------------------------------------------


def one_line(error: pytest.ExceptionInfo[ArchiveError], *parts: str) -> None:
    text = str(error.value)
    assert "\n" not in text and all(part in text for part in parts), text


def test_files_that_are_not_archives_are_one_line(tmp_path: Path) -> None:
    cases = {
        "empty.mcap": b"",
        "text.mcap": b"hello, world\n" * 10,
        "magic.mcap": mcap.writer.MCAP0_MAGIC,
        "random.mcap": random.randbytes(3000),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ArchiveError) as caught:
            ArchiveReader(tmp_path / name)
        one_line(caught, name)
    foreign = tmp_path / "ros.mcap"
    with foreign.open("wb") as stream:
        ros = mcap.writer.Writer(stream)
        ros.start(profile="ros2", library="test")
        ros.finish()  # type: ignore[no-untyped-call]
    with pytest.raises(ArchiveError) as caught:
        ArchiveReader(foreign)
    one_line(caught, "not a sengen archive", "ros2")
    with pytest.raises(ArchiveError) as caught:
        ArchiveReader(tmp_path / "missing.mcap")
    one_line(caught, "missing.mcap", "No such file")
    with pytest.raises(ArchiveError) as caught:
        ArchiveReader(tmp_path)
    one_line(caught, "not a regular file")
    fifo = tmp_path / "fifo.mcap"
    os.mkfifo(fifo)
    with pytest.raises(ArchiveError) as caught:
        ArchiveReader(fifo)  # refused at once: it would block
    one_line(caught, "not a regular file")


def test_a_damaged_chunk_is_one_line(tree: Tree, tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    write(path, history(tree, seed=7), chunk_bytes=2048, compression="none")
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 40] = bytes(40)
    path.write_bytes(bytes(data))
    with pytest.raises(ArchiveError) as caught, ArchiveReader(path) as reader:
        list(reader.records())
    one_line(caught, "run.mcap", "damaged")


def test_a_seek_outside_the_archive_and_clashing_types_are_one_line(
    tree: Tree, tmp_path: Path
) -> None:
    path = tmp_path / "run.mcap"
    ops = history(tree, seed=3)
    write(path, ops)
    with ArchiveReader(path) as reader:
        for time in (reader.start_ns - 1, reader.end_ns + 1):
            with pytest.raises(ArchiveError) as caught:
                reader.state_at(time)
            one_line(caught, "outside the archive", str(time))
        reader.check_types(lambda name: None)  # nothing loaded: nothing clashes
        gauge = tree.devices.Gauge.META
        reader.check_types({"objtest.Gauge": gauge}.get)
        with pytest.raises(ArchiveError) as caught:
            reader.check_types({"objtest.Worker": gauge}.get)
        one_line(caught, "objtest.Worker", "another definition")


def test_a_bad_path_or_a_full_disk_is_one_line(
    tree: Tree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ArchiveError) as caught:
        ArchiveWriter(blocker / "run.mcap", name="t", selections=["q"])
    one_line(caught, "cannot write archive", "run.mcap")
    # The recorder's check before start (the configuration's, shared with logs and traces).
    assert "is not a folder" in str(writable_file_problem(blocker / "run.mcap"))
    assert writable_file_problem(tmp_path / "new" / "run.mcap") is None
    assert "is a folder, not a file" in str(writable_file_problem(tmp_path))
    assert "not a regular file" in str(writable_file_problem(Path("/dev/null")))

    class Full(io.BufferedWriter):
        """A disk that fills up after 3,000 bytes."""

        def write(self, data: Any) -> int:
            if self.tell() + len(data) > 3000:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return super().write(data)

    def full_open(path: Any, mode: str) -> Full:
        return Full(io.FileIO(path, mode))

    monkeypatch.setattr(writer_module, "open", full_open, raising=False)
    writer = ArchiveWriter(tmp_path / "full.mcap", name="t", selections=["q"], chunk_bytes=512)
    with pytest.raises(ArchiveError) as caught:
        for kind, args in history(tree, seed=5):
            getattr(writer, kind)(*args)
    one_line(caught, "full.mcap", "No space left on device")


def test_the_public_reader_streams_and_seeks(tree: Tree, tmp_path: Path) -> None:
    from sengen.recording import ArchiveReader as Public
    from sengen.recording import open_archive

    assert Public is ArchiveReader
    path = tmp_path / "run.mcap"
    ops = history(tree, seed=11)
    write(path, ops)
    records = expected(ops)
    with open_archive(path) as archive:
        assert next(iter(archive.records())) == records[0]
        middle = records[len(records) // 2].time_ns
        assert {a: dict(r.values) for a, r in archive.state_at(middle).items()} == state_at(
            records, middle
        )


def test_reading_streams_in_bounded_memory(tree: Tree, tmp_path: Path) -> None:
    """Records are read chunk by chunk: the memory a full pass takes does not grow with the
    file (here 20 times the chunk size of messages)."""
    meta = tree.devices.Worker.META
    path = tmp_path / "long.mcap"
    writer = ArchiveWriter(path, name="t", selections=["q"], chunk_bytes=32_768)
    writer.added(0, "s/b/w", meta, json_state(meta, random.Random(1)))
    note = "x" * 200
    for k in range(1, 4000):
        writer.changed(k * MS, "s/b/w", {"total": k, "note": note})
    writer.close()
    tracemalloc.start()
    try:
        with ArchiveReader(path) as reader:
            count = sum(1 for _ in reader.records())
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 4000 and 4000 * len(note) > 10 * 32_768
    assert peak < 6 * 32_768 + 200_000, peak
