"""The syntax tree of one STL file: what was written, with every token kept for positions.

This is the parser's output and the resolver's input. Descriptions are filled in afterwards by
``sengen.stl.comments``; nothing here is resolved yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Token


@dataclass(slots=True)
class Ref:
    """A dotted type reference, ``a.b.C``; ``parts`` are the NAME tokens."""

    parts: tuple[Token, ...]

    @property
    def text(self) -> str:
        return ".".join(str(p) for p in self.parts)

    @property
    def first(self) -> Token:
        return self.parts[0]

    @property
    def last(self) -> Token:
        return self.parts[-1]

    @property
    def length(self) -> int:
        """Characters from the first to the last segment, for the caret line."""
        first, last = self.parts[0], self.parts[-1]
        if last.line != first.line:
            return len(str(first))
        return (last.end_column or 0) - (first.column or 0)


@dataclass(slots=True)
class Attribute:
    name: Token
    value: Token | None  # NAME, INT, REAL, STRING, TRUE or FALSE

    @property
    def is_bare(self) -> bool:
        """No value; Sen treats ``tag: ""`` the same way."""
        return self.value is None or (self.value.type == "STRING" and str(self.value) == "")


@dataclass(slots=True)
class Element:
    """A struct field, enumerator or variant alternative, with its comma if it has one."""

    first: Token
    last: Token
    comma: Token | None
    name: Token | None  # fields and enumerators
    type: Ref | None  # fields and alternatives
    description: str = ""


@dataclass(slots=True)
class Argument:
    name: Token
    type: Ref
    comma: Token | None
    description: str = ""


@dataclass(frozen=True, slots=True)
class ParamDoc:
    """The text of one ``@param`` block, with the comment's position for diagnostics."""

    name: str
    text: str
    line: int
    column: int


@dataclass(slots=True)
class Member:
    """A ``var``, ``fn`` or ``event`` inside a class body."""

    keyword: Token
    name: Token
    semicolon: Token
    type: Ref | None = None  # var: property type; fn: return type
    default: Token | None = None  # var: the '=' of an ignored default value
    arguments: list[Argument] = field(default_factory=list)
    lpar: Token | None = None
    rpar: Token | None = None
    attributes: list[Attribute] = field(default_factory=list)
    description: str = ""
    param_docs: list[ParamDoc] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return str(self.keyword)


@dataclass(slots=True)
class Parent:
    keyword: Token  # EXTENDS or IMPLEMENTS
    type: Ref


@dataclass(slots=True)
class Statement:
    """One top-level statement. ``kind`` is the keyword: import, package, struct, … class.

    Fields not used by a kind stay empty. ``first`` is the first token (``abstract`` for an
    abstract class), ``last`` the terminating ``;`` or ``}`` (the string for an import).
    """

    kind: str
    first: Token
    last: Token
    name: Token | None = None  # declared name
    path: Token | None = None  # import
    package: Ref | None = None  # package statement
    target: Ref | None = None  # struct parent, enum storage, element, value type, alias target
    size: Token | None = None  # sequence bound, array size
    unit: Token | None = None  # quantity
    attributes: list[Attribute] = field(default_factory=list)
    attributes_open: Token | None = None  # the '[' of an attribute list
    elements: list[Element] = field(default_factory=list)
    body_open: Token | None = None  # '{'
    abstract: bool = False
    parents: list[Parent] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)
    description: str = ""


@dataclass(slots=True)
class FileSyntax:
    statements: list[Statement]
