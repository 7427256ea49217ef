"""Parsing a query: the lexer, the recursive-descent parser and :class:`QueryError`.

The parser builds the evaluable :class:`~.evaluate.Query` and folds variable-free ``BETWEEN``
bounds with the evaluator to reject bounds out of order, hence its import of ``evaluate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeAlias
from typing import Literal as TypingLiteral

from sengen.runtime.errors import SengenError

from .evaluate import Query, _constant, _is_number
from .syntax import Between, Binary, BinaryOp, Expr, In, Literal, Unary, Variable, _quote

# Hostile or generated text must not exhaust the stack: the parser recurses for each parenthesis
# and prefix operator (eight frames each), the evaluator once per level of the tree (a chain of
# ``a OR b OR ...`` is as deep as it is long). Both limits are far beyond a written query.
MAX_NESTING: Final = 50
MAX_DEPTH: Final = 200
KEYWORDS: Final = frozenset({"SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "BETWEEN", "IN"})
_BOOLEANS: Final = {"true": True, "false": False}


class QueryError(SengenError, ValueError):
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
    before, after = line[: column - 1], line[column - 1 :]
    # A long line (a generated query) is shown around the place only.
    if len(before) > _SHOWN_BEFORE:
        before = "..." + before[-_SHOWN_BEFORE:]
    if len(after) > _SHOWN_AFTER:
        after = after[:_SHOWN_AFTER] + "..."
    pad = "".join("\t" if c == "\t" else " " for c in before)
    return f"{message} at {where}\n  {before}{after}\n  {pad}^"


_SHOWN_BEFORE: Final = 60
_SHOWN_AFTER: Final = 40


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


# -- parser -----------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.nesting = 0

    def nested(self, token: _Token) -> None:
        """Enter one more level of parenthesis or prefix operator."""
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise self.error(f"query nested too deeply (more than {MAX_NESTING} levels)", token)

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
            self._check_depth(where)
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

    def _check_depth(self, where: Expr) -> None:
        """Refuse a tree deeper than :data:`MAX_DEPTH`, at its deepest place; iterative, as the
        tree may be deep."""
        stack: list[tuple[Expr, int]] = [(where, 1)]
        while stack:
            expr, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise QueryError(
                    f"query nested too deeply (more than {MAX_DEPTH} levels)",
                    self.text,
                    expr.position,
                )
            stack.extend((child, depth + 1) for child in _children(expr))

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
        if self.at("KEYWORD", "NOT") or self.at("OP", "!") or self.at("OP", "-"):
            self.advance()
            self.nested(token)
            operand = self.unary()
            self.nesting -= 1
            return Unary("-" if token.text == "-" else "NOT", operand, token.position)
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
            self.nested(token)
            inner = self.expr()
            self.expect("OP", ")")
            self.nesting -= 1
            return inner
        raise self.expected("a value")


def _children(expr: Expr) -> tuple[Expr, ...]:
    if isinstance(expr, Unary):
        return (expr.operand,)
    if isinstance(expr, Binary):
        return (expr.left, expr.right)
    if isinstance(expr, Between):
        return (expr.operand, expr.low, expr.high)
    if isinstance(expr, In):
        return (expr.operand, *expr.options)
    return ()


_COMPARISONS: Final[dict[str, BinaryOp]] = {"<": "<", "<=": "<=", ">": ">", ">=": ">="}


def parse_query(text: str) -> Query:
    """Parse ``SELECT … FROM … [WHERE …]``; raises :class:`QueryError`."""
    return _Parser(text).query()
