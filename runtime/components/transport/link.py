"""The Zenoh side of the transport: configuration, opening the session, the key layout.

Keys (internal, versioned): ``sengen/v1/@proc/<zid>/<pid>/<app>`` (a process's liveliness
token), ``sengen/v1/<session>/<bus>/@interest/<zid>/<iid>/<mark>/<query>`` (an interest's
token), ``sengen/v1/<session>/<bus>/@obj/<zid>/<registered>/<name>`` (a published object's
token, for duplicate names) and ``sengen/v1/@inbox/<zid>`` (everything directed to a process).
Free text in a key (a query, an object name) is base64url, so no key character can break it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import zenoh
from pydantic import BaseModel, ConfigDict, Field

from sengen.runtime.kernel.extension import Interest

PREFIX = "sengen/v1"
DEFAULT_RENDEZVOUS = "tcp/127.0.0.1:7447"
DEFAULT_MAX_MESSAGE = 16 * 1024 * 1024


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
    zenoh: dict[str, Any] = Field(default_factory=dict)


def zenoh_config(settings: TransportConfig, listen: list[str], connect: list[str]) -> zenoh.Config:
    """Zenoh's configuration: sengen's choices, then the ``zenoh:`` passthrough on top."""
    config = zenoh.Config()
    config.insert_json5("mode", json.dumps(settings.mode))
    # Multicast scouting would pick a non-loopback interface: off unless asked for.
    config.insert_json5("scouting/multicast/enabled", json.dumps(settings.multicast_scouting))
    config.insert_json5("scouting/gossip/enabled", "true")
    if settings.mode == "peer":
        config.insert_json5("listen/endpoints", json.dumps(listen))
    config.insert_json5("connect/endpoints", json.dumps(connect))
    if settings.lease_ms is not None:
        config.insert_json5("transport/link/tx/lease", str(settings.lease_ms))
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
    """The one-machine scheme of §8.2 unless endpoints are explicit: listen on the rendezvous
    endpoint, or, when another process holds it, on an ephemeral port connected to it."""
    if settings.listen is not None or settings.connect is not None:
        listen, connect = settings.listen or [], settings.connect or []
        return zenoh.open(zenoh_config(settings, listen, connect))
    rendezvous = settings.rendezvous
    if rendezvous is None:
        return zenoh.open(zenoh_config(settings, [], []))
    if settings.mode == "client":
        return zenoh.open(zenoh_config(settings, [], [rendezvous]))
    try:
        return zenoh.open(zenoh_config(settings, [rendezvous], []))
    except zenoh.ZError:
        host = rendezvous.rpartition(":")[0]
        return zenoh.open(zenoh_config(settings, [f"{host}:0"], [rendezvous]))


def interest_key(interest: Interest, zid: str, iid: int, mark: str) -> str:
    """``mark``: ``r`` for a real-time subscriber, ``s<k>`` for a stepped one in step k."""
    session, _, bus = interest.bus.partition(".")
    text = base64.urlsafe_b64encode(interest.text.encode()).decode().rstrip("=")
    return f"{PREFIX}/{session}/{bus}/@interest/{zid}/{iid}/{mark}/{text}"


@dataclass(frozen=True)
class InterestToken:
    zid: str
    iid: int
    step: int | None  # None: a real-time subscriber's
    text: str


def parse_interest(key: str) -> InterestToken | None:
    """An interest token's parts, None when the key is not one of ours."""
    parts = key.split("/")
    if len(parts) != 9 or parts[4] != "@interest" or not parts[6].isdigit():
        return None
    mark = parts[7]
    if mark != "r" and not (mark.startswith("s") and mark[1:].isdigit()):
        return None
    try:
        text = base64.urlsafe_b64decode(parts[8] + "=" * (-len(parts[8]) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return InterestToken(parts[5], int(parts[6]), None if mark == "r" else int(mark[1:]), text)


def undeclare(entity: zenoh.LivelinessToken | zenoh.Subscriber[None] | zenoh.Publisher) -> None:
    entity.undeclare()  # type: ignore[no-untyped-call]  # untyped in zenoh's stubs


def object_key(bus: str, zid: str, registered: int, name: str) -> str:
    session, _, bus_name = bus.partition(".")
    text = base64.urlsafe_b64encode(name.encode()).decode().rstrip("=")
    return f"{PREFIX}/{session}/{bus_name}/@obj/{zid}/{registered}/{text}"


def parse_object(key: str) -> tuple[str, str, int, str] | None:
    """(bus, process, registration time, name) of an object token, None if not one of ours."""
    parts = key.split("/")
    if len(parts) != 8 or parts[4] != "@obj" or not parts[6].isdigit():
        return None
    try:
        name = base64.urlsafe_b64decode(parts[7] + "=" * (-len(parts[7]) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return f"{parts[2]}.{parts[3]}", parts[5], int(parts[6]), name
