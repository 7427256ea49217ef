"""The Zenoh side of the transport: configuration, opening the session, the key layout.

Keys, version 2 (docs/design/transport-keys.md): everything a process puts, declares or answers
lives under its own prefix ``sengen/v2/<identity>``, so that a receiver takes a sender's identity
from the key a message arrived on, never from its payload:

* ``<prefix>/@alive/<pid>/<app>``: liveliness, the process's one token (its lease);
* ``<prefix>/@all``: frames for every process (interests opened and closed, names announced
  and withdrawn);
* ``<prefix>/@to/<receiver>``: frames for one process (objects, changes, events, calls,
  results, step sync, the goodbye), one ordered stream per pair of processes;
* ``<prefix>/@info``: queryable, the process's record (``directory``).

A process declares a constant number of Zenoh entities, whatever its objects, interests and
peers (one publisher per peer it sends to).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import zenoh
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from sengen.runtime.components.transport.security.access import zenoh_settings
from sengen.runtime.components.transport.security.settings import SecurityConfig, require_tls
from sengen.runtime.components.transport.zenoh_values import (
    endpoints_problem,
    passthrough_problem,
)
from sengen.runtime.kernel.extension import fail

PREFIX = "sengen/v2"
DEFAULT_RENDEZVOUS = "tcp/127.0.0.1:7447"
RENDEZVOUS_PORTS = 4  # the rendezvous port and the next three (open_session)
OPEN_TIMEOUT_MS = 2000  # a handshake on one link, loopback or LAN
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024
DEFAULT_MAX_OBJECTS = 250_000
DEFAULT_MAX_INTERESTS = 10_000


class TransportConfig(BaseModel):
    """The ``load: [{name: transport, ...}]`` keys (runtime.md §8.2)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    mode: Literal["peer", "client"] = "peer"
    rendezvous: str | None = DEFAULT_RENDEZVOUS
    listen: list[str] | None = None
    connect: list[str] | None = None
    multicast_scouting: bool = Field(default=False, alias="multicastScouting")
    lease_ms: int | None = Field(default=None, alias="leaseMs", gt=0)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE, alias="maxMessageBytes", gt=0)
    # Per peer: what one process may make this one hold (refused beyond, warned per interval).
    max_objects_per_peer: int = Field(default=DEFAULT_MAX_OBJECTS, alias="maxObjectsPerPeer", gt=0)
    max_interests_per_peer: int = Field(
        default=DEFAULT_MAX_INTERESTS, alias="maxInterestsPerPeer", gt=0
    )
    zenoh: dict[str, Any] = Field(default_factory=dict)
    security: SecurityConfig | None = None  # secure mode (security/settings.py)

    @field_validator("listen", "connect", "rendezvous", "zenoh")
    @classmethod
    def _zenoh_values(cls, value: Any, info: ValidationInfo) -> Any:
        """Refused here in one line, not by Zenoh when the session opens (zenoh_values)."""
        if isinstance(value, dict):
            problem = passthrough_problem(value)
        elif isinstance(value, str):  # the rendezvous: an endpoint to listen on
            problem = endpoints_problem("listen", [value])
        else:
            problem = endpoints_problem(str(info.field_name), value)
        if problem is not None:
            raise fail(problem)
        return value

    @model_validator(mode="after")
    def _tls_only(self) -> TransportConfig:
        """Secure mode speaks TLS only: the default rendezvous becomes ``tls/``, and an endpoint
        written with another scheme is refused at its key."""
        if self.security is None:
            return self
        if "rendezvous" not in self.model_fields_set and self.rendezvous is not None:
            self.rendezvous = "tls/" + self.rendezvous.partition("/")[2]
        written = {"rendezvous": [] if self.rendezvous is None else [self.rendezvous]}
        require_tls(type(self).__name__, {**written, "listen": self.listen or [],
                                          "connect": self.connect or []})  # fmt: skip
        return self


