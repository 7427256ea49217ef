"""Parsing: tokens to the syntax tree with Lark's LALR parser, and syntax errors in Sen's words."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from importlib.resources import files
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput, UnexpectedToken
from lark.lexer import Lexer, LexerState

from sengen.errors import StlSyntaxError
from sengen.stl import syntax_errors
from sengen.stl.lexer import Comment, tokenize
from sengen.stl.syntax import (
    Argument,
    Attribute,
    Element,
    FileSyntax,
    Member,
    Parent,
    Ref,
    Statement,
)


class _TokenFeed(Lexer):
    """Hands the parser the tokens sengen's own scanner produced (see sengen.stl.lexer)."""

    __future_interface__ = 2  # called with the lexer state, whose text is our token list

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        tokens: list[Token] = lexer_state.text  # type: ignore[assignment]
        return iter(tokens)


@cache
def _lark() -> Lark:
    grammar = files("sengen.stl").joinpath("stl.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer=_TokenFeed, keep_all_tokens=True, cache=True)


def grammar_parser() -> Lark:
    """The LALR parser built from ``stl.lark`` (built once per process)."""
    return _lark()


def parse(text: str) -> tuple[FileSyntax, list[Comment]]:
    """Parse one file's text. Raises StlSyntaxError at the first lexical or syntax error."""
    tokens, comments = tokenize(text)
    try:
        tree = _lark().parse(tokens)
    except UnexpectedToken as exc:
        raise _syntax_error(exc, text) from None
    except UnexpectedInput as exc:  # pragma: no cover - the token feed only raises UnexpectedToken
        raise StlSyntaxError(str(exc), exc.line, exc.column) from None
    return FileSyntax([_statement(c) for c in tree.children if isinstance(c, Tree)]), comments


def _syntax_error(exc: UnexpectedToken, text: str) -> StlSyntaxError:
    token = exc.token
    stack = exc.interactive_parser.parser_state.value_stack if exc.interactive_parser else []
    partial: list[Token] = []
    for item in stack:
        # Completed statements sit on the stack whole, or collected in the rule Lark makes for
        # ``start: _statement*``; other helper rules (``__struct_decl_star_1``) hold a prefix.
        if isinstance(item, Tree) and (
            item.data in _STATEMENT_RULES or item.data.startswith("__start")
        ):
            partial.clear()
        else:
            partial.extend(_flatten(item))
    message = syntax_errors.phrase(partial, token)
    if token.type == "$END":
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        return StlSyntaxError(f"{message}, found end of file", line, column)
    shown = text[token.start_pos : token.end_pos] if token.start_pos is not None else str(token)
    hint = syntax_errors.hint(message, token, _following(text, token))
    found = f"{message}, found '{shown}'"
    return StlSyntaxError(
        f"{found}: {hint}" if hint else found, token.line or 1, token.column or 1, len(shown) or 1
    )


def _following(text: str, token: Token) -> str:
    """The source after an offending token, up to the line end: enough to word a hint."""
    start = token.end_pos or 0
    end = text.find("\n", start)
    return text[start : end if end >= 0 else len(text)]


_STATEMENT_RULES = frozenset(
    [
        "import_stmt",
        "package_stmt",
        "struct_decl",
        "enum_decl",
        "variant_decl",
        "sequence_decl",
        "array_decl",
        "quantity_decl",
        "alias_decl",
        "optional_decl",
        "class_decl",
        "interface_decl",
    ]
)


def _flatten(item: Tree[Token] | Token) -> Iterator[Token]:
    if isinstance(item, Token):
        yield item
        return
    for child in item.children:
        yield from _flatten(child)


# --- tree to syntax ---------------------------------------------------------------------------


def _tokens(tree: Tree[Token]) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token)]


def _subtrees(tree: Tree[Token], data: str) -> list[Tree[Token]]:
    return [c for c in tree.children if isinstance(c, Tree) and c.data == data]


def _ref(tree: Tree[Token]) -> Ref:
    return Ref(tuple(t for t in _tokens(tree) if t.type == "NAME"))


def _first_ref(tree: Tree[Token]) -> Ref | None:
    refs = _subtrees(tree, "ref")
    return _ref(refs[0]) if refs else None


