"""The one root of sengen's exceptions, and the errors of the object layer.

Every exception class sengen defines derives from :class:`SengenError`, in the compiler
(``sengen``) and in the runtime (``sengen.runtime``) alike; where a builtin base helps callers it
is kept as a second base (``class QueryError(SengenError, ValueError)``). This module imports
nothing, so that every layer can use it. Call errors reach callers through their call handles.
"""

from __future__ import annotations


class SengenError(Exception):
    """Base of every exception raised by sengen."""


class CallError(SengenError):
    """Base of the errors a call handle can deliver."""


class CallFailed(CallError):
    """The implementation raised: ``type_name`` is the exception's class name."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(f"{type_name}: {message}")
        self.type_name = type_name
        self.message = message


class ObjectGone(CallError):
    """The target object was removed before, or while, the call reached it."""


class CallDropped(CallError):
    """A best-effort call found the callee's bounded work queue full (runtime.md §1.8)."""


class CallTimeout(CallError):
    """The ``timeout=`` of a call expired before its result arrived."""


class NotSeen(SengenError, TimeoutError):
    """``Kernel.wait_for``: what it waited for was not seen on the network within its timeout."""


class LocalMethodError(SengenError):
    """A ``[local]`` method was called through a proxy."""

    def __init__(self, method: str) -> None:
        super().__init__(
            f"calling local methods is not permitted across component boundaries ({method})"
        )


class VariantTagError(SengenError, LookupError):
    """``variant.get(tag)`` on a variant holding another alternative."""


class ConstViolation(SengenError):
    """A ``[const]`` method implementation tried to change a property or emit an event."""


class RegistryError(SengenError):
    """Conflicting registrations, or an ambiguous or unknown name in the type registry."""
