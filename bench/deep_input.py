"""Deep and hostile input, timed (issue 21 item 6): ``python bench/deep_input.py`` prints, for
each case, the wall time and peak memory of one fresh ``sengen`` process.

* STL chains of 5,000 levels: class inheritance (the goal: ``sengen check`` and ``sengen build``
  within 5 s each), struct inheritance, struct fields, aliases;
* a configuration of nested aliases ("billion laughs", 1 KB) refused by ``sengen run --check``.

``--depth N`` changes the 5,000.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 5.0
_MEASURED = (
    "import resource, sys\n"
    "from sengen.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print('maxrss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def chain(kind: str, depth: int) -> str:
    lines = ["package deep;", ""]
    for i in range(depth):
        if kind == "class":
            parent = "" if i == 0 else f" : extends C{i - 1}"
            lines.append(f"class C{i}{parent} {{ var v{i} : i32; }}")
        elif kind == "struct":
            parent = "" if i == 0 else f" : S{i - 1}"
            lines.append(f"struct S{i}{parent} {{ s{i} : i32 }}")
        elif kind == "field":
            lines.append(f"struct F{i} {{ x : {'i32' if i == 0 else f'F{i - 1}'} }}")
        else:
            lines.append(f"alias A{i} {'i32' if i == 0 else f'A{i - 1}'};")
    return "\n".join(lines) + "\n"


LAUGHS = (
    "a: &a ["
    + ",".join(["lol"] * 9)
    + "]\n"
    + "".join(
        f"{b}: &{b} [" + ",".join([f"*{a}"] * 9) + "]\n"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


def measure(args: list[str], cwd: Path) -> tuple[float, int, int]:
    """Seconds, peak RSS in MB and exit code of ``sengen ARGS`` in a fresh interpreter."""
    begin = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *args], cwd=cwd, capture_output=True, text=True
    )
    took = time.perf_counter() - begin
    rss = next(
        (int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("maxrss")),
        0,
    )
    return took, rss // 1024, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depth", type=int, default=5000)
    depth = parser.parse_args().depth
    print(f"{'case':<42} {'seconds':>8} {'MB':>6} {'exit':>5}")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for kind in ("class", "struct", "field", "alias"):
            source = root / f"{kind}.stl"
            source.write_text(chain(kind, depth))
            for command in ("check", "build"):
                args = [command, source.name] + (
                    ["--out", f"out_{kind}"] if command == "build" else []
                )
                took, rss, code = measure(args, root)
                goal = f"  (goal {GOAL_S:g} s)" if kind == "class" else ""
                label = f"{kind} chain of {depth}: sengen {command}"
                print(f"{label:<42} {took:8.2f} {rss:6} {code:5}{goal}")
        (root / "laughs.yaml").write_text(LAUGHS)
        took, rss, code = measure(["run", "laughs.yaml", "--check"], root)
        print(f"{'nested aliases (1 KB): sengen run --check':<42} {took:8.2f} {rss:6} {code:5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
