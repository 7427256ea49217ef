"""Robustness fuzzing over Sen's STL corpus (stl.md §9.2: no input, however malformed, produces an
exception; every failure caused by an input is a diagnostic), and grammar parity.

The property test takes a corpus file, damages it (token deletions, insertions and duplications,
identifiers replaced by keywords and query keywords, stray characters including non-ASCII and
control characters, comments in odd places, truncation, random bytes), writes it to a temporary
folder and loads it with the corpus include roots. ``sengen.load`` must return a ``LoadResult``
whose diagnostics are well-formed ``Diagnostic`` objects; any other exception is a bug.

The run is deterministic (``derandomize=True``, no example database) and bounded: 300 examples by
default, ``SENGEN_FUZZ_EXAMPLES=N`` for longer runs (``python bench/run.py --fuzz N``).

Crashes the fuzzer found are kept below as minimal reproducers asserting the spec's diagnostic.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus_layout import CONAN_INCLUDES, DEFAULT_INCLUDES, corpus_files, corpus_root
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from lark import Lark, Token, Tree

import sengen
import sengen.stl.parser
from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.stl.lexer import KEYWORDS, QUERY_KEYWORDS, tokenize

FUZZ_EXAMPLES = int(os.environ.get("SENGEN_FUZZ_EXAMPLES", "300"))


CORPUS_FILES = corpus_files()  # when the corpus is missing, a placeholder that pieces_of skips


# --------------------------------------------------------------------------------------------
# a corpus file as a list of pieces (tokens, comments and the whitespace between them)


@dataclass(frozen=True, slots=True)
class Piece:
    kind: str  # a token type of sengen.stl.lexer, "COMMENT", "WS", or "JUNK" for inserted material
    text: str


@functools.cache
def pieces_of(path: str) -> tuple[Piece, ...]:
    """The original file split so that joining the pieces gives the text back exactly."""
    text = (corpus_root() / path).read_bytes().decode("utf-8-sig")
    tokens, comments = tokenize(text)
    spans = [(t.start_pos or 0, t.end_pos or 0, str(t.type)) for t in tokens]
    # Ruler comments are not returned by tokenize: they stay in the whitespace gaps.
    spans += [(c.start, c.end, "COMMENT") for c in comments]
    spans.sort()
    pieces: list[Piece] = []
    pos = 0
    for start, end, kind in spans:
        if start > pos:
            pieces.append(Piece("WS", text[pos:start]))
        pieces.append(Piece(kind, text[start:end]))
        pos = end
    if pos < len(text):
        pieces.append(Piece("WS", text[pos:]))
    assert "".join(p.text for p in pieces) == text
    return tuple(pieces)


RESERVED = sorted(KEYWORDS | QUERY_KEYWORDS)
INSERTABLE = [
    *RESERVED,
    *"(){}[],.:;<>=-+*/!@",
    "->",
    "- >",
    "!=",
    "==",
    "<=",
    ">=",
    "x",
    "_",
    "u8",
    "string",
    "static",
    "const",
    "min",
    "max",
    "and",
    "not",
    "register",
    "type",
    "class_",
    "0",
    "-1",
    "1.5",
    "-0.0",
    "1.",
    ".5",
    "0x10",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    '"s"',
    "'s'",
    '"',
    "'",
    '"a.xml"',
    '"stl/sen/kernel/basic_types.stl"',
    "[static]",
    "[min: 0, max: 1]",
    "[maxSize: 3]",
    "<u8, 2>",
    "sequence<u8>",
    "quantity<f32, m>",
    "optional<u8>",
    "package q;",
    'import "animal.stl"',
    "struct Z { a : u8 }",
    "class K : extends K {}",
]
STRAY = [
    "\x00",
    "\x01",
    "\x07",
    "\x0b",
    "\x0c",
    "\x1b",
    "\x7f",
    "\r",
    "\n",
    "\t",
    "\u00a0",
    "\u00e9",
    "\u00c9",
    "\u0130",
    "\u03a9",
    "\u2028",
    "\u200b",
    "\ufeff",
    "\ufffd",
    "\u20ac",
    "\U0001f600",
    "\ud7ff",
    "$",
    "#",
    "%",
    "^",
    "&",
    "|",
    "~",
    "`",
    "?",
    "\\",
    "/*",
    "*/",
]
COMMENTS = [
    "//",
    "//\n",
    "// c\n",
    "// c",
    "/// doc\n",
    "// @param a the a\n",
    "// @param\n",
    "//---\n",
    "// --- x ---\n",
    "//- --\n",
    "// \u00e9\u20ac\n",
    "// c\r",
    "// c\r\n",
    "\n// c\n",
    "//\x00\n",
]


RENAMES = [
    # natives, C++ reserved words (stl.md §2.5), Python keywords, odd but valid identifiers
    "u8",
    "i64",
    "f32",
    "string",
    "bool",
    "Duration",
    "TimeStamp",
    "void",
    "register",
    "default",
    "delete",
    "not",
    "or",
    "class_",
    "def",
    "lambda",
    "None",
    "self",
    "_",
    "__init__",
    "A",
    "a",
    "MyClass",
    "sen",
    "kernel",
    "m",
    "u16",
    "k",
    "kg_per_m3",
    "x" * 300,
]


def _mutate_lines(draw: st.DrawFn, text: str) -> str:
    """Whole-line edits, which often keep the syntax valid: duplicated, deleted, swapped lines."""
    lines = text.split("\n")
    op = draw(st.sampled_from(["duplicate", "delete", "swap"]))
    i = _index(draw, len(lines))
    if op == "duplicate":
        lines.insert(i, lines[i])
    elif op == "delete":
        del lines[i]
    else:
        j = _index(draw, len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


def _index(draw: st.DrawFn, size: int) -> int:
    return draw(st.integers(0, max(0, size - 1)))


def _mutate_pieces(draw: st.DrawFn, pieces: list[Piece]) -> None:
    """One mutation, in place."""
    op = draw(
        st.sampled_from(
            [
                "delete",
                "insert",
                "duplicate",
                "reserved",
                "stray",
                "comment",
                "truncate",
                "swap",
                "move",
                "rename",
                "rename",
                "rename",
            ]
        )
    )
    if not pieces:
        pieces.append(Piece("JUNK", draw(st.sampled_from(INSERTABLE))))
        return
    i = _index(draw, len(pieces))
    if op == "delete":
        del pieces[i : i + draw(st.integers(1, 3))]
    elif op == "insert":
        spacing = draw(st.sampled_from(["", " ", "\n"]))
        pieces.insert(i, Piece("JUNK", spacing + draw(st.sampled_from(INSERTABLE)) + spacing))
    elif op == "duplicate":
        pieces[i:i] = pieces[i : i + draw(st.integers(1, 4))]
    elif op == "reserved":
        names = [j for j, p in enumerate(pieces) if p.kind == "NAME"]
        if names:
            j = names[_index(draw, len(names))]
            pieces[j] = Piece("JUNK", draw(st.sampled_from(RESERVED)))
    elif op == "stray":
        text = pieces[i].text
        at = draw(st.integers(0, len(text)))
        pieces[i] = Piece("JUNK", text[:at] + draw(st.sampled_from(STRAY)) + text[at:])
    elif op == "comment":
        # Between tokens, or splitting a token, a string or another comment.
        text = pieces[i].text
        at = draw(st.integers(0, len(text)))
        pieces[i] = Piece("JUNK", text[:at] + draw(st.sampled_from(COMMENTS)) + text[at:])
    elif op == "truncate":
        text = pieces[i].text
        del pieces[i:]
        pieces.append(Piece("JUNK", text[: draw(st.integers(0, len(text)))]))
    elif op == "swap":
        j = _index(draw, len(pieces))
        pieces[i], pieces[j] = pieces[j], pieces[i]
    elif op == "rename":  # keeps the syntax, breaks names: resolution errors
        names = [j for j, p in enumerate(pieces) if p.kind == "NAME"]
        if names:
            j = names[_index(draw, len(names))]
            other = pieces[names[_index(draw, len(names))]].text
            pieces[j] = Piece("NAME", draw(st.sampled_from([other, *RENAMES])))
    else:  # move a run of pieces elsewhere
        run = pieces[i : i + draw(st.integers(1, 8))]
        del pieces[i : i + len(run)]
        at = _index(draw, len(pieces) + 1)
        pieces[at:at] = run


def _mutate_bytes(draw: st.DrawFn, data: bytearray) -> None:
    """One byte-level mutation, in place: random bytes, an overwritten byte, a cut."""
    op = draw(st.sampled_from(["insert", "overwrite", "cut", "bit"]))
    at = draw(st.integers(0, len(data)))
    if op == "insert":
        data[at:at] = draw(st.binary(min_size=1, max_size=8))
    elif op == "overwrite" and at < len(data):
        data[at] = draw(st.integers(0, 255))
    elif op == "bit" and at < len(data):
        data[at] ^= 1 << draw(st.integers(0, 7))
    elif op == "cut":
        del data[at : at + draw(st.integers(1, 64))]


@st.composite
def mutated_corpus_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """A corpus file (corpus-relative path) and damaged contents for it."""
    path = draw(st.sampled_from(CORPUS_FILES))
    pieces = list(pieces_of(path))
    line_edits = draw(st.integers(0, 2))
    for _ in range(draw(st.integers(0 if line_edits else 1, 6))):
        _mutate_pieces(draw, pieces)
    text = "".join(p.text for p in pieces)
    for _ in range(line_edits):
        text = _mutate_lines(draw, text)
    data = bytearray(text.encode("utf-8", errors="surrogatepass"))
    for _ in range(draw(st.integers(0, 2) if draw(st.booleans()) else st.just(0))):
        _mutate_bytes(draw, data)
    if draw(st.integers(0, 19)) == 0:  # now and then: a BOM in front
        data[0:0] = b"\xef\xbb\xbf"
    return path, bytes(data)


# --------------------------------------------------------------------------------------------
# the property


def assert_well_formed(result: object) -> None:
    """What ``sengen.load`` must return for any input (stl.md §9.1, §9.2)."""
    assert isinstance(result, sengen.LoadResult), type(result)
    assert isinstance(result.diagnostics, tuple)
    for d in result.diagnostics:
        assert type(d) is Diagnostic, type(d)
        assert isinstance(d.severity, Severity)
        assert isinstance(d.line, int) and d.line >= 0, d
        assert isinstance(d.column, int) and d.column >= 0, d
        assert isinstance(d.message, str) and d.message, d
        assert isinstance(d.file, str) and d.file, d
        for note in d.notes:
            assert type(note) is Note, type(note)
            assert note.line >= 0 and note.column >= 0, note
            assert isinstance(note.message, str) and note.message, note
        # What the CLI does with a diagnostic must work too.
        assert d.format_header() in d.format()
        json.dumps(d.to_json())
    errors = any(d.is_error for d in result.diagnostics)
    assert (result.program is None) == errors


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=mutated_corpus_file())
def test_mutated_corpus_files_give_diagnostics_only(
    fuzz_dir: Path, case: tuple[str, bytes]
) -> None:
    path, data = case
    root = corpus_root()
    original = root / path
    target = fuzz_dir / original.name
    target.write_bytes(data)
    includes = CONAN_INCLUDES if path.startswith(".conan/") else DEFAULT_INCLUDES
    # The original folder comes first so that bare-name imports ("animal.stl") still resolve.
    result = sengen.load([target], include_paths=[original.parent, *(root / i for i in includes)])
    assert_well_formed(result)
    event(_outcome(result))


def _outcome(result: sengen.LoadResult) -> str:
    """A label for the statistics (``--hypothesis-show-statistics``): how far the input got."""
    errors = [d for d in result.diagnostics if d.is_error]
    if not errors:
        return "resolved without error"
    first = errors[0].message
    if first.startswith(("invalid UTF-8", "unexpected character", "Unterminated", "integer")):
        return "lexical error"
    if first.startswith(("Expected", "Expecting", "expecting")):
        return "syntax error"
    return "semantic error"


def test_unmutated_corpus_files_are_well_formed(fuzz_dir: Path) -> None:
    """The mutation baseline: every corpus file, copied out of its folder, loads cleanly."""
    root = corpus_root()
    assert len(CORPUS_FILES) == 91
    for path in CORPUS_FILES:
        assert "".join(p.text for p in pieces_of(path)) == (root / path).read_text("utf-8-sig")
        target = fuzz_dir / Path(path).name
        target.write_bytes((root / path).read_bytes())
        includes = CONAN_INCLUDES if path.startswith(".conan/") else DEFAULT_INCLUDES
        result = sengen.load(
            [target], include_paths=[(root / path).parent, *(root / i for i in includes)]
        )
        assert_well_formed(result)


# --------------------------------------------------------------------------------------------
# grammar parity: the parser sengen uses is the grammar in sengen/stl.lark


def _shape(node: Tree[Token] | Token) -> object:
    """A parse tree as plain data, token types and positions included."""
    if isinstance(node, Token):
        return (node.type, str(node), node.line, node.column)
    return (str(node.data), [_shape(child) for child in node.children])


def test_grammar_parser_matches_stl_lark() -> None:
    loaded = sengen.stl.parser.grammar_parser()
    assert loaded is sengen.stl.parser.grammar_parser()  # built once per process
    grammar_file = Path(sengen.stl.parser.__file__).with_name("stl.lark")
    grammar = grammar_file.read_text(encoding="utf-8")
    assert loaded.source_grammar == grammar
    options = loaded.options
    fresh = Lark(
        grammar,
        parser=options.parser,
        lexer=options.lexer,
        start=options.start,
        keep_all_tokens=options.keep_all_tokens,
        maybe_placeholders=options.maybe_placeholders,
        propagate_positions=options.propagate_positions,
        cache=False,
    )
    assert sorted(str(r) for r in loaded.rules) == sorted(str(r) for r in fresh.rules)
    assert sorted(t.name for t in loaded.terminals) == sorted(t.name for t in fresh.terminals)

    root = corpus_root()
    assert len(CORPUS_FILES) == 91
    for path in CORPUS_FILES:
        text = (root / path).read_bytes().decode("utf-8-sig")
        tokens, _ = tokenize(text)
        expected = _shape(fresh.parse(list(tokens)))
        assert _shape(loaded.parse(list(tokens))) == expected, path
        sengen.stl.parser.parse(text)  # and the front end's own entry point accepts it


# --------------------------------------------------------------------------------------------
# minimal reproducers of what the fuzzer found (stl.md §2.4: the phrase, then ", found '<token>'",
# at the offending token; §9.2: never an exception)

SYNTAX_REPRODUCERS = [
    # (text, line, column, message)
    ("package a.b.c\n", 2, 1, "Expected ; after package statement, found end of file"),
    ("package a.b.;\n", 1, 13, "Expected package identifier, found ';'"),
    ("package p;\nstruct S { a : u8, b c }\n", 2, 22, "Expected : after struct field b, found 'c'"),
    (
        "package p;\nstruct S { a : u8, b : u8 c }\n",
        2,
        27,
        "Expected , after struct field b, found 'c'",
    ),
    ("package p;\nstruct S { a : x.y.; }\n", 2, 20, "Expected struct field type, found ';'"),
    (
        "package p;\nenum E : u8 { a, b c }\n",
        2,
        20,
        "Expected ',' after enumerator for E, found 'c'",
    ),
    ("package p;\nvariant V { a, b c }\n", 2, 18, "Expected , after variant element b, found 'c'"),
    (
        "package p;\nclass C : extends A extends B ; {}\n",
        2,
        31,
        "Expected '{' before class body for C, found ';'",
    ),
    (
        "package p;\nclass C { var a : u8; var b : u8; ) }\n",
        2,
        35,
        "Expected class member or '}', found ')'",
    ),
    (
        "package p;\nsequence<u8> S [a, b, c d];\n",
        2,
        25,
        "Expected ']' to end attribute list for S, found 'd'",
    ),
    (
        "package p;\nclass C { fn f(a : u8, b : u8, c : u8 d); }\n",
        2,
        39,
        "Expected ) to close args for function f, found 'd'",
    ),
]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [pytest.param(*case, id=case[0].splitlines()[-1]) for case in SYNTAX_REPRODUCERS],
)
def test_syntax_error_after_repeated_elements(
    tmp_path: Path, text: str, line: int, column: int, message: str
) -> None:
    target = tmp_path / "r.stl"
    target.write_text(text, encoding="utf-8")
    result = sengen.load([target])
    assert_well_formed(result)
    assert [(d.severity, d.line, d.column, d.message) for d in result.diagnostics] == [
        (Severity.ERROR, line, column, message)
    ]


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        ("package a.;\n", 1, 11, "Expected package identifier, found ';'"),
        (
            "package p;\nstruct S { a : u8 c }\n",
            2,
            19,
            "Expected , after struct field a, found 'c'",
        ),
        (
            "package p;\nclass C { var a : u8; ) }\n",
            2,
            23,
            "Expected class member or '}', found ')'",
        ),
    ],
)
def test_syntax_error_after_one_element(
    tmp_path: Path, text: str, line: int, column: int, message: str
) -> None:
    """The same constructs with a single element already work: the control group."""
    target = tmp_path / "r.stl"
    target.write_text(text, encoding="utf-8")
    assert [(d.line, d.column, d.message) for d in sengen.load([target]).diagnostics] == [
        (line, column, message)
    ]
