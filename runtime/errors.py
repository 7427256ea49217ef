"""Errors of the object layer. Call errors reach callers through their call handles."""

from __future__ import annotations


class SengenRuntimeError(Exception):
    """Base of the runtime's own errors."""


class CallError(SengenRuntimeError):
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


class LocalMethodError(SengenRuntimeError):
    """A ``[local]`` method was called through a proxy."""

    def __init__(self, method: str) -> None:
        super().__init__(
            f"calling local methods is not permitted across component boundaries ({method})"
        )


class VariantTagError(SengenRuntimeError, LookupError):
    """``variant.get(tag)`` on a variant holding another alternative."""


class ConstViolation(SengenRuntimeError):
    """A ``[const]`` method implementation tried to change a property or emit an event."""


class RegistryError(SengenRuntimeError):
    """Conflicting registrations, or an ambiguous or unknown name in the type registry."""