def _names(tree: Tree[Token]) -> list[Token]:
    return [t for t in _tokens(tree) if t.type == "NAME"]


def _attributes(tree: Tree[Token]) -> tuple[list[Attribute], Token | None]:
    lists = _subtrees(tree, "attributes")
    if not lists:
        return [], None
    result: list[Attribute] = []
    for attr in _subtrees(lists[0], "attribute"):
        toks = _tokens(attr)
        literal = _subtrees(attr, "literal")
        value: Token | None = None
        if literal:
            value = _tokens(literal[0])[0]
        elif len(toks) == 3:
            value = toks[2]
        result.append(Attribute(toks[0], value))
    return result, _tokens(lists[0])[0]


def _elements(tree: Tree[Token], data: str) -> list[Element]:
    """Elements of a struct, enum or variant body, each with the comma that follows it."""
    result: list[Element] = []
    for child in tree.children:
        if isinstance(child, Tree) and child.data == data:
            ref = _first_ref(child)
            toks = _tokens(child)
            name = toks[0] if toks and toks[0].type == "NAME" and data != "alternative" else None
            first = name if name is not None else ref.first  # type: ignore[union-attr]
            last = ref.last if ref is not None else first
            result.append(Element(first, last, None, name, ref))
        elif isinstance(child, Token) and child.type == "COMMA" and result:
            result[-1].comma = child
    return result


def _arguments(tree: Tree[Token]) -> list[Argument]:
    lists = _subtrees(tree, "arguments")
    if not lists:
        return []
    result: list[Argument] = []
    for child in lists[0].children:
        if isinstance(child, Tree):
            result.append(Argument(_tokens(child)[0], _ref(_subtrees(child, "ref")[0]), None))
        elif child.type == "COMMA":
            result[-1].comma = child
    return result


def _member(tree: Tree[Token]) -> Member:
    toks = _tokens(tree)
    attributes, _ = _attributes(tree)
    member = Member(toks[0], toks[1], toks[-1], _first_ref(tree), attributes=attributes)
    if tree.data == "var_decl":
        member.default = next((t for t in toks if t.type == "EQUAL"), None)
    else:
        member.arguments = _arguments(tree)
        member.lpar = next(t for t in toks if t.type == "LPAR")
        member.rpar = next(t for t in toks if t.type == "RPAR")
    return member


def _statement(tree: Tree[Token]) -> Statement:
    toks = _tokens(tree)
    first, last = toks[0], toks[-1]
    kind = tree.data.removesuffix("_decl").removesuffix("_stmt")
    stmt = Statement(str(kind), first, last)
    if kind == "import":
        stmt.path = toks[1]
        return stmt
    if kind == "package":
        stmt.package = _first_ref(tree)
        return stmt
    if kind in ("class", "interface"):
        stmt.kind = kind
        stmt.abstract = first.type == "ABSTRACT"
        stmt.name = _names(tree)[0]
        stmt.parents = [
            Parent(_tokens(p)[0], _ref(_subtrees(p, "ref")[0])) for p in _subtrees(tree, "parent")
        ]
        body = _subtrees(tree, "class_body")[0]
        body_toks = _tokens(body)
        stmt.body_open, stmt.last = body_toks[0], body_toks[-1]
        stmt.members = [_member(m) for m in body.children if isinstance(m, Tree)]
        return stmt
    names = _names(tree)
    stmt.target = _first_ref(tree)
    stmt.attributes, stmt.attributes_open = _attributes(tree)
    stmt.body_open = next((t for t in toks if t.type == "LBRACE"), None)
    if kind in ("struct", "enum", "variant", "alias"):
        stmt.name = names[0]
        element_rule = {"struct": "field", "enum": "enumerator", "variant": "alternative"}
        if kind in element_rule:
            stmt.elements = _elements(tree, element_rule[kind])
    else:  # sequence, array, quantity, optional: the declared name follows '>'
        stmt.name = names[-1]
        ints = [t for t in toks if t.type == "INT"]
        stmt.size = ints[0] if ints else None
        if kind == "quantity":
            stmt.unit = names[0]
    return stmt
