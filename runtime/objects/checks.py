"""The switch for value checks at the in-process boundaries (codegen.md §1.4).

On by default. Configuration load, wire decode and the checked-property hooks run whatever the
switch says; ``set_next_*``, event ``emit`` and in-process method arguments are checked only
while it is on.
"""

from __future__ import annotations


class _Checks:
    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = True


checks = _Checks()


def set_checks(enabled: bool) -> None:
    """Switch the in-process value checks on or off (for production runs)."""
    checks.enabled = enabled
