"""The SELECT query language of subscriptions (runtime.md §4.2, §4.3).

``parse_query(text)`` parses a query into a frozen :class:`Query`; a text that does not parse
raises :class:`QueryError` with the position and a caret line. ``Query.matches(obj)`` applies
the type condition and the ``WHERE`` condition to an object (native or proxy) through its
``META``: the condition is compiled once per class into closures (:meth:`Query.evaluator`),
with the variables resolved against the class's metadata.

Evaluation never raises: a type error (string against number, arithmetic on strings, a
non-boolean condition, division by zero) means "no match" and logs a WARNING once per (query,
class); a variable the class does not have makes that class never match (INFO once).
"""

from __future__ import annotations

import decimal
import enum
import logging
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeAlias
from typing import Literal as TypingLiteral

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

__all__ = [
    "Between",
    "Binary",
    "Evaluator",
    "Expr",
    "In",
    "Literal",
    "Query",
    "QueryError",
    "Unary",
    "Variable",
    "parse_query",
]

_log = logging.getLogger("sengen.query")

KEYWORDS: Final = frozenset({"SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "BETWEEN", "IN"})
_BOOLEANS: Final = {"true": True, "false": False}
PSEUDO_VARIABLES: Final = frozenset({"name", "id"})


class QueryError(ValueError):
    """A query that does not parse. ``position`` is the 0-based offset of the error in ``text``
    (None when the error is not about a place in a text)."""

    def __init__(self, message: str, text: str | None = None, position: int | None = None) -> None:
        self.reason = message
        self.text = text
        self.position = position
        super().__init__(_format_error(message, text, position))


def _format_error(message: str, text: str | None, position: int | None) -> str:
    if text is None or position is None:
        return message
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    line = text[start : end if end >= 0 else len(text)]
    column = position - start + 1
    where = f"column {column}"
    if "\n" in text:
        where = f"line {text.count(chr(10), 0, position) + 1}, {where}"
    pad = "".join("\t" if c == "\t" else " " for c in line[: column - 1])
    return f"{message} at {where}\n  {line}\n  {pad}^"


# -- lexer ------------------------------------------------------------------------------------

TokenKind: TypeAlias = TypingLiteral[
    "KEYWORD", "BOOL", "IDENT", "BUS", "INTEGER", "REAL", "STRING", "OP", "END"
]


@dataclass(frozen=True, slots=True)
class _Token:
    kind: TokenKind
    text: str  # keywords, names and operators: as written; STRING: the contents
    position: int

    def describe(self) -> str:
        if self.kind == "END":
            return "end of query"
        if self.kind == "STRING":
            return f"string {_quote(self.text)}"
        if self.kind in ("IDENT", "BUS"):
            return f"name '{self.text}'"
        if self.kind in ("INTEGER", "REAL"):
            return f"number {self.text}"
        return f"'{self.text}'"


_OPERATORS: Final = ("!=", "<=", ">=", "=", "<", ">", "+", "-", "*", "/", "!", "(", ")", ",")
_NOT_OPERATORS: Final = {
    "==": "'==' is not an operator (use '=')",
    "<>": "'<>' is not an operator (use '!=')",
}
_WHITESPACE: Final = " \t\r\n"


def _is_name_start(c: str) -> bool:
    return c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z")


def _is_name_char(c: str) -> bool:
    return _is_name_start(c) or (c.isascii() and c.isdigit())


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append(_Token("END", "", n))
            return tokens
        c = text[i]
        after_from = bool(tokens) and tokens[-1].kind == "KEYWORD" and tokens[-1].text == "FROM"
        if after_from and (_is_name_start(c) or c == "."):
            i = _bus_address(text, i, tokens)
        elif _is_name_start(c):
            i = _name(text, i, tokens)
        elif c.isascii() and c.isdigit():
            i = _number(text, i, tokens)
        elif c in "'\"":
            end = text.find(c, i + 1)
            if end < 0:
                raise QueryError("unterminated string", text, i)
            tokens.append(_Token("STRING", text[i + 1 : end], i))
            i = end + 1
        else:
            pair = text[i : i + 2]
            if pair in _NOT_OPERATORS:
                raise QueryError(_NOT_OPERATORS[pair], text, i)
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is None:
                raise QueryError(f"unexpected character {c!r}", text, i)
            tokens.append(_Token("OP", op, i))
            i += len(op)


def _name(text: str, i: int, tokens: list[_Token]) -> int:
    """IDENT { "." IDENT } without blanks; a single reserved word is a keyword or boolean."""
    start = i
    segments: list[tuple[str, int]] = []
    while True:
        j = i
        while j < len(text) and _is_name_char(text[j]):
            j += 1
        segments.append((text[i:j], i))
        if j + 1 < len(text) and text[j] == "." and _is_name_start(text[j + 1]):
            i = j + 1
            continue
        if j < len(text) and text[j] == ".":
            raise QueryError("expected a name after '.'", text, j + 1)
        break
    word = text[start:j]
    if len(segments) == 1 and word in KEYWORDS:
        tokens.append(_Token("KEYWORD", word, start))
    elif len(segments) == 1 and word in _BOOLEANS:
        tokens.append(_Token("BOOL", word, start))
    else:
        for segment, position in segments:
            if len(segments) > 1 and (segment in KEYWORDS or segment in _BOOLEANS):
                raise QueryError(f"reserved word '{segment}' inside a name", text, position)
        tokens.append(_Token("IDENT", word, start))
    return j


def _bus_address(text: str, i: int, tokens: list[_Token]) -> int:
    """A bus address after FROM: ``session.bus``, parts of letters, digits, ``_`` and ``-``."""
    j = i
    while j < len(text) and (_is_name_char(text[j]) or text[j] in ".-"):
        j += 1
    word = text[i:j]
    if word in KEYWORDS:  # "FROM WHERE": let the parser report it
        tokens.append(_Token("KEYWORD", word, i))
        return j
    parts = word.split(".")
    if len(parts) == 2 and "" in parts:
        raise QueryError(f"incomplete bus address '{word}'", text, i)
    if len(parts) != 2 or not all(_is_name_start(p[0]) for p in parts):
        raise QueryError(f"invalid bus address '{word}'", text, i)
    tokens.append(_Token("BUS", word, i))
    return j


def _number(text: str, i: int, tokens: list[_Token]) -> int:
    j = i
    while j < len(text) and text[j].isascii() and text[j].isdigit():
        j += 1
    if j < len(text) and text[j] == ".":
        k = j + 1
        while k < len(text) and text[k].isascii() and text[k].isdigit():
            k += 1
        if k == j + 1:
            raise QueryError("expected digits after '.'", text, k)
        tokens.append(_Token("REAL", text[i:k], i))
        return k
    tokens.append(_Token("INTEGER", text[i:j], i))
    return j


# -- syntax tree ------------------------------------------------------------------------------

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


# -- parser -----------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        if token.kind != "END":
            self.index += 1
        return token

    def error(self, message: str, token: _Token | None = None) -> QueryError:
        token = token or self.token
        return QueryError(message, self.text, token.position)

    def expected(self, what: str) -> QueryError:
        return self.error(f"expected {what}, found {self.token.describe()}")

    def at(self, kind: TokenKind, text: str) -> bool:
        return self.token.kind == kind and self.token.text == text

    def accept(self, kind: TokenKind, text: str) -> _Token | None:
        return self.advance() if self.at(kind, text) else None

    def expect(self, kind: TokenKind, text: str) -> _Token:
        token = self.accept(kind, text)
        if token is None:
            raise self.expected(f"'{text}'")
        return token

    # query = "SELECT" ( "*" | qualified_name ) "FROM" ( bus_address | "*" ) [ "WHERE" expr ]
    def query(self) -> Query:
        self.expect("KEYWORD", "SELECT")
        type_name: str | None = None
        if self.accept("OP", "*") is None:
            if self.token.kind != "IDENT":
                raise self.expected("a class name or '*'")
            type_name = self.advance().text
        self.expect("KEYWORD", "FROM")
        bus: str | None = None
        if self.accept("OP", "*") is None:
            if self.token.kind != "BUS":
                raise self.expected("a bus address or '*'")
            bus = self.advance().text
        where: Expr | None = None
        if self.accept("KEYWORD", "WHERE") is not None:
            where = self.expr()
        if self.token.kind != "END":
            raise self.expected(
                "'WHERE' or end of query" if where is None else "an operator or end of query"
            )
        return Query(type_name, bus, where)

    def expr(self) -> Expr:
        left = self.and_e()
        while (token := self.accept("KEYWORD", "OR")) is not None:
            left = Binary("OR", left, self.and_e(), token.position)
        return left

    def and_e(self) -> Expr:
        left = self.eq_e()
        while (token := self.accept("KEYWORD", "AND")) is not None:
            left = Binary("AND", left, self.eq_e(), token.position)
        return left

    def eq_e(self) -> Expr:
        left = self.rel_e()
        while self.token.kind == "OP" and self.token.text in ("=", "!="):
            token = self.advance()
            op: BinaryOp = "=" if token.text == "=" else "!="
            left = Binary(op, left, self.rel_e(), token.position)
        return left

    def rel_e(self) -> Expr:
        left = self.sum()
        negated = self.accept("KEYWORD", "NOT") is not None
        if self.at("KEYWORD", "BETWEEN"):
            token = self.advance()
            low = self.sum()
            self.expect("KEYWORD", "AND")
            high_token = self.token
            high = self.sum()
            self._check_bounds(low, high, high_token)
            return Between(left, low, high, negated, token.position)
        if self.at("KEYWORD", "IN"):
            token = self.advance()
            self.expect("OP", "(")
            options = [self.sum()]
            while self.accept("OP", ",") is not None:
                options.append(self.sum())
            self.expect("OP", ")")
            return In(left, tuple(options), negated, token.position)
        if negated:
            raise self.expected("BETWEEN or IN after NOT")
        while self.token.kind == "OP" and self.token.text in ("<", "<=", ">", ">="):
            token = self.advance()
            op: BinaryOp = _COMPARISONS[token.text]
            left = Binary(op, left, self.sum(), token.position)
        return left

    def _check_bounds(self, low: Expr, high: Expr, token: _Token) -> None:
        """Literal bounds (variable-free) out of order are a parse error."""
        lo, hi = _constant(low), _constant(high)
        if lo is None or hi is None:
            return
        numbers = _is_number(lo) and _is_number(hi)
        strings = isinstance(lo, str) and isinstance(hi, str)
        if (numbers or strings) and lo > hi:  # type: ignore[operator]
            raise self.error("BETWEEN bounds out of order", token)

    def sum(self) -> Expr:
        left = self.product()
        while self.token.kind == "OP" and self.token.text in ("+", "-"):
            token = self.advance()
            op: BinaryOp = "+" if token.text == "+" else "-"
            left = Binary(op, left, self.product(), token.position)
        return left

    def product(self) -> Expr:
        left = self.unary()
        while self.token.kind == "OP" and self.token.text in ("*", "/"):
            token = self.advance()
            op: BinaryOp = "*" if token.text == "*" else "/"
            left = Binary(op, left, self.unary(), token.position)
        return left

    def unary(self) -> Expr:
        token = self.token
        if self.at("KEYWORD", "NOT") or self.at("OP", "!"):
            self.advance()
            return Unary("NOT", self.unary(), token.position)
        if self.at("OP", "-"):
            self.advance()
            return Unary("-", self.unary(), token.position)
        return self.primary()

    def primary(self) -> Expr:
        token = self.token
        if token.kind == "INTEGER":
            self.advance()
            return Literal(int(token.text), token.position)
        if token.kind == "REAL":
            self.advance()
            return Literal(float(token.text), token.position)
        if token.kind == "STRING":
            self.advance()
            return Literal(token.text, token.position)
        if token.kind == "BOOL":
            self.advance()
            return Literal(_BOOLEANS[token.text], token.position)
        if token.kind == "IDENT":
            self.advance()
            return Variable(tuple(token.text.split(".")), token.position)
        if self.accept("OP", "(") is not None:
            inner = self.expr()
            self.expect("OP", ")")
            return inner
        raise self.expected("a value")


_COMPARISONS: Final[dict[str, BinaryOp]] = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _constant(expr: Expr) -> Value | None:
    """The value of a variable-free expression, None when it has variables or a type error."""
    try:
        value = _compile(expr, None)(None)
    except (_Mismatch, _Unknown):
        return None
    return None if value is _ABSENT else value


def parse_query(text: str) -> Query:
    """Parse ``SELECT … FROM … [WHERE …]``; raises :class:`QueryError`."""
    return _Parser(text).query()


# -- evaluation -------------------------------------------------------------------------------


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


_ABSENT: Final = _Absent()

Result: TypeAlias = Any  # Value or _ABSENT
Compiled: TypeAlias = Callable[[Any], Result]


class _Mismatch(Exception):
    """A type error while evaluating: the object does not match."""


class _Unknown(Exception):
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
