"""Checking the Zenoh values of a transport entry (``listen``, ``connect``, ``rendezvous`` and
the ``zenoh:`` passthrough) when the configuration is validated: Zenoh itself would refuse them
only when the session opens, at run time, with a Rust debug print naming its source files."""

from __future__ import annotations

import json
import re
from typing import Final

import zenoh

_RUST_MESSAGE: Final = re.compile(r'msg: "(?P<msg>(?:[^"\\]|\\.)*)"|Str\("(?P<str>[^"]*)"\)')
_RUST_SOURCE: Final = re.compile(r" at /\S+\.rs:\d+\.?")


def zenoh_problem(path: str, value: object) -> str | None:
    """Why Zenoh refuses ``value`` at ``path`` of its configuration, in one plain line; None
    when it accepts it."""
    try:
        zenoh.Config().insert_json5(path, json.dumps(value))
    except (zenoh.ZError, TypeError, ValueError) as error:
        text = str(error)
        match = _RUST_MESSAGE.search(text)
        if match is not None:
            text = match.group("msg") or match.group("str")
        text = _RUST_SOURCE.sub("", text).replace('\\"', '"').strip()
        reason = text.splitlines()[0] if text else "invalid value"
        return f"Zenoh refuses {json.dumps(value)}: {reason}"
    return None


def endpoints_problem(key: str, endpoints: list[str] | None) -> str | None:
    """``listen``/``connect`` (``key``) endpoints Zenoh would refuse."""
    return None if endpoints is None else zenoh_problem(f"{key}/endpoints", endpoints)


def passthrough_problem(tree: dict[str, object], prefix: str = "") -> str | None:
    """The first key of the ``zenoh:`` passthrough whose value Zenoh refuses (each leaf replaces
    one setting, as the transport inserts them)."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            found = passthrough_problem(value, path + "/")
        else:
            problem = zenoh_problem(path, value)
            found = None if problem is None else f"'{path}': {problem}"
        if found is not None:
            return found
    return None
