"""Documentation comments: which comment documents which item (spec stl.md §3).

Sen's rules are positional: a comment documents an item when it leads it (comes after the
previous anchor and before the item) or trails it (starts on the line where the item ends).
Comments anywhere else inside a declaration are discarded, which is also how sengen handles
comments in positions where Sen would reject them.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence

from lark import Token

from sengen.stl.lexer import Comment
from sengen.stl.syntax import Element, FileSyntax, Member, ParamDoc, Statement

_PARAM = re.compile(r"@param\s+([A-Za-z_][A-Za-z0-9_]*)")
_OWN_DESCRIPTION = frozenset(["struct", "enum", "variant", "class", "interface"])
_WITH_TRAILING = frozenset(["sequence", "array", "quantity", "alias", "optional"])
_NO_DESCRIPTION = frozenset(("import", "package"))


def join_texts(texts: Iterable[str]) -> str:
    """§3.1: skip empty texts; separate by one space unless the result already ends in one."""
    result = ""
    for text in texts:
        if not text:
            continue
        if result and not result.endswith(" "):
            result += " "
        result += text
    return result


class _Comments:
    """The comments of a file, searchable by source offset."""

    def __init__(self, comments: Sequence[Comment]) -> None:
        self._comments = list(comments)
        self._starts = [c.start for c in comments]

    def between(self, low: int, high: int) -> list[Comment]:
        """Comments that start at or after offset ``low`` and before ``high``."""
        return self._comments[bisect_left(self._starts, low) : bisect_left(self._starts, high)]

    def on_line(self, low: int, high: int, *lines: int) -> list[Comment]:
        return [c for c in self.between(low, high) if c.line in lines]


def _end(token: Token) -> int:
    return token.end_pos or 0


def _start(token: Token) -> int:
    return token.start_pos or 0


def attach(syntax: FileSyntax, comments: Sequence[Comment], text_size: int) -> None:
    """Fill in the descriptions of every statement, element, member and argument."""
    index = _Comments(comments)
    anchor = 0
    statements = syntax.statements
    for i, stmt in enumerate(statements):
        limit = _start(statements[i + 1].first) if i + 1 < len(statements) else text_size + 1
        leading = index.between(anchor, _start(stmt.first))
        anchor = _end(stmt.last)
        if stmt.kind in _NO_DESCRIPTION:
            continue
        texts = [c.text for c in leading]
        if stmt.kind in _WITH_TRAILING:
            trailing = index.on_line(_end(stmt.last), limit, stmt.last.end_line or 0)
            texts += [c.text for c in trailing]
            if trailing:
                anchor = trailing[-1].end
        stmt.description = join_texts(texts)
        if stmt.kind in _OWN_DESCRIPTION and stmt.body_open is not None:
            if stmt.kind in ("class", "interface"):
                _members(index, stmt)
            else:
                _elements(index, stmt.elements, stmt.body_open, stmt.last)


def _elements(index: _Comments, elements: list[Element], open_: Token, close: Token) -> None:
    previous = _end(open_)
    for k, element in enumerate(elements):
        following = elements[k + 1].first if k + 1 < len(elements) else close
        leading = index.between(previous, _start(element.first))
        lines = [element.last.end_line or 0]
        if element.comma is not None:
            lines.append(element.comma.line or 0)
        trailing = index.on_line(_end(element.last), _start(following), *lines)
        element.description = join_texts(c.text for c in [*leading, *trailing])
        previous = max(
            _end(element.comma) if element.comma is not None else _end(element.last),
            trailing[-1].end if trailing else 0,
        )


def _members(index: _Comments, stmt: Statement) -> None:
    assert stmt.body_open is not None
    previous = _end(stmt.body_open)
    members = stmt.members
    for k, member in enumerate(members):
        following = members[k + 1].keyword if k + 1 < len(members) else stmt.last
        leading_comments = index.between(previous, _start(member.keyword))
        leading = [c.text for c in leading_comments]
        trailing = index.on_line(
            _end(member.semicolon), _start(following), member.semicolon.end_line or 0
        )
        if member.kind != "var":
            leading = _split_params(member, leading_comments)
            _arguments(index, member)
        member.description = join_texts([*leading, *(c.text for c in trailing)])
        previous = trailing[-1].end if trailing else _end(member.semicolon)


def _split_params(member: Member, comments: list[Comment]) -> list[str]:
    """§3.4: the description stops at the first @param line; each @param opens a block."""
    description: list[str] = []
    blocks: list[tuple[str, list[str], Comment]] = []
    for comment in comments:
        text = comment.text
        match = _PARAM.search(text)
        if match is not None:
            rest = text[match.end() :].strip()
            if rest[:1] in (":", "-"):
                rest = rest[1:].strip()
            blocks.append((match.group(1), [rest], comment))
        elif blocks:
            blocks[-1][1].append(text)
        else:
            description.append(text)
    member.param_docs = [
        ParamDoc(name, join_texts(parts), comment.line, comment.column)
        for name, parts, comment in blocks
    ]
    return description


def _arguments(index: _Comments, member: Member) -> None:
    assert member.lpar is not None and member.rpar is not None
    previous = _end(member.lpar)
    arguments = member.arguments
    for k, argument in enumerate(arguments):
        leading = index.between(previous, _start(argument.name))
        closing = argument.comma if argument.comma is not None else member.rpar
        own = index.between(_end(argument.type.last), _start(closing))
        after: list[Comment] = []
        previous = _end(closing)
        if argument.comma is not None:
            following = arguments[k + 1].name if k + 1 < len(arguments) else member.rpar
            after = index.on_line(_end(argument.comma), _start(following), argument.comma.line or 0)
            if after:
                previous = after[-1].end
        argument.description = join_texts(c.text for c in [*leading, *own, *after])
