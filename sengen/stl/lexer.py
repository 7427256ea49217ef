"""The STL scanner: bytes to tokens and comments, with 1-based line/column positions.

Sengen lexes a whole file before parsing, so that keywords are reserved everywhere (a contextual
lexer would let ``optional: u32`` through) and comments can be taken out of the token stream and
kept, with their positions, for documentation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lark import Token

from sengen.errors import StlSyntaxError

KEYWORDS = frozenset(
    [
        "import",
        "package",
        "struct",
        "enum",
        "variant",
        "sequence",
        "array",
        "quantity",
        "alias",
        "optional",
        "class",
        "abstract",
        "interface",
        "extends",
        "implements",
        "var",
        "fn",
        "event",
        "true",
        "false",
    ]
)
QUERY_KEYWORDS = frozenset(["AND", "OR", "NOT", "SELECT", "FROM", "WHERE", "BETWEEN", "IN"])

PUNCTUATION = {
    "(": "LPAR",
    ")": "RPAR",
    "{": "LBRACE",
    "}": "RBRACE",
    "[": "LSQB",
    "]": "RSQB",
    ",": "COMMA",
    ".": "DOT",
    ":": "COLON",
    ";": "SEMICOLON",
    "<": "LESSTHAN",
    ">": "MORETHAN",
    "=": "EQUAL",
    "-": "MINUS",
    # Recognised so that they are reported as one token, never valid in STL.
    "+": "PLUS",
    "*": "STAR",
    "/": "SLASH",
    "!": "BANG",
    "@": "AT",
    "!=": "NOTEQUAL",
    "==": "EQEQ",
    "<=": "LESSEQUAL",
    ">=": "MOREEQUAL",
}

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_TOKEN_RE = re.compile(
    r"(?P<WS>[ \t\r\n]+)"
    r"|(?P<COMMENT>//[^\n\r]*)"
    r"|(?P<REAL>-?[0-9]+\.[0-9]+)"
    r"|(?P<INT>-?[0-9]+)"
    r"|(?P<NAME>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<STRING>\"[^\"]*\"|'[^']*')"
    r"|(?P<PUNCT>!=|==|<=|>=|[(){}\[\],.:;<>=\-+*/!@])"
)
_RULER_PREFIXES = ("--", " --", "- --")
_COMMENT_STRIP = " \t\r\n"


@dataclass(frozen=True, slots=True)
class Comment:
    """A ``//`` comment. ``text`` is what documentation uses (§1.3): leading blanks removed."""

    line: int
    column: int
    start: int
    end: int
    text: str


def is_ruler(raw: str) -> bool:
    """Ruler comments (``//-----``, ``// --- x ---``) are dropped and never document anything."""
    return raw.startswith(_RULER_PREFIXES)


def tokenize(text: str) -> tuple[list[Token], list[Comment]]:
    """Split ``text`` into parser tokens and (non-ruler) comments, or raise StlSyntaxError."""
    tokens: list[Token] = []
    comments: list[Comment] = []
    match = _TOKEN_RE.match
    pos = 0
    line = 1
    line_start = 0
    size = len(text)
    while pos < size:
        m = match(text, pos)
        if m is None:
            _fail(text, pos, line, pos - line_start + 1)
        assert m is not None
        kind = m.lastgroup or ""
        value = m.group()
        end = m.end()
        column = pos - line_start + 1
        if kind in ("WS", "STRING"):
            newlines = value.count("\n")
            if kind == "STRING":
                # Strings may span lines and hold any text; the value excludes the quotes.
                end_line = line + newlines
                end_column = (
                    end - (text.rfind("\n", 0, end) + 1) + 1 if newlines else column + len(value)
                )
                tokens.append(
                    Token("STRING", value[1:-1], pos, line, column, end_line, end_column, end)
                )
            if newlines:
                line += newlines
                line_start = text.rfind("\n", 0, end) + 1
        elif kind == "COMMENT":
            raw = value[2:]
            if not is_ruler(raw):
                comments.append(Comment(line, column, pos, end, raw.lstrip(_COMMENT_STRIP)))
        else:
            if kind == "NAME":
                if value in KEYWORDS:
                    kind = value.upper()
                elif value in QUERY_KEYWORDS:
                    kind = "QUERY_KEYWORD"
            elif kind == "PUNCT":
                kind = PUNCTUATION[value]
            elif kind == "INT" and (len(value) > 20 or not INT64_MIN <= int(value) <= INT64_MAX):
                raise StlSyntaxError("integer literal out of range", line, column, len(value))
            tokens.append(Token(kind, value, pos, line, column, line, column + len(value), end))
        pos = end
    return tokens, comments


def _fail(text: str, pos: int, line: int, column: int) -> None:
    char = text[pos]
    if char in "\"'":
        raise StlSyntaxError("Unterminated string.", line, column)
    if char.isprintable() and char != " ":
        raise StlSyntaxError(f"unexpected character '{char}'", line, column)
    raise StlSyntaxError(f"unexpected character {char!r} (U+{ord(char):04X})", line, column)
