"""Front-end benchmarks over Sen's STL corpus: ``python bench/run.py`` prints a table of figures.

Workload: every resolvable corpus file (the 87 that are not HLA FOM files, stl.md §11.4), loaded
as the eleven runs of stl.md §11.3 with the include roots of §11.2, the four FOM files left out so
that every run resolves without error.

Figures:

* cold: the workload in a fresh interpreter, ``import sengen`` and the grammar load included
  (with Lark's grammar cache as a user has it after the first run, and with an empty cache);
* warm: best of N in-process repetitions, split into lexing (``sengen.stl.lexer.tokenize``), parsing
  (Lark: ``sengen.stl.parser.parse`` minus its tokenize), comment attachment and resolution
  (the rest of ``sengen.load``: reading files, imports, resolution, the model), and the
  per-file mean;
* ``sengen check`` over the §11.3 main run as one command: wall time including interpreter start,
  best of 3.

``--fuzz N`` runs the fuzz property test of ``tests/test_fuzz.py`` with N examples instead.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
# The corpus layout (include roots, alternative groups, FOM files) is shared with the tests.
sys.path.insert(0, str(REPO_ROOT / "tests"))
from corpus_layout import (  # noqa: E402
    CONAN_INCLUDES,
    DEFAULT_INCLUDES,
    FOM_FILES,
    LATER_MEMBERS,
    corpus_path,
)
from corpus_layout import main_run as _main_run  # noqa: E402

CORPUS = corpus_path()
WARM_GOAL_MS = 400.0
COMMAND_GOAL_MS = 1500.0

Run = tuple[tuple[str, ...], tuple[str, ...]]  # (files, include roots), corpus-relative


def corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        sys.exit(f"bench: the Sen STL corpus is missing: expected {CORPUS}")
    return sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.stl"))


def main_run() -> tuple[str, ...]:
    return tuple(_main_run(corpus_files()))


def workload() -> list[Run]:
    """The eleven runs of §11.3 without the FOM files: all resolvable corpus files."""
    every = corpus_files()
    conan = tuple(f for f in every if f.startswith(".conan/"))
    runs: list[Run] = [
        (tuple(f for f in main_run() if f not in FOM_FILES), DEFAULT_INCLUDES),
        (conan, CONAN_INCLUDES),
    ]
    runs += [((member,), DEFAULT_INCLUDES) for member in LATER_MEMBERS]
    return runs


def load_workload(runs: Sequence[Run]) -> int:
    """Load every run (cwd: the corpus root); returns the number of files parsed."""
    import sengen

    parsed = 0
    with contextlib.chdir(CORPUS):
        for files, includes in runs:
            result = sengen.load(
                [CORPUS / f for f in files], include_paths=[CORPUS / i for i in includes]
            )
            if result.program is None:
                errors = [d.format_header() for d in result.diagnostics if d.is_error]
                raise SystemExit(f"bench: a workload run has errors: {errors[:3]}")
            parsed += len(result.program.files)
    return parsed


# --------------------------------------------------------------------------------------------
# cold: a fresh interpreter


def cold_child() -> None:
    """Runs in the fresh interpreter: times import, grammar load and the workload, prints JSON."""
    runs = workload()
    start = time.perf_counter()
    import sengen.stl.parser

    imported = time.perf_counter()
    sengen.stl.parser.grammar_parser()
    grammar = time.perf_counter()
    parsed = load_workload(runs)
    end = time.perf_counter()
    figures = {
        "import": imported - start,
        "grammar": grammar - imported,
        "load": end - grammar,
        "total": end - start,
        "parsed": parsed,
    }
    print(json.dumps(figures))


def cold(empty_grammar_cache: bool) -> dict[str, float]:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="sengen-bench-") as tmp:
        if empty_grammar_cache:
            env["TMPDIR"] = tmp  # Lark keeps its grammar cache in the temporary folder
        result = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--cold-child"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
    if result.returncode != 0:
        raise SystemExit(f"bench: the cold run failed:\n{result.stderr}")
    figures: dict[str, float] = json.loads(result.stdout)
    return figures


# --------------------------------------------------------------------------------------------
# warm: in-process, with the phases timed by wrapping sengen's functions


@dataclass
class Phases:
    lex: float = 0.0
    parse: float = 0.0  # sengen.stl.parser.parse, tokenize included
    attach: float = 0.0
    total: float = 0.0
    parsed: int = 0
    calls: dict[str, int] = field(default_factory=dict)


@contextlib.contextmanager
def instrumented(phases: Phases) -> Iterator[None]:
    """Wrap tokenize (as sengen.stl.parser calls it), parse and attach (as sengen.stl.loader
    calls them)."""
    import sengen.stl.loader
    import sengen.stl.parser

    def timed(func: Callable[..., Any], slot: str) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                setattr(phases, slot, getattr(phases, slot) + time.perf_counter() - start)
                phases.calls[slot] = phases.calls.get(slot, 0) + 1

        return wrapper

    # (module, global name, phase): the names as the calling module looks them up.
    targets = [
        (sengen.stl.parser, "tokenize", "lex"),
        (sengen.stl.loader, "parse", "parse"),
        (sengen.stl.loader, "attach", "attach"),
    ]
    originals = [(module, name, getattr(module, name)) for module, name, _ in targets]
    for module, name, slot in targets:
        setattr(module, name, timed(getattr(module, name), slot))
    try:
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


def warm(runs: Sequence[Run], repeat: int) -> tuple[float, Phases]:
    """Best total of ``repeat`` plain loads, and the phases of the best instrumented load."""
    load_workload(runs)  # warm-up: grammar, imports, caches
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        load_workload(runs)
        best = min(best, time.perf_counter() - start)
    best_phases = Phases(total=float("inf"))
    for _ in range(repeat):
        phases = Phases()
        with instrumented(phases):
            start = time.perf_counter()
            phases.parsed = load_workload(runs)
            phases.total = time.perf_counter() - start
        if phases.total < best_phases.total:
            best_phases = phases
    return best, best_phases


# --------------------------------------------------------------------------------------------
# the command


def command(repeat: int) -> tuple[float, int, int]:
    """``sengen check`` over the main run as one command: best wall time, exit code, files."""
    files = main_run()
    args = [sys.executable, "-m", "sengen", "check", *files]
    args += [arg for include in DEFAULT_INCLUDES for arg in ("-I", include)]
    best = float("inf")
    code = 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = subprocess.run(args, cwd=CORPUS, capture_output=True, timeout=300, check=False)
        best = min(best, time.perf_counter() - start)
        code = result.returncode
    return best, code, len(files)


# --------------------------------------------------------------------------------------------
# output


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f} ms"


def row(label: str, seconds: float | None, goal_ms: float | None = None, text: str = "") -> str:
    value = ms(seconds) if seconds is not None else f"{text:>12}"
    if goal_ms is None or seconds is None:
        goal, verdict = "", ""
    else:
        goal = f"{goal_ms:.0f} ms"
        verdict = "ok" if seconds * 1000 <= goal_ms else "MISSED"
    return f"{label:<58} {value}  {goal:>8}  {verdict}"


def share(part: float, whole: float) -> str:
    return f"  ({part / whole:5.1%})" if whole > 0 else ""


def benchmark(repeat: int, command_repeat: int) -> int:
    runs = workload()
    inputs = sum(len(files) for files, _ in runs)
    cached = cold(empty_grammar_cache=False)
    uncached = cold(empty_grammar_cache=True)
    best, phases = warm(runs, repeat)
    wall, code, command_files = command(command_repeat)

    lark = phases.parse - phases.lex
    resolution = phases.total - phases.parse - phases.attach
    parsed = phases.parsed
    lines = [
        f"sengen front end over {CORPUS}",
        f"workload: {inputs} resolvable corpus files in {len(runs)} runs (stl.md §11.3, FOM files"
        f" left out), {parsed} file loads with imports",
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs",
        "",
        f"{'figure':<58} {'value':>12}  {'goal':>8}",
        "-" * 90,
        row("cold: fresh process, parse+resolve all, grammar load incl.", cached["total"]),
        row("  import sengen", cached["import"]),
        row("  grammar load (Lark cache present)", cached["grammar"]),
        row("  parse+resolve", cached["load"]),
        row("cold: the same with an empty Lark grammar cache", uncached["total"]),
        row("  grammar load (built from stl.lark)", uncached["grammar"]),
        row(f"warm: parse+resolve all, best of {repeat} in-process", best, WARM_GOAL_MS),
        row("  lexing (sengen.stl.lexer.tokenize)", phases.lex) + share(phases.lex, phases.total),
        row("  parsing (Lark: parse minus tokenize)", lark) + share(lark, phases.total),
        row("  comment attachment (sengen.stl.comments.attach)", phases.attach)
        + share(phases.attach, phases.total),
        row("  resolution (rest of load: reading, imports, model)", resolution)
        + share(resolution, phases.total),
        row("  instrumented total (the split above adds up to this)", phases.total),
        row(f"per-file mean (warm, {parsed} file loads)", best / parsed if parsed else None),
        row(
            f"sengen check, main run ({command_files} files, one command), best of"
            f" {command_repeat}",
            wall,
            COMMAND_GOAL_MS,
        ),
        row("  exit code (1 expected: the four FOM files)", None, text=str(code)),
    ]
    print("\n".join(lines))
    if code != 1:
        print(f"bench: warning: sengen check exited with {code}, expected 1 (stl.md §11.4)")
    return 0


def fuzz(examples: int) -> int:
    """The fuzz property test of tests/test_fuzz.py with ``examples`` examples."""
    env = dict(os.environ, SENGEN_FUZZ_EXAMPLES=str(examples))
    args = [sys.executable, "-m", "pytest", "tests/test_fuzz.py", "-q", "-p", "no:cacheprovider"]
    args += ["-k", "test_mutated_corpus_files_give_diagnostics_only"]
    args += ["--hypothesis-show-statistics"]
    start = time.perf_counter()
    code = subprocess.run(args, cwd=REPO_ROOT, env=env, check=False).returncode
    print(f"fuzz: {examples} examples in {time.perf_counter() - start:.1f} s, exit code {code}")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=10, help="warm repetitions (best of N)")
    parser.add_argument(
        "--command-repeat", type=int, default=3, help="repetitions of the command (best of N)"
    )
    parser.add_argument("--fuzz", type=int, metavar="N", help="run the fuzz test with N examples")
    parser.add_argument("--cold-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold_child:
        cold_child()
        return 0
    if args.fuzz is not None:
        return fuzz(args.fuzz)
    return benchmark(max(1, args.repeat), max(1, args.command_repeat))


if __name__ == "__main__":
    sys.exit(main())