def zenoh_config(
    settings: TransportConfig, listen: list[str], connect: list[str], once: bool = False
) -> zenoh.Config:
    """Zenoh's configuration, assembled here only: sengen's choices, then the ``zenoh:``
    passthrough on top (where a secure mode adds its TLS and access control). ``once``: the
    ``connect`` endpoints are the rendezvous ports, tried once (open_session)."""
    config = zenoh.Config()
    config.insert_json5("mode", json.dumps(settings.mode))
    # Multicast scouting would pick a non-loopback interface: off unless asked for.
    config.insert_json5("scouting/multicast/enabled", json.dumps(settings.multicast_scouting))
    # Gossip: a peer learns the others' endpoints from any one it reaches, and connects to them,
    # so losing whoever holds the rendezvous never splits the others.
    config.insert_json5("scouting/gossip/enabled", "true")
    if settings.mode == "peer":
        config.insert_json5("listen/endpoints", json.dumps(listen))
    if once:
        # Each endpoint tried once, opening not waiting (0.5 s) on ports nobody listens on:
        # whoever listens there later connects to this process, which listens too.
        config.insert_json5("connect/timeout_ms", "0")
    config.insert_json5("connect/endpoints", json.dumps(connect))
    # A hung process's port accepts connections and never answers: opening gives up on it
    # after this, not Zenoh's 10 s, and goes on with the others.
    config.insert_json5("transport/unicast/open_timeout", str(OPEN_TIMEOUT_MS))
    if settings.lease_ms is not None:
        config.insert_json5("transport/link/tx/lease", str(settings.lease_ms))
    if settings.security is not None:  # mTLS and access control: under the passthrough still
        secure = zenoh_settings(settings.security.credentials, settings.security.granted, PREFIX)
        for path, value in secure.items():
            config.insert_json5(path, json.dumps(value))
    for path, value in _leaves(settings.zenoh):
        config.insert_json5(path, json.dumps(value))
    return config


def _leaves(tree: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``{a: {b: 1}}`` as ``("a/b", 1)``: a passthrough key replaces one setting, not a subtree."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _leaves(value, path + "/")
        else:
            yield path, value


def open_session(settings: TransportConfig) -> zenoh.Session:
    """The one-machine scheme of §8.2 unless endpoints are explicit: listen on the first free
    port of the rendezvous's few (:func:`rendezvous_endpoints`), or on an ephemeral port when
    all are held, connected to the others. Every peer listens, so the others reach it by gossip
    whoever holds the rendezvous; and a newcomer reaches a live holder of one of the ports even
    when the holder of the first is hung (its port bound, nothing answered on it)."""
    if settings.listen is not None or settings.connect is not None:
        listen, connect = settings.listen or [], settings.connect or []
        return zenoh.open(zenoh_config(settings, listen, connect))
    rendezvous = settings.rendezvous
    if rendezvous is None:
        return zenoh.open(zenoh_config(settings, [], []))
    endpoints = rendezvous_endpoints(rendezvous)
    if settings.mode == "client":
        return zenoh.open(zenoh_config(settings, [], endpoints))
    for endpoint in endpoints:
        others = [e for e in endpoints if e != endpoint]
        try:
            return zenoh.open(zenoh_config(settings, [endpoint], others, once=True))
        except zenoh.ZError:  # held by another process (or hung one): the next
            continue
    host = rendezvous.rpartition(":")[0]
    return zenoh.open(zenoh_config(settings, [f"{host}:0"], endpoints, once=True))


def rendezvous_endpoints(rendezvous: str) -> list[str]:
    """The rendezvous's port and the next ``RENDEZVOUS_PORTS - 1`` on its host: as many
    processes listen there, so a newcomer finds a live one unless all of them hang."""
    host, _, port = rendezvous.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return [rendezvous]
    first = int(port)
    return [f"{host}:{p}" for p in range(first, min(first + RENDEZVOUS_PORTS, 65536))]


def identity_of(session: zenoh.Session, settings: TransportConfig) -> str:
    """The name a process goes by on the network, the one place it is chosen: in plain mode the
    session's Zenoh id (random per run); in secure mode its certificate's common name, which
    mTLS has verified and the access control ties to its key prefix."""
    if settings.security is not None:
        return settings.security.identity
    return str(session.zid())


# -- the keys -------------------------------------------------------------------------------------


def alive_key(identity: str, pid: int, app: str) -> str:
    return f"{PREFIX}/{identity}/@alive/{pid}/{app}"


def all_key(identity: str) -> str:
    return f"{PREFIX}/{identity}/@all"


def to_key(identity: str, receiver: str) -> str:
    return f"{PREFIX}/{identity}/@to/{receiver}"


def info_key(identity: str) -> str:
    return f"{PREFIX}/{identity}/@info"


ALIVE_ANY = f"{PREFIX}/*/@alive/*/*"
ALL_ANY = f"{PREFIX}/*/@all"
INFO_ANY = f"{PREFIX}/*/@info"


def to_me(identity: str) -> str:
    return f"{PREFIX}/*/@to/{identity}"


def identity_in(key: str) -> str:
    """The identity a key names (the chunk after the prefix): whose the message is."""
    return key[len(PREFIX) + 1 :].partition("/")[0]


def parse_alive(key: str) -> tuple[str, str] | None:
    """(identity, "app/pid") of a process token, None when the key is not one."""
    parts = key.split("/")
    if len(parts) != 6 or parts[3] != "@alive":
        return None
    return parts[2], f"{parts[5]}/{parts[4]}"


def undeclare(
    entity: (
        zenoh.LivelinessToken | zenoh.Subscriber[None] | zenoh.Publisher | zenoh.Queryable[None]
    ),
) -> None:
    entity.undeclare()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs
