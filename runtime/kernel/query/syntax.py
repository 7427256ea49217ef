"""The syntax tree of a query: the expression nodes, and how they print back as query text
(fully parenthesised only where precedence needs it)."""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from typing import Final, TypeAlias
from typing import Literal as TypingLiteral

# The variables every object has besides its properties.
PSEUDO_VARIABLES: Final = frozenset({"name", "id"})


Value: TypeAlias = bool | int | float | str


@dataclass(frozen=True, slots=True)
class Literal:
    value: Value
    position: int = field(default=0, compare=False, repr=False)

    def __str__(self) -> str:
        if isinstance(self.value, bool):
            return "true" if self.value else "false"
        if isinstance(self.value, str):
            return _quote(self.value)
        if isinstance(self.value, float):
            return _real(self.value)
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Variable:
    path: tuple[str, ...]
    position: int = field(default=0, compare=False, repr=False)

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def __str__(self) -> str:
        return self.name


UnaryOp: TypeAlias = TypingLiteral["NOT", "-"]
BinaryOp: TypeAlias = TypingLiteral[
    "OR", "AND", "=", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/"
]


@dataclass(frozen=True, slots=True)
class Unary:
    """``NOT``/``!`` (both kept as ``NOT``) or numeric ``-``."""

    op: UnaryOp
    operand: Expr
    position: int = field(default=0, compare=False, repr=False)

    def __str__(self) -> str:
        inner = _text(self.operand, _UNARY)
        return f"NOT {inner}" if self.op == "NOT" else f"-{inner}"


@dataclass(frozen=True, slots=True)
class Binary:
    op: BinaryOp
    left: Expr
    right: Expr
    position: int = field(default=0, compare=False, repr=False)

    def __str__(self) -> str:
        level = _LEVELS[self.op]
        left = _text(self.left, level, chain=level == _REL)
        return f"{left} {self.op} {_text(self.right, level + 1)}"


@dataclass(frozen=True, slots=True)
class Between:
    operand: Expr
    low: Expr
    high: Expr
    negated: bool = False
    position: int = field(default=0, compare=False, repr=False)

    def __str__(self) -> str:
        op = "NOT BETWEEN" if self.negated else "BETWEEN"
        parts = (_text(e, _SUM) for e in (self.operand, self.low, self.high))
        return f"{next(parts)} {op} {next(parts)} AND {next(parts)}"


@dataclass(frozen=True, slots=True)
class In:
    operand: Expr
    options: tuple[Expr, ...]
    negated: bool = False
    position: int = field(default=0, compare=False, repr=False)

    def __str__(self) -> str:
        op = "NOT IN" if self.negated else "IN"
        options = ", ".join(_text(e, _SUM) for e in self.options)
        return f"{_text(self.operand, _SUM)} {op} ({options})"


Expr: TypeAlias = Literal | Variable | Unary | Binary | Between | In

_OR, _AND, _EQ, _REL, _SUM, _PRODUCT, _UNARY, _PRIMARY = range(1, 9)
_LEVELS: Final[dict[str, int]] = {
    "OR": _OR,
    "AND": _AND,
    "=": _EQ,
    "!=": _EQ,
    "<": _REL,
    "<=": _REL,
    ">": _REL,
    ">=": _REL,
    "+": _SUM,
    "-": _SUM,
    "*": _PRODUCT,
    "/": _PRODUCT,
}


def _level(expr: Expr) -> int:
    if isinstance(expr, Binary):
        return _LEVELS[expr.op]
    if isinstance(expr, (Between, In)):
        return _REL
    if isinstance(expr, Unary):
        return _UNARY
    return _PRIMARY


def _text(expr: Expr, minimum: int, chain: bool = False) -> str:
    """``expr`` as the operand of a construct that needs at least level ``minimum``; ``chain``:
    the left side of a comparison, which may be another comparison but not BETWEEN/IN."""
    level = _level(expr)
    if chain and isinstance(expr, (Between, In)):
        return f"({expr})"
    return str(expr) if level >= minimum else f"({expr})"


def _quote(text: str) -> str:
    return f"'{text}'" if '"' in text else f'"{text}"'


def _real(value: float) -> str:
    text = repr(value)
    if "e" in text:
        text = format(decimal.Decimal(text), "f")
    return text if "." in text else text + ".0"
