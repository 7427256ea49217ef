"""Evaluating a query: :class:`Query` and its per-class :class:`Evaluator`, which compiles the
condition into closures over the class's metadata."""

from __future__ import annotations

import enum
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeAlias

from sengen.runtime.errors import SengenError
from sengen.runtime.objects.duration import Duration, TimeStamp
from sengen.runtime.objects.meta import (
    ArrayMeta,
    ClassMeta,
    EnumMeta,
    NativeMeta,
    OptionalMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)

from .syntax import PSEUDO_VARIABLES, Between, Binary, Expr, In, Literal, Unary, Value, Variable

_log = logging.getLogger("sengen.query")


# -- evaluation -------------------------------------------------------------------------------


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Final = _Absent()

Result: TypeAlias = Any  # Value or _ABSENT
Compiled: TypeAlias = Callable[[Any], Result]


class _Mismatch(SengenError):
    """A type error while evaluating: the object does not match."""


class _Unknown(SengenError):
    """A variable the class does not have (or that is not addressable)."""


class _HasMeta(Protocol):
    @property
    def META(self) -> ClassMeta: ...


def _is_number(value: object) -> bool:
    return (
        (type(value) is int)
        or (type(value) is float)
        or (isinstance(value, (int, float)) and not isinstance(value, bool))
    )


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _same_kind(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if _is_number(a):
        return _is_number(b)
    return isinstance(a, str) and isinstance(b, str)


def _equal(a: Result, b: Result) -> Result:
    """``a = b``: ABSENT when either is absent (the comparison is false)."""
    if a is _ABSENT or b is _ABSENT:
        return _ABSENT
    if not _same_kind(a, b):
        raise _Mismatch(f"cannot compare {_kind(a)} with {_kind(b)}")
    return a == b


_ORDER: Final[dict[str, Callable[[Any, Any], bool]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _orderable(a: Result, b: Result, op: str) -> None:
    ok = (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))
    if not ok:
        raise _Mismatch(f"cannot apply '{op}' to {_kind(a)} and {_kind(b)}")


def _arith(a: Result, b: Result, op: str) -> Result:
    if a is _ABSENT or b is _ABSENT:
        return _ABSENT
    if not (_is_number(a) and _is_number(b)):
        raise _Mismatch(f"cannot apply '{op}' to {_kind(a)} and {_kind(b)}")
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            raise _Mismatch("division by zero")
        return a / b
    except ArithmeticError as error:  # int too large for a float
        raise _Mismatch(str(error)) from None


def _truth(value: Result, what: str) -> bool:
    """A condition: a boolean; absent counts as false."""
    if value is _ABSENT:
        return False
    if not isinstance(value, bool):
        raise _Mismatch(f"{what} must be boolean, not {_kind(value)}")
    return value


def _compile(expr: Expr, meta: ClassMeta | None) -> Compiled:
    """Closures evaluating ``expr`` on objects of ``meta`` (None: no variables allowed)."""
    if isinstance(expr, Literal):
        value = expr.value
        return lambda obj: value
    if isinstance(expr, Variable):
        if meta is None:
            raise _Unknown(expr.name)
        return _variable(expr, meta)
    if isinstance(expr, Unary):
        operand = _compile(expr.operand, meta)
        if expr.op == "NOT":
            return lambda obj: not _truth(operand(obj), "the operand of NOT")
        return lambda obj: _negate(operand(obj))
    if isinstance(expr, Binary):
        return _binary(expr, meta)
    if isinstance(expr, Between):
        return _between(expr, meta)
    return _in(expr, meta)


def _negate(value: Result) -> Result:
    if value is _ABSENT:
        return _ABSENT
    if not _is_number(value):
        raise _Mismatch(f"cannot negate a {_kind(value)}")
    return -value


def _binary(expr: Binary, meta: ClassMeta | None) -> Compiled:
    left, right = _compile(expr.left, meta), _compile(expr.right, meta)
    op = expr.op
    if op == "OR":

        def or_(obj: Any) -> Result:
            a, b = _truth(left(obj), "an OR operand"), _truth(right(obj), "an OR operand")
            return a or b

        return or_
    if op == "AND":

        def and_(obj: Any) -> Result:
            a, b = _truth(left(obj), "an AND operand"), _truth(right(obj), "an AND operand")
            return a and b

        return and_
    if op == "=":
        return lambda obj: _equal(left(obj), right(obj)) is True
    if op == "!=":
        return lambda obj: _equal(left(obj), right(obj)) is False
    if op in _ORDER:
        compare = _ORDER[op]

        def order(obj: Any) -> Result:
            a, b = left(obj), right(obj)
            if a is _ABSENT or b is _ABSENT:
                return False
            _orderable(a, b, op)
            return compare(a, b)

        return order
    return lambda obj: _arith(left(obj), right(obj), op)


def _between(expr: Between, meta: ClassMeta | None) -> Compiled:
    operand, low, high = (_compile(e, meta) for e in (expr.operand, expr.low, expr.high))
    negated = expr.negated

    def between(obj: Any) -> Result:
        x, lo, hi = operand(obj), low(obj), high(obj)
        if x is _ABSENT or lo is _ABSENT or hi is _ABSENT:
            return False
        _orderable(lo, hi, "BETWEEN")
        _orderable(x, lo, "BETWEEN")
        if not lo <= hi:  # computed bounds out of order: neither form holds
            return False
        inside = bool(lo <= x <= hi)
        return not inside if negated else inside

    return between


def _in(expr: In, meta: ClassMeta | None) -> Compiled:
    operand = _compile(expr.operand, meta)
    options = tuple(_compile(e, meta) for e in expr.options)
    negated = expr.negated

    def in_(obj: Any) -> Result:
        x = operand(obj)
        values = [option(obj) for option in options]
        if x is _ABSENT or any(v is _ABSENT for v in values):
            return False
        found = any([_equal(x, v) for v in values])  # all compared: type errors everywhere
        return not found if negated else found

    return in_


def _constant(expr: Expr) -> Value | None:
    """The value of a variable-free expression, None when it has variables or a type error."""
    try:
        value = _compile(expr, None)(None)
    except (_Mismatch, _Unknown):
        return None
    return None if value is _ABSENT else value


# -- variables --------------------------------------------------------------------------------

Step: TypeAlias = Callable[[Any], Any]


def _variable(expr: Variable, meta: ClassMeta) -> Compiled:
    path = expr.path
    head = path[0]
    if head in PSEUDO_VARIABLES:
        if len(path) > 1:
            raise _Unknown(f"'{expr.name}': '{head}' has no fields")
        attribute = head
        return lambda obj: getattr(obj, attribute)
    prop = meta.property(head)
    if prop is None:
        raise _Unknown(f"'{expr.name}': no property '{head}'")
    steps: list[Step] = []
    current = resolve_alias(prop.type)
    i = 1
    while True:
        while isinstance(current, OptionalMeta):
            steps.append(_held)
            current = resolve_alias(current.target)
        if i == len(path):
            break
        if isinstance(current, StructMeta):
            struct_field = next((f for f in current.fields if f.stl_name == path[i]), None)
            if struct_field is None:
                raise _Unknown(f"'{expr.name}': no field '{path[i]}' in {current.qualified_name}")
            steps.append(_field(struct_field.py_name))
            current = resolve_alias(struct_field.type)
            i += 1
        elif isinstance(current, VariantMeta):
            for end in range(len(path), i, -1):
                alternative = current.alternative(".".join(path[i:end]))
                if alternative is not None:
                    break
            else:
                raise _Unknown(
                    f"'{expr.name}': no alternative '{path[i]}' in {current.qualified_name}"
                )
            steps.append(_alternative(alternative.tag))
            current = resolve_alias(alternative.type)
            i = end
        else:
            raise _Unknown(f"'{expr.name}': {_shown(current)} has no fields")
    steps.append(_leaf(current, expr))
    attribute = prop.py_name
    chain = tuple(steps)

    def read(obj: Any) -> Result:
        value = getattr(obj, attribute)
        for step in chain:
            value = step(value)
            if value is _ABSENT:
                break
        return value

    return read


def _shown(meta: TypeMeta) -> str:
    return f"{meta.kind.value} {meta.qualified_name}"


def _held(value: Any) -> Any:
    return _ABSENT if value is None else value


def _field(py_name: str) -> Step:
    return lambda value: getattr(value, py_name)


def _alternative(tag: str) -> Step:
    return lambda value: value.value if value.tag == tag else _ABSENT


def _seconds(value: Duration | TimeStamp) -> float:
    return value.ns / 1_000_000_000


def _leaf(meta: TypeMeta, expr: Variable) -> Step:
    """The query value of a property or field of type ``meta``."""
    if isinstance(meta, NativeMeta):
        if meta.qualified_name in ("Duration", "TimeStamp"):
            return _seconds
        return lambda value: value
    if isinstance(meta, QuantityMeta):
        return lambda value: value
    if isinstance(meta, EnumMeta):
        names: dict[enum.Enum, str] = {
            meta.py_class[e.py_name]: e.stl_name for e in meta.enumerators
        }

        def enumerator(value: Any) -> Any:
            try:
                return names[value]
            except (KeyError, TypeError):
                raise _Mismatch(
                    f"{value!r} is not an enumerator of {meta.qualified_name}"
                ) from None

        return enumerator
    if isinstance(meta, (StructMeta, VariantMeta, SequenceMeta, ArrayMeta)):
        raise _Unknown(f"'{expr.name}': a {_shown(meta)} is not addressable")
    raise _Unknown(f"'{expr.name}': {_shown(meta)} is not addressable")


# -- queries ----------------------------------------------------------------------------------


class Evaluator:
    """A query compiled for one class: the type condition, the condition's closures and the
    referenced dynamic properties (those whose change needs a re-evaluation)."""

    __slots__ = (
        "_condition",
        "_query",
        "_warned",
        "conforms",
        "dynamic_properties",
        "known",
        "meta",
    )

    def __init__(self, query: Query, meta: ClassMeta) -> None:
        self.meta = meta
        self._query = query
        self._warned = False
        self.conforms = query.type_name is None or meta.is_a(query.type_name)
        self.known = True
        self._condition: Compiled | None = None
        dynamic: set[str] = set()
        for name in query.properties:
            prop = meta.property(name)
            if prop is not None and prop.dynamic:
                dynamic.add(name)
        self.dynamic_properties: frozenset[str] = frozenset(dynamic)
        if self.conforms and query.where is not None:
            try:
                self._condition = _compile(query.where, meta)
            except _Unknown as error:
                self.known = False
                _log.info(
                    "query '%s' never matches class %s: unknown variable %s",
                    query,
                    meta.qualified_name,
                    error,
                )

    def matches(self, obj: Any) -> bool:
        if not (self.conforms and self.known):
            return False
        condition = self._condition
        if condition is None:
            return True
        try:
            return _truth(condition(obj), "the condition")
        except _Mismatch as error:
            if not self._warned:
                self._warned = True
                _log.warning(
                    "query '%s' does not match objects of class %s: type error: %s",
                    self._query,
                    self.meta.qualified_name,
                    error,
                )
            return False


@dataclass(frozen=True)
class Query:
    """``SELECT type_name FROM bus WHERE where``; ``None`` stands for ``*`` (and no WHERE)."""

    type_name: str | None
    bus: str | None
    where: Expr | None = None
    _evaluators: dict[ClassMeta, Evaluator] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __str__(self) -> str:
        text = f"SELECT {self.type_name or '*'} FROM {self.bus or '*'}"
        return text if self.where is None else f"{text} WHERE {self.where}"

    @property
    def properties(self) -> frozenset[str]:
        """The STL property names the condition references (``name`` and ``id`` excluded)."""
        found: set[str] = set()
        if self.where is not None:
            _collect(self.where, found)
        return frozenset(found)

    def evaluator(self, meta: ClassMeta) -> Evaluator:
        """The query compiled for ``meta`` (cached)."""
        evaluator = self._evaluators.get(meta)
        if evaluator is None:
            evaluator = self._evaluators.setdefault(meta, Evaluator(self, meta))
        return evaluator

    def conforms(self, meta: ClassMeta) -> bool:
        """The type condition alone."""
        return self.evaluator(meta).conforms

    def matches(self, obj: _HasMeta) -> bool:
        """The type condition and the condition on ``obj``'s current values."""
        return self.evaluator(obj.META).matches(obj)


def _collect(expr: Expr, found: set[str]) -> None:
    if isinstance(expr, Variable):
        if expr.path[0] not in PSEUDO_VARIABLES:
            found.add(expr.path[0])
    elif isinstance(expr, Unary):
        _collect(expr.operand, found)
    elif isinstance(expr, Binary):
        _collect(expr.left, found)
        _collect(expr.right, found)
    elif isinstance(expr, Between):
        for e in (expr.operand, expr.low, expr.high):
            _collect(e, found)
    elif isinstance(expr, In):
        _collect(expr.operand, found)
        for e in expr.options:
            _collect(e, found)
