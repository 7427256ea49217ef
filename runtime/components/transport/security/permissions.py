"""The permissions file: which identity may do what, as glob patterns (``*`` matches anything).

```yaml
identities:
  producer:
    sessions: [demo]            # sessions it may join: subscribe to, and publish on
    publish: [demo.numbers]     # buses (session.bus) it may publish objects on
    call: [demo.Counter.reset]  # methods (package.Class.method) it may call
    write: [demo.Counter.*]     # properties (package.Class.property) it may set
```

A key left out allows nothing. The file is checked at start against the identities holding a
certificate: an unknown key or identity is refused with the file, the key path and the value.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

import yaml

from sengen.runtime.components.transport.security.identity import SecurityError
from sengen.runtime.kernel.extension import did_you_mean

Action = Literal["sessions", "publish", "call", "write"]
ACTIONS: tuple[Action, ...] = ("sessions", "publish", "call", "write")
_TOP = ("identities",)


@dataclass(frozen=True)
class Grant:
    """One identity's patterns, by action."""

    patterns: Mapping[Action, tuple[str, ...]]

    def allows(self, action: Action, target: str) -> bool:
        return any(fnmatchcase(target, pattern) for pattern in self.patterns.get(action, ()))


@dataclass(frozen=True)
class Permissions:
    """The checked file: ``grants`` by identity."""

    source: Path
    grants: Mapping[str, Grant]

    def allows(self, identity: str, action: Action, target: str) -> bool:
        """Whether ``identity`` may ``action`` on ``target`` (a session, a bus ``session.bus``,
        a member ``package.Class.member``); an identity not in the file may do nothing."""
        grant = self.grants.get(identity)
        return grant is not None and grant.allows(action, target)

    def allows_all(self, identity: str, action: Action) -> bool:
        """Whether ``identity`` may ``action`` on anything (a ``*`` pattern): no target needed."""
        grant = self.grants.get(identity)
        return grant is not None and "*" in grant.patterns.get(action, ())


def load_permissions(path: Path, members: Iterable[str], identity: str) -> Permissions:
    """``path`` checked against ``members`` (the identities with a certificate); this process's
    ``identity`` must have an entry. Problems are :class:`SecurityError`."""
    try:
        tree = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SecurityError(f"missing permissions file '{path}'") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SecurityError(f"cannot read permissions file '{path}': {error}") from None
    except yaml.YAMLError as error:
        raise SecurityError(f"{path}: not valid YAML: {error}".replace("\n", " ")) from None
    known = set(members)
    top = _map(path, "", tree)
    _only(path, "", top, _TOP)
    entries = _map(path, "identities", top.get("identities", {}))
    grants: dict[str, Grant] = {}
    for name, entry in entries.items():
        where = f"identities.{name}"
        if name not in known:
            hint = did_you_mean(str(name), sorted(known))
            raise SecurityError(
                f"{path}: {where}: unknown identity '{name}' (no certificate of it in the"
                f" certificates folder){hint}"
            )
        fields = _map(path, where, entry if entry is not None else {})
        _only(path, where, fields, ACTIONS)
        patterns: dict[Action, tuple[str, ...]] = {}
        for action in ACTIONS:
            patterns[action] = _patterns(path, f"{where}.{action}", fields.get(action, []))
        grants[str(name)] = Grant(patterns)
    if identity not in grants:
        raise SecurityError(
            f"{path}: identities: no entry for this process's identity '{identity}'"
        )
    return Permissions(path, grants)


def _map(path: Path, where: str, value: object) -> dict[str, object]:
    if value is None and not where:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        at = f"{where}: " if where else ""
        raise SecurityError(f"{path}: {at}expected a map, got {_show(value)}")
    return value


def _only(path: Path, where: str, found: Mapping[str, object], keys: tuple[str, ...]) -> None:
    for key in found:
        if key not in keys:
            at = f"{where}.{key}" if where else key
            hint = did_you_mean(key, keys) or f" (expected one of {', '.join(keys)})"
            raise SecurityError(f"{path}: {at}: unknown key '{key}'{hint}")


def _patterns(path: Path, where: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SecurityError(f"{path}: {where}: expected a list of patterns, got {_show(value)}")
    return tuple(value)


def _show(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value, default=str)
