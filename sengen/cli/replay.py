"""``sengen replay ARCHIVE``: a kernel that replays an archive (the ``replayer`` component).

The archive's objects are published on their buses (or the ones ``--bus`` names) with a transport,
so that the shells, recorders and components of other processes see them, unless ``--local``
keeps them in this process, where the configurations given after the archive run beside the
replay (a component to feed, a recorder). Without ``--loop``, the command ends when the replay
reaches the end of the archive (exit 0). An archive that cannot be read, a start outside it and
a replay onto names already used on a bus are one line each and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sengen.errors import UsageError

if TYPE_CHECKING:
    from sengen.runtime import Config, Duration, Kernel, PreloadError

__all__ = ["add_replay_parser", "replay"]

EXIT_BAD_INPUT = 1
# The names the shipped transport is registered under (sengen.components, pyproject.toml).
_TRANSPORTS = ("transport", "zenoh", "ether")
_FOREVER = 1 << 62


def add_replay_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    replay: argparse.ArgumentParser = commands.add_parser(
        "replay", help="replay an archive: its objects live again, for subscribers and tools"
    )
    replay.add_argument("archive", metavar="ARCHIVE", help="an archive written by the recorder")
    replay.add_argument(
        "configs", nargs="*", metavar="CONFIG", help="configurations to run beside the replay"
    )
    replay.add_argument(
        "--rate", type=float, default=1.0, help="archive time per unit of time (default 1)"
    )
    replay.add_argument("--loop", action="store_true", help="start again at the end")
    replay.add_argument(
        "--start", metavar="T", help="start this far into the archive, e.g. 2.5s (default 0)"
    )
    replay.add_argument(
        "--paused", action="store_true", help="publish the objects, then wait for play()"
    )
    replay.add_argument(
        "--bus",
        metavar="MAP",
        action="append",
        default=[],
        help="replay a bus onto another: FROM=TO, e.g. local.plant=local.replay (repeatable)",
    )
    replay.add_argument(
        "--virtual",
        action="store_true",
        help="replay in virtual time, as fast as the system keeps up (deterministic)",
    )
    replay.add_argument(
        "--local", action="store_true", help="no transport: only this process sees the replay"
    )
    return replay


def _bus_map(items: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in items:
        for pair in item.split(","):
            source, sep, target = pair.partition("=")
            if not sep or not source.strip() or not target.strip():
                raise UsageError(
                    f"--bus: expected FROM=TO (e.g. local.plant=local.replay): {pair!r}"
                )
            found[source.strip()] = target.strip()
    return found


def replay_config(args: argparse.Namespace) -> Config:
    """The kernel's configuration: the given ones merged, a replayer, and a transport unless
    ``--local`` or a configuration loads one. ``ConfigurationError`` like any configuration."""
    import yaml

    from sengen.runtime import load_config_text

    if args.rate <= 0 or args.rate != args.rate or args.rate == float("inf"):
        raise UsageError(f"--rate: expected a number greater than 0, got {args.rate}")
    entry: dict[str, object] = {
        "name": "replayer",
        "archive": str(Path(args.archive).resolve()),
        "rate": float(args.rate),
        "loop": bool(args.loop),
        "paused": bool(args.paused),
        "busMap": _bus_map(args.bus),
        "exitAtEnd": not args.loop,
        "exitOnError": True,
    }
    if args.start is not None:
        entry["start"] = args.start
    tree: dict[str, object] = {"load": [entry]}
    if args.configs:
        tree["include"] = [str(Path(p).resolve()) for p in args.configs]
    config = load_config_text(yaml.safe_dump(tree), "<sengen replay>")
    if not args.local and not any(e.name in _TRANSPORTS for e in config.load):
        tree["load"] = [{"name": "transport"}, entry]
    if args.virtual:
        kernel = config.tree.get("kernel")
        tree["kernel"] = {**(kernel if isinstance(kernel, dict) else {})}
        tree["kernel"]["runMode"] = "virtualTime"  # type: ignore[index]
    entry["controlBus"] = config.kernel.bus
    config = load_config_text(yaml.safe_dump(tree), "<sengen replay>")
    user_kernel = config.tree.get("kernel")
    if not (isinstance(user_kernel, dict) and isinstance(user_kernel.get("logConfig"), dict)):
        from sengen.runtime.kernel.extension import LogConfig

        config.kernel.log_config = LogConfig(level="warn")
    return config


def replay(
    args: argparse.Namespace,
    run: Callable[[Kernel, Duration | None], int],
    preload_problems: Callable[[PreloadError], None],
) -> int:
    """The command: checks the archive, builds the kernel, runs it with ``run``."""
    from sengen.runtime import Duration, Kernel, PreloadError, TimeValueError
    from sengen.runtime.archive import ArchiveError
    from sengen.runtime.components.replayer.player import SeekError
    from sengen.runtime.components.replayer.replayer import open_archive
    from sengen.runtime.components.replayer.stage import ReplayError
    from sengen.runtime.kernel.config import ConfigurationError
    from sengen.stl.project import config_import_path

    if args.start is not None:
        try:
            Duration.parse(args.start)
        except TimeValueError as error:
            raise UsageError(f"--start: {error}") from None
    try:
        reader, _ = open_archive(args.archive, args.start)
    except (ArchiveError, ReplayError, SeekError) as error:
        sys.stderr.write(f"sengen: error: {error}\n")
        return EXIT_BAD_INPUT
    reader.close()
    try:
        config = replay_config(args)
    except ConfigurationError as error:
        sys.stderr.write("".join(f"{line}\n" for line in error.problems))
        return EXIT_BAD_INPUT
    for line in config.warnings:
        sys.stderr.write(f"{line}\n")
    for path in args.configs:
        config_import_path(Path(path))
    try:
        kernel = Kernel(config)
    except PreloadError as error:
        preload_problems(error)
        return EXIT_BAD_INPUT
    # Under virtual time the steps go on until the replay ends it (or a signal does).
    return run(kernel, Duration(_FOREVER) if args.virtual else None)
