"""``sengen security``: the secure mode's tools. Only ``init`` so far, which makes a test bench's
certificates (``security_bench``, loaded when it runs: it needs ``cryptography``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_BAD_INPUT = 1


def add_security_commands(commands: Any) -> None:
    """``sengen security ...`` under ``commands`` (the subparsers of ``sengen``)."""
    security = commands.add_parser("security", help="secure mode: certificates and permissions")
    actions = security.add_subparsers(dest="security_command", required=True, metavar="ACTION")
    init = actions.add_parser(
        "init", help="make a CA, a certificate per process and a starter permissions file"
    )
    init.add_argument("folder", metavar="DIR", help="the certificates folder (made or added to)")
    init.add_argument(
        "--process",
        dest="processes",
        metavar="NAME",
        nargs="+",
        required=True,
        help="the identities to issue certificates for (their certificates' common names)",
    )
    init.add_argument("--debug", action="store_true", help="show tracebacks of internal errors")
    init.set_defaults(handler=_init)


def _init(args: argparse.Namespace) -> int:
    from sengen.cli.security_bench import PERMISSIONS_FILE, BenchError, init_bench

    folder = Path(args.folder)
    try:
        written = init_bench(folder, args.processes)
    except BenchError as error:
        sys.stderr.write(f"sengen: error: {error}\n")
        return EXIT_BAD_INPUT
    sys.stdout.write(f"wrote in {folder}/:\n")
    sys.stdout.writelines(f"  {path.name}\n" for path in written)
    if folder / PERMISSIONS_FILE not in written:
        sys.stdout.write(f"kept {PERMISSIONS_FILE}: add the new identities to it\n")
    sys.stdout.write(
        "ca.key signs certificates: keep it off the machines that run the system\n"
        "next: in each process's configuration, under the transport's entry:\n"
        f"  security: {{identity: NAME, certificates: {folder},"
        f" permissions: {folder / PERMISSIONS_FILE}}}\n"
    )
    return EXIT_OK
