"""Sen's context phrases for syntax errors (spec stl.md §2.4).

The LALR parser knows *that* a token is unexpected; these functions say *where* in the
construct it happened, in Sen's words, from the tokens of the statement parsed so far. The
prefix is always a valid beginning of a statement (the parser accepted it), so a walk over its
token types is enough.
"""

from __future__ import annotations

from collections.abc import Callable

from lark import Token

_Handler = Callable[[list[Token], list[str]], str]

_GENERIC_KEYWORDS = {"SEQUENCE", "ARRAY", "OPTIONAL", "QUANTITY"}


def phrase(partial: list[Token], found: Token) -> str:
    """The message for ``found`` arriving after the statement prefix ``partial``."""
    if not partial:
        return "Expected statement"
    types = [t.type for t in partial]
    head = "CLASS" if types[0] == "ABSTRACT" else types[0]
    handler = _HANDLERS[head]
    return handler(partial, types)


def hint(message: str, found: Token, following: str) -> str | None:
    """A suggestion for an inline generic type, which STL only allows through a declared name."""
    in_type_position = "type" in message and message != "Expected type name"
    if found.type not in _GENERIC_KEYWORDS or not in_type_position:
        return None
    inner = following.lstrip(" \t")
    element = "T"
    if inner.startswith("<"):
        name = inner[1:].lstrip(" \t").split(">")[0].split(",")[0].strip()
        if name.replace(".", "").replace("_", "").isalnum():
            element = name
    simple = element.split(".")[-1]
    capital = simple[:1].upper() + simple[1:]
    keyword = str(found)
    example = {
        "sequence": f"sequence<{element}> {capital}List;",
        "array": f"array<{element}, 4> {capital}Array;",
        "optional": f"optional<{element}> Maybe{capital};",
        "quantity": f"quantity<{element}, m> {capital}Quantity;",
    }[keyword]
    return f"declare it as a named type first, e.g. '{example}'"


def _name(partial: list[Token], index: int) -> str:
    return str(partial[index]) if len(partial) > index else ""


def _current(body: list[Token]) -> list[Token]:
    """The tokens of the element being parsed: those after the last comma of the body."""
    for i in range(len(body) - 1, -1, -1):
        if body[i].type == "COMMA":
            return body[i + 1 :]
    return body


def _ref_text(tokens: list[Token]) -> str:
    return "".join(str(t) for t in tokens)


def _import(partial: list[Token], types: list[str]) -> str:
    return "Expected file name to import" if len(partial) == 1 else "Expected statement"


def _package(partial: list[Token], types: list[str]) -> str:
    if types[-1] == "SEMICOLON":
        return "Expected statement"
    if types[-1] in ("PACKAGE", "DOT"):
        return "Expected package identifier"
    return "Expected ; after package statement"


def _struct(partial: list[Token], types: list[str]) -> str:
    name = _name(partial, 1)
    if len(partial) == 1:
        return "Expected struct name"
    if types[-1] in ("SEMICOLON", "RBRACE"):
        return "Expected statement"
    if "LBRACE" not in types:
        if types[-1] in ("COLON", "DOT"):
            return f"Expected parent struct name for {name}"
        return f"Expected '{{' before struct body for {name}"
    field = _current(partial[types.index("LBRACE") + 1 :])
    if not field:
        return "Expected struct field name"
    if len(field) == 1:
        return f"Expected : after struct field {field[0]}"
    if field[-1].type in ("COLON", "DOT"):
        return "Expected struct field type"
    return f"Expected , after struct field {field[0]}"


def _enum(partial: list[Token], types: list[str]) -> str:
    name = _name(partial, 1)
    if len(partial) == 1:
        return "Expected enum name"
    if types[-1] == "RBRACE":
        return "Expected statement"
    if "LBRACE" not in types:
        if len(partial) == 2:
            return f"Expected ':' after enum name for {name}"
        if types[-1] in ("COLON", "DOT"):
            return f"Expected enum storage type name for {name}"
        return f"Expected '{{' before enum body for {name}"
    if not _current(partial[types.index("LBRACE") + 1 :]):
        return f"Expected '}}' after enum body for {name}"
    return f"Expected ',' after enumerator for {name}"


def _variant(partial: list[Token], types: list[str]) -> str:
    name = _name(partial, 1)
    if len(partial) == 1:
        return "Expected variant name"
    if types[-1] == "RBRACE":
        return "Expected statement"
    if "LBRACE" not in types:
        return f"Expected '{{' before variant body for {name}"
    element = _current(partial[types.index("LBRACE") + 1 :])
    if not element or element[-1].type == "DOT":
        return "Expected type name for variant"
    return f"Expected , after variant element {_ref_text(element)}"


def _attributes(after_open: list[Token], owner: str) -> str:
    attribute = _current(after_open)
    if not attribute:
        return "Expected attribute name"
    if attribute[-1].type == "COLON":
        return f"Expected attribute value after '{attribute[0]}:'"
    return f"Expected ']' to end attribute list for {owner}"


def _open_attributes(partial: list[Token], types: list[str], owner: str) -> str | None:
    """The attribute phrase when the prefix ends inside an unfinished ``[...]``."""
    if "LSQB" in types and "RSQB" not in types[types.index("LSQB") :]:
        return _attributes(partial[types.index("LSQB") + 1 :], owner)
    return None


