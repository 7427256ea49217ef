"""What goes wrong on the transport's receive path, reported by its cause.

Two causes are told apart, because they call for different readers:

* a **malformed** message or frame (:data:`MALFORMED`: the wire format or a class codec refused
  its bytes) is another process's problem, or a network's: it is dropped, and reported as one
  warning per kind and interval, with how many of that kind were dropped since the last one, so
  that a flood of bad input cannot flood the log;
* a failure while **handling** a well-formed one is a bug of this process: it is logged at
  ERROR with its traceback, once per place it happens at (the handler, the exception's class and
  the line that raised it), so that a bug hit by every message is seen once, with its cause. The
  message is dropped and the transport goes on serving its other messages and peers.

The other bad input the transport ignores (an invalid interest, a type it cannot use) is
warned of like a malformed message, each under a kind of its own.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from dataclasses import dataclass

from sengen.runtime.components.transport import wire
from sengen.runtime.kernel.extension import values

_log = logging.getLogger("sengen.transport")

# What the decoders raise for bytes they refuse: the frames' own format, and the values in them.
MALFORMED = (wire.WireError, values.Invalid)

INTERVAL = 1.0  # s: at most one warning of a kind this often


@dataclass
class _Dropped:
    warned_at: float  # time.monotonic() of the last warning of the kind
    count: int = 0  # dropped since then


# (handler, exception class, file, line): where a failure happened.
Site = tuple[str, type[BaseException], str, int]


class Faults:
    """The receive path's reports, from every Zenoh thread at once."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._dropped: dict[str, _Dropped] = {}  # by kind
        self._failures: dict[Site, int] = {}  # how many times each site failed

    def warn(self, kind: str, text: str) -> None:
        """Something of ``kind`` was dropped (or ignored) for ``text``: warned at most once per
        interval for that kind, with how many were dropped since the previous warning."""
        now = time.monotonic()
        with self._lock:
            dropped = self._dropped.get(kind)
            if dropped is None:
                dropped = self._dropped[kind] = _Dropped(now - self.interval)
            dropped.count += 1
            if now - dropped.warned_at < self.interval:
                return
            count, dropped.count, dropped.warned_at = dropped.count, 0, now
        _log.warning("%s (%d of this kind since the last such warning)", text, count)

    def failed(self, handler: str, error: Exception, origin: str = "") -> None:
        """``handler`` raised ``error`` while handling a well-formed message (``origin``: from
        whom, as a phrase, or ""): the first time at its site at ERROR with the traceback,
        later ones at DEBUG."""
        site = _site(handler, error)
        with self._lock:
            count = self._failures.get(site, 0) + 1
            self._failures[site] = count
        if count == 1:
            _log.error(
                "failed to handle %s%s: %s: %s (a bug: the message is dropped, the transport "
                "goes on; logged once for this place)",
                handler, origin, type(error).__name__, error,
                exc_info=error,
            )  # fmt: skip
        else:
            _log.debug(
                "failed to handle %s%s again (%d times): %s: %s",
                handler, origin, count, type(error).__name__, error,
            )  # fmt: skip


def frame_named(kind_name: str) -> str:
    """A frame of a kind as a log line names it: "an Added frame", "a Changes frame"."""
    return f"{'an' if kind_name[:1] in 'AEIOU' else 'a'} {kind_name} frame"


def _site(handler: str, error: Exception) -> Site:
    """Where ``error`` was raised: the innermost frame of its traceback."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return handler, type(error), "", 0
    last = frames[-1]
    return handler, type(error), last.filename, last.lineno or 0
