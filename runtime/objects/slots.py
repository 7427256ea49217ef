"""Helpers for generated value classes: cached slot writers and variant access."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sengen.runtime.errors import VariantTagError


def slot_setters(cls: type, names: tuple[str, ...]) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each slot: a generated ``__init__`` stores fields through them, past
    the frozen class's ``__setattr__`` guard, at about the cost of a plain attribute store."""
    return tuple(getattr(cls, name).__set__ for name in names)


def variant_get(variant: Any, tag: str) -> Any:
    """``variant.get(tag)``: the value, when the variant holds that alternative."""
    if variant.tag != tag:
        raise VariantTagError(f"{type(variant).__qualname__} holds '{variant.tag}', not '{tag}'")
    return variant.value
