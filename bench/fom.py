"""HLA FOM import benchmark (fom.md, issue 26): ``python bench/fom.py`` prints a table of figures.

* warm, in process: loading the whole ``hla_fom`` set (27 modules, about 2 MB of XML) and
  resolving the four corpus STL files that import it (one ``sengen.load``, so the set is loaded
  once); for comparison the parse and resolve of the 87 resolvable STL corpus files (the
  workload of ``bench/run.py``). Goal: the FOM figure ≤ 1 s.
* cold: ``sengen build`` of ``dummy_aircraft.stl`` and everything it reaches, in a fresh
  interpreter, with black and with ``--no-format``. Goal: ≤ 3 s.
* bad input at scale: ``sengen check`` of a generated 10 MB FOM with 100,000 enumerators, in a
  fresh interpreter, with its peak memory. Goal: ≤ 10 s.

Warm figures are the minimum over ``--repeat`` runs after one warm-up run. Every figure is given
as wall time and as CPU time: on a shared machine the CPU time is the steadier one.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "tests"))
sys.path.insert(0, str(REPO_ROOT / "bench"))
from corpus_layout import DEFAULT_INCLUDES, FOM_FILES, FOM_INCLUDE, corpus_path  # noqa: E402

CORPUS = corpus_path()
AIRCRAFT = "examples/packages/aircrafts/stl/dummy_aircraft.stl"
WARM_GOAL_S = 1.0
COLD_GOAL_S = 3.0
LARGE_GOAL_S = 10.0


def best(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The minimum wall and CPU times of ``action`` over ``repeat`` runs, after a warm-up."""
    action()  # warm-up: imports, grammar, caches
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def load_fom_files() -> None:
    import sengen

    with contextlib.chdir(CORPUS):
        result = sengen.load(
            [CORPUS / f for f in sorted(FOM_FILES)],
            include_paths=[CORPUS / i for i in DEFAULT_INCLUDES],
        )
    if result.program is None:
        sys.exit(f"bench: the FOM files have errors: {result.diagnostics[:3]}")


def load_stl_corpus() -> None:
    import run as stl_bench

    stl_bench.load_workload(stl_bench.workload())


def timed_child(args: list[str], cwd: Path) -> tuple[float, float, float]:
    """Wall time, CPU time (the machine may be shared: CPU time is the steadier figure) and
    peak resident memory (MB) of ``python -m sengen ARGS``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "sengen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"bench: sengen {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu, after.ru_maxrss / 1024


def cold_build(no_format: bool) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as out:
        args = ["build", "-q", AIRCRAFT, "-I", FOM_INCLUDE, "--out", f"{out}/gen"]
        return timed_child(args + (["--no-format"] if no_format else []), CORPUS)


def large_fom(folder: Path, enumerators: int = 100_000, enums: int = 100) -> int:
    """A set with one module of ``enums`` enumerations sharing ``enumerators`` enumerators,
    padded with semantics to about 10 MB; returns its size in bytes."""
    per_enum = enumerators // enums
    padding = "x" * 10
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>\n<objectModel>\n'
        "<modelIdentification><name>Large</name></modelIdentification>\n"
        "<objects><objectClass><name>HLAobjectRoot</name></objectClass></objects>\n"
        "<dataTypes><enumeratedDataTypes>\n"
    ]
    for e in range(enums):
        parts.append(
            f"<enumeratedData><name>Enum{e}</name><representation>HLAinteger32BE"
            f"</representation><semantics>{padding}</semantics>\n"
        )
        parts += [
            f"  <enumerator><name>Value_{e}_{i}</name><value>{i}</value>"
            f"<semantics>{padding}</semantics></enumerator>\n"
            for i in range(per_enum)
        ]
        parts.append("</enumeratedData>\n")
    parts.append("</enumeratedDataTypes></dataTypes>\n</objectModel>\n")
    (folder / "large").mkdir()
    data = "".join(parts).encode()
    (folder / "large/large.xml").write_bytes(data)
    (folder / "case.stl").write_text('import "large/large.xml"\npackage probe;\n')
    return len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    if not CORPUS.is_dir() or not Path(FOM_INCLUDE).is_dir():
        sys.exit(f"bench: the corpora are missing: expected {CORPUS} and {FOM_INCLUDE}")
    rows: list[tuple[str, float, str]] = []
    wall, cpu = best(load_fom_files, options.repeat)
    rows.append(("hla_fom set + 4 FOM corpus files, warm", wall, "wall"))
    rows.append(("  the same, CPU time", cpu, f"goal ≤ {WARM_GOAL_S:.0f} s"))
    wall, cpu = best(load_stl_corpus, options.repeat)
    rows.append(("87 STL corpus files parse+resolve, warm", wall, "wall"))
    rows.append(("  the same, CPU time", cpu, "(comparison)"))
    for label, no_format in (("", False), (" --no-format", True)):
        wall, cpu, _ = cold_build(no_format)
        rows.append((f"sengen build{label} dummy_aircraft.stl, cold", wall, "wall"))
        rows.append(("  the same, CPU time", cpu, f"goal ≤ {COLD_GOAL_S:.0f} s"))
    with tempfile.TemporaryDirectory() as folder:
        size = large_fom(Path(folder))
        wall, cpu, peak = timed_child(["check", "-q", "case.stl"], Path(folder))
    rows.append((f"sengen check, {size / 1e6:.1f} MB FOM, 100k enumerators", wall, "wall"))
    rows.append(("  the same, CPU time", cpu, f"goal ≤ {LARGE_GOAL_S:.0f} s; peak {peak:.0f} MB"))
    width = max(len(r[0]) for r in rows)
    for label, seconds, goal in rows:
        print(f"{label:<{width}}  {seconds * 1000:9.1f} ms  {goal}")


if __name__ == "__main__":
    main()