def _generic(kind: str, first: str, second: str, after_second: str, close: str) -> _Handler:
    """Phrases for sequence/array/quantity: ``kind<first, second> Name [attrs];``."""

    def handler(partial: list[Token], types: list[str]) -> str:
        if len(partial) == 1:
            return f"Expected < to start {kind} definition"
        if types[-1] == "SEMICOLON":
            return "Expected statement"
        if "MORETHAN" not in types:
            last = types[-1]
            if last in ("LESSTHAN", "DOT"):
                return first
            if last == "COMMA":
                return second
            if "COMMA" in types:
                return after_second
            return close
        after = types.index("MORETHAN")
        if len(partial) == after + 1:
            return "Expected type name"
        name = str(partial[after + 1])
        inside = _open_attributes(partial, types, name)
        return inside or f"Expected ; after {kind} statement"

    return handler


def _alias(partial: list[Token], types: list[str]) -> str:
    if len(partial) == 1:
        return "Expected type name for alias"
    if types[-1] == "SEMICOLON":
        return "Expected statement"
    if len(partial) == 2 or types[-1] == "DOT":
        return "Expected type for alias"
    return "Expected ; after alias statement"


def _optional(partial: list[Token], types: list[str]) -> str:
    if len(partial) == 1:
        return "Expected < to start optional definition"
    if types[-1] == "SEMICOLON":
        return "Expected statement"
    if "MORETHAN" not in types:
        if types[-1] in ("LESSTHAN", "DOT"):
            return "Expected type name for optional"
        return "Expected > to end optional definition"
    if types[-1] == "MORETHAN":
        return "Expected type name"
    return "Expected ; after optional statement"


def _class(partial: list[Token], types: list[str]) -> str:
    offset = 1 if types[0] == "ABSTRACT" else 0
    if len(partial) == 1 and offset:
        return "Expected class keyword"
    if len(partial) == 1 + offset:
        return "Expected type name"
    name = str(partial[1 + offset])
    if "LBRACE" not in types:
        last = types[-1]
        if last in ("COLON", "COMMA"):
            return f"Expected parent for class {name}"
        if last == "EXTENDS" or (last == "DOT" and _last_parent(types) == "EXTENDS"):
            return f"Expected parent class name for {name}"
        if last in ("IMPLEMENTS", "DOT"):
            return f"Expected parent interface for {name}"
        return f"Expected '{{' before class body for {name}"
    if types[-1] == "RBRACE":
        return "Expected statement"
    body = partial[types.index("LBRACE") + 1 :]
    start = max((i for i, t in enumerate(body) if t.type in ("VAR", "FN", "EVENT")), default=-1)
    if start < 0 or body[-1].type == "SEMICOLON":
        return "Expected class member or '}'"
    return _member(body[start:])


def _last_parent(types: list[str]) -> str | None:
    for t in reversed(types):
        if t in ("EXTENDS", "IMPLEMENTS"):
            return t
    return None


def _member(member: list[Token]) -> str:
    types = [t.type for t in member]
    kind = types[0]
    what = {"VAR": "var", "FN": "function", "EVENT": "event"}[kind]
    if len(member) == 1:
        return f"Expected {what} name"
    name = str(member[1])
    if kind == "VAR":
        inside = _open_attributes(member, types, name)
        if inside:
            return inside
        if len(member) == 2:
            return f"Expected : after var {name}"
        if types[-1] in ("COLON", "DOT"):
            return "Expected var type"
        if types[-1] == "EQUAL":
            return "Expecting literal"
        return f"Expected ; after var {name}"
    if len(member) == 2:
        return f"Expected ( to start args for {what} {name}"
    if "RPAR" not in types:
        argument = _current(member[3:])
        if not argument:
            return "Expected argument name"
        if len(argument) == 1:
            return f"Expected ':' after argument {argument[0]}"
        if argument[-1].type in ("COLON", "DOT"):
            return "Expected argument type"
        return f"Expected ) to close args for {what} {name}"
    inside = _open_attributes(member, types, name)
    if inside:
        return inside
    if types[-1] == "MINUS":
        return f"expecting -> for return type of function {name}"
    if types[-1] in ("MORETHAN", "DOT"):
        return "Expected function return type"
    return f"Expected ; after {what} {name}"


_HANDLERS: dict[str, _Handler] = {
    "IMPORT": _import,
    "PACKAGE": _package,
    "STRUCT": _struct,
    "ENUM": _enum,
    "VARIANT": _variant,
    "SEQUENCE": _generic(
        "sequence",
        "Expected element type name for sequence",
        "Expected maximum size for sequence",
        "Expected > to end sequence definition",
        "Expected > to end sequence definition",
    ),
    "ARRAY": _generic(
        "array",
        "Expected element type name for array",
        "Expected size for array",
        "Expected > to end array definition",
        "Expected ',' after array element type",
    ),
    "QUANTITY": _generic(
        "quantity",
        "Expected value type name for quantity",
        "Expected unit name for quantity",
        "Expected > to end quantity definition",
        "Expected , after value type for quantity",
    ),
    "ALIAS": _alias,
    "OPTIONAL": _optional,
    "CLASS": _class,
    "INTERFACE": _class,
}
