"""The scanner: token kinds, positions, keyword reservation, comments and lexical errors."""

from __future__ import annotations

import pytest

from sengen.errors import StlSyntaxError
from sengen.stl.lexer import tokenize


def kinds(text: str) -> list[tuple[str, str]]:
    return [(t.type, str(t)) for t in tokenize(text)[0]]


def test_keywords_are_reserved_and_look_alikes_are_names() -> None:
    assert kinds("optional type SELECT select min") == [
        ("OPTIONAL", "optional"),
        ("NAME", "type"),
        ("QUERY_KEYWORD", "SELECT"),
        ("NAME", "select"),
        ("NAME", "min"),
    ]


def test_numbers_follow_the_spec() -> None:
    assert kinds("-5 - 5 1.5 1. .5 0x10 1e3") == [
        ("INT", "-5"),
        ("MINUS", "-"),
        ("INT", "5"),
        ("REAL", "1.5"),
        ("INT", "1"),
        ("DOT", "."),
        ("DOT", "."),
        ("INT", "5"),
        ("INT", "0"),
        ("NAME", "x10"),
        ("INT", "1"),
        ("NAME", "e3"),
    ]


def test_two_char_operators_are_single_tokens_and_arrow_is_two() -> None:
    assert kinds("<= >= -> - >") == [
        ("LESSEQUAL", "<="),
        ("MOREEQUAL", ">="),
        ("MINUS", "-"),
        ("MORETHAN", ">"),
        ("MINUS", "-"),
        ("MORETHAN", ">"),
    ]


def test_positions_are_one_based_code_points_and_lone_cr_is_not_a_line() -> None:
    tokens, _ = tokenize('// é\n\tx "a\nb" y\rz')
    x, string, y, z = tokens
    assert (x.line, x.column) == (2, 2)
    assert (string.line, string.column, string.end_line) == (2, 4, 3)
    assert str(string) == "a\nb"
    assert (y.line, y.column) == (3, 4)
    assert (z.line, z.column) == (3, 6)


def test_comment_text_and_rulers() -> None:
    _, comments = tokenize("/// doc\n//------\n// --- x ---\n//- --\n//  -- kept\n//\n// -x")
    assert [c.text for c in comments] == ["/ doc", "-- kept", "", "-x"]


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ('x "abc', "Unterminated string.", 3),
        ("x é", "unexpected character 'é'", 3),
        ("x \f", "unexpected character '\\x0c' (U+000C)", 3),
        ("x \0", "unexpected character '\\x00' (U+0000)", 3),
        ("9223372036854775808", "integer literal out of range", 1),
    ],
)
def test_lexical_errors(text: str, message: str, column: int) -> None:
    with pytest.raises(StlSyntaxError) as info:
        tokenize(text)
    assert (info.value.message, info.value.line, info.value.column) == (message, 1, column)


def test_int64_limits_are_accepted() -> None:
    assert kinds("-9223372036854775808 9223372036854775807")[1] == ("INT", "9223372036854775807")
