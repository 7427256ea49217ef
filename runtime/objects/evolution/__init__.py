"""Type evolution across processes (evolution.md): a remote class known here under another
structural hash is checked once per (remote hash, local hash) and either adapted or refused.

:func:`adapt` is the transport's one entry: given a publication's class, hash and description,
it answers the handle's metadata (the producer's) and the proxy class (the local class's,
adapted), or None when the pair is refused or the description is bad. Pure object-layer work:
testable without a transport.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Final

from sengen.runtime.objects import describe
from sengen.runtime.objects.evolution.adapted import Adapter, adapted_proxy
from sengen.runtime.objects.evolution.classes import LABEL, ClassPlan, Refused, check
from sengen.runtime.objects.meta import ClassMeta
from sengen.runtime.objects.proxies import RemoteProxy
from sengen.runtime.objects.registry import ClassEntry, registry

__all__ = ["MAX_DESCRIPTION_BYTES", "adapt", "builds", "check", "reset"]

_log = logging.getLogger("sengen.transport")
# A description larger than this is refused unread (no real class comes near: the corpus's
# largest describes in a few kilobytes).
MAX_DESCRIPTION_BYTES: Final = 1 << 20
# Distinct pairs and (pair, process) adapters kept: bounded by the versions seen (§8).
_MAX_PAIRS: Final = 1024

Say = Callable[[int, str], None]


_lock = threading.Lock()
_pairs: dict[tuple[int, int], ClassPlan | str] = {}
_adapters: dict[tuple[int, int, str], tuple[ClassMeta, type[RemoteProxy]] | None] = {}
_builds = [0]
_told: set[tuple[str, str, str]] = set()


def builds() -> int:
    """How many pairs were checked and compiled (a test hook, evolution.md E18, E19)."""
    return _builds[0]


def reset() -> None:
    """Forget every pair (tests)."""
    with _lock:
        _pairs.clear()
        _adapters.clear()
        _told.clear()
        _builds[0] = 0


def _locals(name: str) -> list[ClassEntry]:
    found: list[ClassEntry] = []
    for scope in registry.scopes():
        found.extend(e for e in registry.entries(scope)[1] if e.meta.qualified_name == name)
    return found


def adapt(
    name: str,
    type_hash: int,
    description: bytes,
    process: str,
    label: Callable[[], str],
    say: Say,
) -> tuple[ClassMeta, type[RemoteProxy]] | None:
    """A publication of ``name`` from ``process`` whose hash no local registration has
    (§1.1): the handle's metadata and the proxy class, or None (refused, or a bad
    description). ``say`` logs a line naming the producer by ``{label}``; ``label`` gives it
    (``app/pid``) when a value's line is written. Lines are logged once per (pair, process)."""
    entries = _locals(name)
    prefix = f"type '{name}' has an incompatible remote implementation (process {{label}})"
    # Several versions are several hashes (§1.2): the same generated package imported under
    # several scopes is one version, taken from the first scope as the identical path does.
    if len({e.meta.type_hash for e in entries}) > 1:
        with _lock:
            fresh = (type_hash, -1, process) not in _adapters and len(_adapters) < _MAX_PAIRS
            _adapters[(type_hash, -1, process)] = None
        if fresh:
            scopes = ", ".join(sorted(e.meta.scope for e in entries))
            say(logging.WARNING, f"{prefix}: several local versions ({scopes}), none identical")
        return None
    entry = entries[0]
    local = entry.meta
    key = (type_hash, local.type_hash, process)
    with _lock:
        if key in _adapters:
            return _adapters[key]
        known = _pairs.get(key[:2])
    if known is None:
        known = _checked(name, type_hash, description, label(), local)
        if known is None:
            return None
    made: tuple[ClassMeta, type[RemoteProxy]] | None = None
    if isinstance(known, str):
        say(logging.WARNING, f"{prefix}: {known}")
    else:
        text = f"type '{name}' of process {{label}} differs from the local one"
        say(logging.INFO, text + ": its objects are adapted")
        for line in known.differences:
            say(logging.DEBUG, line)
        for line in known.warnings:
            say(logging.WARNING, line.replace(LABEL, "{label}"))
        made = (known.remote, adapted_proxy(Adapter(known, label), entry.remote_proxy))
    with _lock:
        if len(_adapters) < _MAX_PAIRS:
            _adapters[key] = made
    return made


def _checked(
    name: str, type_hash: int, description: bytes, label: str, local: ClassMeta
) -> ClassPlan | str | None:
    """The pair checked and cached; None for a description that is missing or bad (logged
    here, never cached: a later publication may bring a good one)."""
    problem = None
    remote = None
    if not description:
        problem = "came without its description"
    elif len(description) > MAX_DESCRIPTION_BYTES:
        problem = f"description of {len(description)} bytes, over {MAX_DESCRIPTION_BYTES}"
    else:
        try:
            remote = describe.read(description)
        except (describe.DescriptionError, RecursionError) as error:
            problem = str(error)
        else:
            if remote.qualified_name != name or remote.type_hash != type_hash:
                problem = (
                    f"description of '{remote.qualified_name}' with hash {remote.type_hash}"
                    f" does not match the claimed hash {type_hash}"
                )
    if problem is not None or remote is None:
        # The description is not kept (it may be junk of any size), only that it was told:
        # WARNING once per class, process and problem, then DEBUG.
        key = (name, label, problem or "")
        with _lock:
            fresh = key not in _told and len(_told) < _MAX_PAIRS
            if fresh:
                _told.add(key)
        level = logging.WARNING if fresh else logging.DEBUG
        _log.log(level, "type '%s' of process %s: %s", name, label, problem)
        return None
    found: ClassPlan | str
    try:
        found = check(remote, local, LABEL)
    except Refused as refusal:
        found = str(refusal)
    except Exception:  # a bug: logged, and the pair is treated as refused (§1.3)
        _log.exception("type '%s' of process %s: building its converter failed", name, label)
        found = "the converter could not be built"
    with _lock:
        _builds[0] += 1
        if len(_pairs) < _MAX_PAIRS:
            _pairs[(type_hash, local.type_hash)] = found
    return found
