"""The permissions file's rules that Zenoh cannot see, checked by sengen where a remote request
is accepted, on the identity taken from the key it arrived on (never from its payload).

Zenoh's access control (``access``) decides which keys an identity may use; what it may do with
sengen's objects is decided here: join a session (an interest on one of its buses), publish on a
bus (its objects reach this process's subscribers), call a method, write a property. Every
refusal is a WARNING at most once per interval per identity and kind, with how many were
refused since the last one, so that a peer retrying in a loop cannot flood the log.
"""

from __future__ import annotations

import logging
import threading

from sengen.runtime.components.transport.faults import MALFORMED, Faults
from sengen.runtime.components.transport.security.permissions import Action, Permissions
from sengen.runtime.errors import CallFailed
from sengen.runtime.kernel.extension import ClassMeta, class_codec

_log = logging.getLogger("sengen.transport")

REFUSED = "PermissionDenied"  # the type name of a refused call's error
_VERBS: dict[Action, str] = {
    "sessions": "join session",
    "publish": "publish on bus",
    "call": "call",
    "write": "write",
}


class Guard:
    """One secure transport's checks; thread-safe (Zenoh's threads call it)."""

    def __init__(self, permissions: Permissions, faults: Faults | None = None) -> None:
        self.permissions = permissions
        self.faults = faults or Faults()
        self._lock = threading.Lock()
        self._admitted: dict[str, bool] = {}  # by identity: bounded by the certificates

    def admits(self, identity: str) -> bool:
        """Whether a process of ``identity`` that appeared is served at all; one not in the
        permissions file is refused, and logged once."""
        allowed = identity in self.permissions.grants
        with self._lock:
            first = identity not in self._admitted
            self._admitted[identity] = allowed
        if first and not allowed:
            _log.warning(
                "refused process '%s': the permissions file '%s' has no entry for it",
                identity, self.permissions.source,
            )  # fmt: skip
        return allowed

    def allows(self, identity: str, action: Action, target: str) -> bool:
        """Whether ``identity`` may ``action`` on ``target``; a refusal is logged."""
        if self.permissions.allows(identity, action, target):
            return True
        self.faults.warn(
            f"refused {action} {identity}",
            f"refused '{identity}': may not {_VERBS[action]} '{target}'"
            f" (permissions file '{self.permissions.source}')",
        )
        return False

    def joins(self, identity: str, bus: str) -> bool:
        """An interest of ``identity`` on ``bus`` (``session.bus``): may it see the session?"""
        return self.allows(identity, "sessions", bus.partition(".")[0])

    def publishes(self, identity: str, bus: str) -> bool:
        """An object ``identity`` publishes on ``bus``: may it reach this process's users?"""
        return self.allows(identity, "publish", bus)

    def call_refusal(
        self, identity: str, class_name: str, member: str, write: bool
    ) -> CallFailed | None:
        """The error a refused call or property write answers with, None when allowed.
        ``class_name`` is the STL qualified name of the object's class."""
        action: Action = "write" if write else "call"
        target = f"{class_name}.{member}"
        if self.allows(identity, action, target):
            return None
        return CallFailed(REFUSED, f"'{identity}' may not {_VERBS[action]} {target}")

    def invoke_refusal(
        self, identity: str, meta: ClassMeta, setter: bool, payload: bytes
    ) -> CallFailed | None:
        """:meth:`call_refusal` for a call frame's payload, read only for the member's name.
        A payload that does not decode is let through: the owner answers it as invalid."""
        if self.permissions.allows_all(identity, "write" if setter else "call"):
            return None  # nothing to read the payload for
        codec = class_codec(meta)
        try:
            if setter:
                names = list(codec.decode_properties(payload))
            else:
                names = [codec.decode_call(payload)[0]]
        except MALFORMED:
            return None
        for name in names:
            refusal = self.call_refusal(identity, meta.qualified_name, name, setter)
            if refusal is not None:
                return refusal
        return None
