"""What the kernel does about Python's cyclic garbage collector (issue 28).

A full collection stops every thread for a time that grows with everything the collector tracks,
so what lives as long as the process is kept out of its way: what exists after start-up
(``Kernel.run`` freezes it), and the structures made when many objects are discovered at once
(a remote process's publication, a late joiner's snapshot: a handle and a proxy per object).
Those are made with the collector paused, each collection on the way would traverse them all
again, and frozen once made (``gc.freeze``), so later collections only see what is young.

Freezing keeps whatever unreachable cycle exists at that moment for good, so only bursts of
additions freeze (they make long-lived structures, not garbage), and the young generations are
collected first (what was just dropped, a removal's proxies, goes then): once per burst, not
around every commit of several messages, most of which make nothing to keep.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

BULK = 1000  # objects made at once from which they are frozen


@contextlib.contextmanager
def bulk(heavy: bool) -> Iterator[list[int]]:
    """Around code that may make many long-lived objects: when ``heavy``, no collection runs
    inside, and if the code counted ``BULK`` objects or more into the list yielded
    (``made[0] += n``), everything is frozen after it."""
    made = [0]
    if not heavy:
        yield made
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield made
    finally:
        if made[0] >= BULK:
            gc.collect(1)  # the young generations, so that no recent garbage is frozen
            gc.freeze()
        if enabled:
            gc.enable()
