"""Type evolution benchmark (evolution.md §8): ``python bench/evolution.py [--quick]`` prints
the cost of adapted updates as ratios to identical ones, measured in the same run, and the time
to check a pair and build its converters for the corpus's largest class. It reports; it never
asserts.

Updates are timed where adaptation happens: the decoding of a remote change at a proxy's drain
(``ClassCodec.latest`` for an identical class, ``Adapter.latest`` for an adapted one), from the
producer's bytes to the consumer's values. ``Ten`` has ten properties; the remote version widens
``p8`` (i32 → i64) and gives ``p9`` another unit (m → km), so two of ten need conversion. The
identical path is the class's own codec: the feature adds nothing to it (no branch, no lookup).
The whole drain of a proxy (receive, decode, compare, store) is reported too, for the identical
and the adapted class, against a floor: the codec's decode alone.

The check is the check and converter build of the pair (both directions) for the class of the
Sen STL corpus with the most members and arguments; reading the producer's description
(``describe.read``, which a dynamic proxy pays today too) is reported beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import pkgutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
from corpus_layout import DEFAULT_INCLUDES, FOM_FILES, corpus_path, main_run  # noqa: E402

import sengen  # noqa: E402
from sengen.runtime.objects import describe  # noqa: E402
from sengen.runtime.objects.codec import class_codec  # noqa: E402
from sengen.runtime.objects.context import Context  # noqa: E402
from sengen.runtime.objects.evolution import adapted as evo  # noqa: E402
from sengen.runtime.objects.evolution.classes import LABEL, check  # noqa: E402
from sengen.runtime.objects.meta import ClassMeta  # noqa: E402
from sengen.runtime.objects.registry import registry  # noqa: E402

PROPS = "\n".join(f"  var p{i} : i32;" for i in range(8))
LOCAL = f"""package evb;
quantity<f64, m> Len;
class Ten
{{
{PROPS}
  var p8 : i32;
  var p9 : Len;
}}
"""
REMOTE = LOCAL.replace("var p8 : i32", "var p8 : i64").replace("<f64, m>", "<f64, km>")


def generate(base: Path, root: str, text: str) -> Any:
    (base / root / "stl" / "evb").mkdir(parents=True)
    (base / root / "stl" / "evb" / "evb.stl").write_text(text)
    assert sengen.generate([base / root / "stl"], output=base / "out" / root).ok
    importlib.invalidate_caches()
    return importlib.import_module(f"{root}.evb")


def best(loop: Callable[[int], float], loops: int, repeats: int) -> float:
    """Seconds per iteration: the minimum over ``repeats`` timed loops."""
    return min(loop(loops) for _ in range(repeats)) / loops


def timed(work: Callable[[], Any]) -> Callable[[int], float]:
    def loop(loops: int) -> float:
        start = time.perf_counter()
        for _ in range(loops):
            work()
        return time.perf_counter() - start

    return loop


def pair_of(
    own: Callable[[], Any], other: Callable[[], Any], loops: int, repeats: int
) -> tuple[float, float]:
    """Seconds per iteration of ``own`` and ``other``, alternated (both see the same machine):
    the minimum of each over ``repeats`` timed loops."""
    first, second = timed(own), timed(other)
    a = b = float("inf")
    for _ in range(repeats):
        a = min(a, first(loops))
        b = min(b, second(loops))
    return a / loops, b / loops


def updates(local: ClassMeta, remote: ClassMeta, loops: int, repeats: int) -> list[str]:
    adapter = evo.Adapter(
        check(describe.read(describe.describe(remote)), local, LABEL), lambda: "b/1"
    )
    own, theirs = class_codec(local), class_codec(remote)
    every: dict[str, Any] = {f"p{i}": i for i in range(9)} | {"p9": 1.5}
    cases: list[tuple[str, dict[str, Any], float]] = [
        ("all ten properties (2 differ)", every, 2.0),
        ("one identical member", {"p0": 7}, 1.1),
        ("one wider integer", {"p8": 7}, 2.0),
        ("one unit conversion", {"p9": 1.5}, 3.0),
    ]
    lines = [f"{'update':34} {'identical µs':>13} {'adapted µs':>11} {'ratio':>6} {'goal':>5}"]
    for name, values, goal in cases:
        same = [own.encode_properties(values)]
        other = [theirs.encode_properties(values)]
        identical, adapted = pair_of(
            functools.partial(own.latest, same),
            functools.partial(adapter.latest, other, "s.b.t"),
            loops,
            repeats,
        )
        lines.append(
            f"{name:34} {identical * 1e6:13.2f} {adapted * 1e6:11.2f}"
            f" {adapted / identical:6.2f} {goal:5.1f}"
        )
    return lines


def drains(local: ClassMeta, remote: ClassMeta, loops: int, repeats: int) -> list[str]:
    """The whole per-update path at a proxy's drain (``_receive_state_`` then ``_refresh_``:
    decode, compare, store) of an update of all ten properties, each update changing every
    value. The floor is the class codec's decode alone (``ClassCodec.latest``), the least any
    drain does and what the identical path did before this feature too: the identical proxy
    is the class's own generated one, so its figure over the floor is today's proxy work
    (compare and store), with nothing of this feature in it."""
    adapter = evo.Adapter(
        check(describe.read(describe.describe(remote)), local, LABEL), lambda: "b/1"
    )
    identical_class = registry.proxies(local)[1]
    assert not issubclass(identical_class, evo.AdaptedProxy)
    context = Context("bench")
    proxies = []
    for cls in (identical_class, evo.adapted_proxy(adapter, identical_class)):
        state = {p.stl_name: 0 if p.stl_name != "p9" else 0.0 for p in local.all_properties}
        proxies.append(cls(cast(Any, None), context, "t", "s.b", state, 0))  # no calls here
    own, theirs = class_codec(local), class_codec(remote)
    updates = [{f"p{i}": i + k for i in range(9)} | {"p9": 1.5 + k} for k in (1, 2)]
    encoded = [
        [own.encode_properties(u) for u in updates],
        [theirs.encode_properties(u) for u in updates],
    ]

    def drain(proxy: Any, changes: list[bytes]) -> Callable[[], None]:
        receive, refresh, flip = proxy._receive_state_, proxy._refresh_, [0]

        def one() -> None:
            flip[0] ^= 1
            receive(changes[flip[0]], 0)
            refresh()

        return one

    floor_changes, flip = encoded[0], [0]

    def floor() -> None:
        flip[0] ^= 1
        own.latest([floor_changes[flip[0]]])

    identical, adapted = pair_of(
        drain(proxies[0], encoded[0]), drain(proxies[1], encoded[1]), loops, repeats
    )
    bare = best(timed(floor), loops, repeats)
    return [
        f"proxy drain, all ten properties changing: floor (codec decode alone) {bare * 1e6:.2f} µs,"
        f" identical {identical * 1e6:.2f} µs ({identical / bare:.2f}x floor),"
        f" adapted {adapted * 1e6:.2f} µs ({adapted / identical:.2f}x identical)"
    ]


def members(meta: ClassMeta) -> int:
    args = sum(len(m.args) for m in meta.all_methods) + sum(len(e.args) for e in meta.all_events)
    return len(meta.all_properties) + len(meta.all_methods) + len(meta.all_events) + args


def largest_corpus_class(base: Path) -> ClassMeta | None:
    corpus = corpus_path()
    if not corpus.is_dir():
        return None
    every = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.stl"))
    files = [f for f in main_run(every) if f not in FOM_FILES]
    with contextlib.chdir(corpus):
        result = sengen.generate(
            [corpus / f for f in files],
            output=base / "out" / "evb_corpus",
            include_paths=[corpus / i for i in DEFAULT_INCLUDES],
        )
    assert result.ok
    importlib.invalidate_caches()
    package = importlib.import_module("evb_corpus")
    for info in pkgutil.walk_packages(package.__path__, "evb_corpus."):
        importlib.import_module(info.name)
    classes = [e.meta for e in registry.entries("evb_corpus")[1]]
    return max(classes, key=members)


def check_times(meta: ClassMeta, repeats: int) -> tuple[float, float]:
    """Seconds to check the pair and build its converters; to read the description first."""
    text = describe.describe(meta)
    remote = describe.read(text)
    checked = best(timed(lambda: check(remote, meta, LABEL)), 10, repeats)
    read = best(timed(lambda: describe.read(text)), 10, repeats)
    return checked, read


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter repeats")
    options = parser.parse_args(argv)
    loops, repeats = (2_000, 5) if options.quick else (20_000, 9)
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        sys.path.insert(0, str(base / "out"))
        local = generate(base, "evb_local", LOCAL).Ten.META
        remote = generate(base, "evb_remote", REMOTE).Ten.META
        lines = updates(local, remote, loops, repeats) + drains(local, remote, loops, repeats)
        biggest = largest_corpus_class(base)
    print("\n".join(lines))
    if biggest is None:
        print("check + converter build: skipped (the Sen STL corpus is missing)")
    else:
        checked, read = check_times(biggest, repeats)
        print(
            f"check + converter build of {biggest.qualified_name} ({members(biggest)} members"
            f" and arguments): {checked * 1e3:.2f} ms (goal 5 ms); reading its description"
            f" (describe.read, as for a dynamic proxy today): {read * 1e3:.2f} ms more"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
