"""``sengen web [CONFIG...]``: the web explorer joined to a running system over the transport,
as ``sengen shell`` joins it (docs/guide/web.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sengen.runtime.kernel.kernel import Kernel

EXIT_BAD_INPUT = 1


def add_web_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    web: argparse.ArgumentParser = commands.add_parser(
        "web", help="the web explorer and its API on a running system"
    )
    web.add_argument("configs", nargs="*", metavar="CONFIG", help="YAML configurations to run")
    web.add_argument("--host", help="the interface to listen on (127.0.0.1)")
    web.add_argument("--port", type=int, help="the port (8080; 0 for any free one)")
    web.add_argument("--token", help="the token writes need (made up when --host is not local)")
    return web


def web_kernel(args: argparse.Namespace) -> Kernel | int:
    """The kernel to run, or an exit code after a message on standard error."""
    from sengen.runtime.components.web.launch import web_config
    from sengen.runtime.kernel.config import ConfigurationError
    from sengen.runtime.kernel.kernel import Kernel, PreloadError

    keys = {k: v for k in ("host", "port", "token") if (v := getattr(args, k)) is not None}
    paths = [Path(p) for p in args.configs]
    try:
        config = web_config(paths, keys)
    except ConfigurationError as error:
        sys.stderr.write("".join(f"{line}\n" for line in error.problems))
        return EXIT_BAD_INPUT
    for line in config.warnings:
        sys.stderr.write(f"{line}\n")
    from sengen.stl.project import config_import_path  # pydantic: not for every command

    for path in paths:
        config_import_path(path)
    try:
        return Kernel(config)
    except PreloadError as error:
        for line in error.problems:
            sys.stderr.write(f"{line}\n")
        return EXIT_BAD_INPUT
