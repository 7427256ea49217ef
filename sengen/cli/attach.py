"""How ``sengen shell`` joins a running system: ``--connect ENDPOINT`` with no configuration,
``--attach CONFIG`` with only the transport settings of a system's configuration, and the
default rendezvous when no configuration is given.

A shell that joins connects to the rendezvous rather than listening on it: were it to listen, a
shell started before the system (or on a wrong port) would become the rendezvous of an empty
system and show nothing. It connects to all the rendezvous's ports
(``link.rendezvous_endpoints``), as a process of the system does, so that a hung holder of the
first does not keep it out. So the endpoints are probed first, and when none answers that is
one line and exit status 1 after :data:`PROBE_TIMEOUT_MS`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from sengen.errors import SengenError, UsageError

if TYPE_CHECKING:
    from sengen.runtime.components.shell.join import Join

PROBE_TIMEOUT_MS = 3000
TRANSPORTS = ("transport", "zenoh", "ether")  # the shipped transport's names (pyproject.toml)
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class NoAnswer(SengenError):
    """Nothing answers at the endpoint a shell is to join."""


def connect_entry(endpoints: list[str], base: dict[str, object] | None = None) -> dict[str, object]:
    """A transport entry that connects to ``endpoints`` (``base``: the other keys of a
    configuration's entry). It listens on an ephemeral port of the loopback when the endpoints
    are local, so that the other processes can reach it as they reach each other."""
    entry: dict[str, object] = {**(base or {"name": "transport"})}
    for key in ("rendezvous", "listen", "connect"):
        entry.pop(key, None)
    entry["connect"] = endpoints
    protocol, _, address = endpoints[0].partition("/")
    host = address.rpartition(":")[0]
    local = host in _LOOPBACK and entry.get("mode", "peer") == "peer"
    entry["listen"] = [f"{protocol}/{host}:0"] if local else []
    return entry


def joining(args: argparse.Namespace) -> tuple[dict[str, object] | None, Join | None]:
    """From ``sengen shell``'s arguments: the transport entry of a shell that joins a running
    system (None: the configurations' own, or the default), and what its shell is to say
    (None: it starts a system of its own, ``sengen shell CONFIG``). Probes the endpoint of
    ``--connect`` and ``--attach``: :class:`NoAnswer`."""
    from sengen.runtime.components.shell.join import Join
    from sengen.runtime.components.transport.link import DEFAULT_RENDEZVOUS, rendezvous_endpoints

    if args.connect is not None and args.attach is not None:
        raise UsageError("give --connect or --attach, not both")
    if (args.connect is not None or args.attach is not None) and args.configs:
        raise UsageError("--connect and --attach join a running system: give no CONFIG")
    if args.connect is not None:
        entry, joined = connect_entry(rendezvous_endpoints(args.connect)), args.connect
    elif args.attach is not None:
        entry, joined = attach_entry(Path(args.attach))
    elif args.configs:
        if args.session is not None:
            raise UsageError("--session needs --connect or --attach (or no CONFIG)")
        return None, None
    else:
        return None, Join(DEFAULT_RENDEZVOUS, args.session, default_hint())
    probe(entry, joined)
    return entry, Join(joined, args.session)


def attach_entry(path: Path) -> tuple[dict[str, object], str]:
    """The transport entry of configuration ``path``, turned into one that connects to the
    system's rendezvous (all its ports) or its endpoints, and what it joins as the user reads
    it; ``ConfigurationError`` like any configuration, :class:`NoAnswer`-free (the probe comes
    later)."""
    from sengen.runtime.components.transport.link import DEFAULT_RENDEZVOUS, rendezvous_endpoints
    from sengen.runtime.kernel.config import load_config

    config = load_config(path)
    load = config.tree.get("load")
    entries = [e for e in (load if isinstance(load, list) else []) if isinstance(e, dict)]
    found = next((e for e in entries if e.get("name") in TRANSPORTS), None)
    if found is None:
        raise UsageError(f"--attach {path}: it loads no transport: no system to attach to")
    endpoints = found.get("connect") or found.get("listen")
    if endpoints:  # the system's own endpoints: no rendezvous
        names = [str(e) for e in endpoints] if isinstance(endpoints, list) else [str(endpoints)]
        joined = ", ".join(names)
    else:
        joined = str(found.get("rendezvous", DEFAULT_RENDEZVOUS))
        names = rendezvous_endpoints(joined)
    return connect_entry(names, {str(k): v for k, v in found.items()}), joined


def probe(entry: dict[str, object], joined: str) -> None:
    """Raise :class:`NoAnswer` (naming ``joined``, what the user gave) when none of the entry's
    endpoints answers within the bound: Zenoh opens whichever answer (a hung or absent one costs
    its timeout, not the others)."""
    import zenoh

    from sengen.runtime.components.transport.link import TransportConfig, open_session

    endpoints = entry.get("connect")
    assert isinstance(endpoints, list)
    once = {"connect": {"timeout_ms": PROBE_TIMEOUT_MS}}
    # A secure system is probed with the entry's certificates: TLS without them never answers.
    settings = TransportConfig.model_validate(
        {"connect": endpoints, "listen": [], "zenoh": once, "security": entry.get("security")}
    )
    try:
        session = open_session(settings)
        reached = any(True for _ in session.info.peers_zid())
        session.close()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs
    except zenoh.ZError:
        reached = False
    if not reached:
        raise NoAnswer(
            f"nothing answers at {joined} (waited {PROBE_TIMEOUT_MS // 1000} s):"
            " is the system running, and is this its rendezvous?"
        )


def default_hint() -> str:
    """What a bare ``sengen shell`` that finds nobody suggests. ``SENGEN_PORT`` is a convention
    of the examples' configurations (``@env``), not a setting of sengen: say so."""
    port = os.environ.get("SENGEN_PORT")
    if port:
        return (
            f" (SENGEN_PORT is read only by configurations that use @env(SENGEN_PORT); to join"
            f" port {port}: sengen shell --connect tcp/127.0.0.1:{port})"
        )
    return " (to join another system: sengen shell --connect ENDPOINT or --attach CONFIG)"
