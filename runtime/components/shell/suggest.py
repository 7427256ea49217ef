""" "Did you mean" for a mistyped command, object or member name in the shell.

The suggestion is appended to the unchanged error as `` (did you mean 'x'?)``, the form the
configuration and STL errors use, found by the same rule (:mod:`sengen.runtime.objects.suggest`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sengen.runtime.kernel.extension import did_you_mean

if TYPE_CHECKING:
    from sengen.runtime.kernel.extension import ClassMeta

    from .sources import Sources


def object_hint(sources: Sources, path: str) -> str:
    """The suggestion for an object ``path`` that was not found: a full path or a bare object
    name that denotes one object (names may have dots too: ``boiler.temp``)."""
    paths = [full for full, _, _ in sources.entries()]
    return did_you_mean(path, [*sources.unique_names(), *paths])


def member_hint(meta: ClassMeta, member: str, methods_only: bool) -> str:
    """The suggestion for a member ``member`` that ``meta`` does not have; ``methods_only``
    when the line gave arguments, so that only what takes them is offered."""
    names = [m.stl_name for m in meta.all_methods]
    if not methods_only:
        names += ["print", *(p.stl_name for p in meta.all_properties)]
    return did_you_mean(member, names)
