"""The SELECT query language (runtime.md §4.2, §4.3; acceptance Q1, Q4-Q8, U8, U10).

Evaluation runs on small fake objects whose ``META`` is built from ``sengen.runtime`` metadata,
the way generated modules build it.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import math
from typing import Any

import pytest

from sengen.runtime import Duration, TimeStamp
from sengen.runtime.kernel.query import (
    Between,
    Binary,
    Expr,
    In,
    Literal,
    QueryError,
    Unary,
    Variable,
    parse_query,
)
from sengen.runtime.kernel.query.evaluate import _compile
from sengen.runtime.objects.meta import (
    BOOL,
    DURATION,
    F32,
    F64,
    I32,
    STRING,
    TIMESTAMP,
    U32,
    U64,
    AliasMeta,
    AlternativeMeta,
    Category,
    ClassMeta,
    EnumeratorMeta,
    EnumMeta,
    FieldMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    Transport,
    TypeMeta,
    UnitMeta,
    VariantMeta,
)

# -- metadata of the fake classes ---------------------------------------------------------------


class Mode(enum.Enum):
    automatic = 0
    manual = 1
    def_ = 2


MODE = EnumMeta(
    "geo.Mode",
    "",
    1,
    U32,
    (
        EnumeratorMeta("automatic", "automatic", 0, ""),
        EnumeratorMeta("manual", "manual", 1, ""),
        EnumeratorMeta("def", "def_", 2, ""),
    ),
    Mode,
)


@dataclasses.dataclass(frozen=True)
class Inner:
    z: int


@dataclasses.dataclass(frozen=True)
class Point:
    x: float
    y: float
    inner: Inner
    def_: int = 0


@dataclasses.dataclass(frozen=True)
class Circle:
    radius: float


@dataclasses.dataclass(frozen=True)
class Square:
    side: float


@dataclasses.dataclass(frozen=True)
class Shape:
    tag: str
    value: Any


INNER = StructMeta("geo.Inner", "", 2, None, (FieldMeta("z", "z", I32, ""),), Inner)
POINT = StructMeta(
    "geo.Point",
    "",
    3,
    None,
    (
        FieldMeta("x", "x", F64, ""),
        FieldMeta("y", "y", F64, ""),
        FieldMeta("inner", "inner", INNER, ""),
        FieldMeta("def", "def_", I32, ""),
    ),
    Point,
)
CIRCLE = StructMeta("geo.Circle", "", 4, None, (FieldMeta("radius", "radius", F64, ""),), Circle)
SQUARE = StructMeta("geo.Square", "", 5, None, (FieldMeta("side", "side", F64, ""),), Square)
SHAPE = VariantMeta(
    "geo.Shape",
    "",
    6,
    (
        AlternativeMeta("Circle", 0, CIRCLE, ""),
        AlternativeMeta("Square", 1, SQUARE, ""),
        AlternativeMeta("u32", 2, U32, ""),
    ),
    Shape,
)
OPT_I32 = OptionalMeta("geo.MaybeInt", "", 7, I32)
OPT_POINT = OptionalMeta("geo.MaybePoint", "", 8, POINT)
SAMPLES = SequenceMeta("geo.Samples", "", 9, F64, None, False)
METRE = UnitMeta("m", "metre", "length", 1.0)
LENGTH = QuantityMeta("geo.Length", "", 10, F32, METRE, 0.0, None)
LEVEL = AliasMeta("geo.Level", "", 11, I32)


def prop(stl: str, meta: TypeMeta, category: Category = Category.DYNAMIC_RO, py: str = "") -> Any:
    return PropertyMeta(stl, py or stl, meta, category, Transport.MULTICAST, False, (), "")


def cls(name: str, parent: ClassMeta | None, *props: PropertyMeta) -> ClassMeta:
    return ClassMeta(name, "", "x.stl:1", parent, False, True, props, (), (), (), 0, "test")


BASE = cls(
    "geo.Base",
    None,
    prop("level", LEVEL, Category.STATIC_RW),
    prop("label", STRING),
    prop("enabled", BOOL),
    prop("mode", MODE),
    prop("speed", F64),
    prop("count", U64),
    prop("period", DURATION),
    prop("stamp", TIMESTAMP),
    prop("position", POINT),
    prop("geometry", SHAPE),
    prop("maybe", OPT_I32),
    prop("maybePoint", OPT_POINT, py="maybe_point"),
    prop("samples", SAMPLES),
    prop("length", LENGTH),
    prop("name", STRING, py="name_"),
)
DERIVED = cls("geo.Derived", BASE, prop("extra", I32))
THING = cls("other.Thing", None, prop("label", STRING))
# the same qualified name as BASE, built independently (a remote type not known locally)
REMOTE_DERIVED = cls("far.Remote", cls("geo.Base", None), prop("label", STRING))

DEFAULTS: dict[str, Any] = {
    "level": 5,
    "label": "hello",
    "enabled": True,
    "mode": Mode.automatic,
    "speed": 2.5,
    "count": 3,
    "period": Duration(1_500_000_000),
    "stamp": TimeStamp(2_000_000_000),
    "position": Point(1.0, -2.0, Inner(4), 9),
    "geometry": Shape("Circle", Circle(3.0)),
    "maybe": None,
    "maybe_point": None,
    "samples": (1.0, 2.0),
    "length": 12.5,
    "name_": "property-name",
    "extra": 11,
}


class Fake:
    """An object with a ``META``, a name, an id and current property values."""

    def __init__(self, meta: ClassMeta, name: str = "obj", id: int = 7, **values: Any) -> None:
        self.META = meta
        self.name = name
        self.id = id
        for p in meta.all_properties:
            setattr(self, p.py_name, values.pop(p.py_name, DEFAULTS.get(p.py_name)))
        assert not values, values


def base(**values: Any) -> Fake:
    return Fake(BASE, **values)


def where(condition: str, obj: Fake | None = None) -> bool:
    return parse_query(f"SELECT * FROM s.b WHERE {condition}").matches(obj or base())


def expr(condition: str) -> Expr:
    e = parse_query(f"SELECT * FROM s.b WHERE {condition}").where
    assert e is not None
    return e


def v(*path: str) -> Variable:
    return Variable(path)


def lit(value: bool | int | float | str) -> Literal:
    return Literal(value)


def error_of(text: str) -> QueryError:
    with pytest.raises(QueryError) as info:
        parse_query(text)
    return info.value


# -- §4.2 the query production --------------------------------------------------------------------


def test_select_star_from_star() -> None:
    q = parse_query("SELECT * FROM *")
    assert (q.type_name, q.bus, q.where) == (None, None, None)
    assert str(q) == "SELECT * FROM *"


def test_select_class_from_bus_where() -> None:
    q = parse_query("SELECT geo.sub.Base FROM my_session.bus-2 WHERE level = 1")
    assert q.type_name == "geo.sub.Base"
    assert q.bus == "my_session.bus-2"
    assert q.where == Binary("=", v("level"), lit(1))


def test_unqualified_class_name() -> None:
    assert parse_query("SELECT Base FROM s.b").type_name == "Base"


def test_query_is_frozen_hashable_and_compares_by_content() -> None:
    a = parse_query("SELECT x.C FROM s.b WHERE a>1")
    b = parse_query("SELECT   x.C   FROM s.b   WHERE  a  >  1")
    assert a == b and hash(a) == hash(b)
    assert a != parse_query("SELECT x.C FROM s.b WHERE a>2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.bus = "t.u"  # type: ignore[misc]


def test_query_error_is_a_value_error() -> None:
    assert issubclass(QueryError, ValueError)


# -- precedence and associativity -----------------------------------------------------------------

a, b, c, d = v("a"), v("b"), v("c"), v("d")


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a OR b AND c", Binary("OR", a, Binary("AND", b, c))),
        ("a AND b OR c", Binary("OR", Binary("AND", a, b), c)),
        ("a OR b OR c", Binary("OR", Binary("OR", a, b), c)),
        ("a AND b AND c", Binary("AND", Binary("AND", a, b), c)),
        ("a AND b = c", Binary("AND", a, Binary("=", b, c))),
        ("a = b < c", Binary("=", a, Binary("<", b, c))),
        ("a != b >= c", Binary("!=", a, Binary(">=", b, c))),
        ("a = b = c", Binary("=", Binary("=", a, b), c)),
        ("a < b < c", Binary("<", Binary("<", a, b), c)),
        ("a <= b > c", Binary(">", Binary("<=", a, b), c)),
        ("a < b + c", Binary("<", a, Binary("+", b, c))),
        ("a + b * c", Binary("+", a, Binary("*", b, c))),
        ("a * b + c", Binary("+", Binary("*", a, b), c)),
        ("a - b - c", Binary("-", Binary("-", a, b), c)),
        ("a / b / c", Binary("/", Binary("/", a, b), c)),
        ("a - b + c", Binary("+", Binary("-", a, b), c)),
        ("a * b / c", Binary("/", Binary("*", a, b), c)),
        ("-a * b", Binary("*", Unary("-", a), b)),
        ("- - a", Unary("-", Unary("-", a))),
        ("NOT a > 1", Binary(">", Unary("NOT", a), lit(1))),
        ("NOT a = b", Binary("=", Unary("NOT", a), b)),
        ("NOT NOT a", Unary("NOT", Unary("NOT", a))),
        ("!a", Unary("NOT", a)),
        ("NOT (a > 1)", Unary("NOT", Binary(">", a, lit(1)))),
        ("(a OR b) AND c", Binary("AND", Binary("OR", a, b), c)),
        ("a * (b + c)", Binary("*", a, Binary("+", b, c))),
        ("((a))", a),
        ("a BETWEEN 1 AND 2", Between(a, lit(1), lit(2))),
        ("a NOT BETWEEN 1 AND 2", Between(a, lit(1), lit(2), negated=True)),
        ("a BETWEEN b AND c AND d", Binary("AND", Between(a, b, c), d)),
        ("a BETWEEN b + 1 AND c * 2", Between(a, Binary("+", b, lit(1)), Binary("*", c, lit(2)))),
        ("a + 1 BETWEEN b AND c", Between(Binary("+", a, lit(1)), b, c)),
        ("a BETWEEN b AND c = d", Binary("=", Between(a, b, c), d)),
        ("a BETWEEN b AND c OR d", Binary("OR", Between(a, b, c), d)),
        ("a IN (1)", In(a, (lit(1),))),
        ("a IN (1, b + 1, 'x')", In(a, (lit(1), Binary("+", b, lit(1)), lit("x")))),
        ("a NOT IN (b, c)", In(a, (b, c), negated=True)),
        ("a IN (b) AND c", Binary("AND", In(a, (b,)), c)),
        ("a - 1 IN (b)", In(Binary("-", a, lit(1)), (b,))),
        ("a = b IN (c)", Binary("=", a, In(b, (c,)))),
        ("position.inner.z", v("position", "inner", "z")),
    ],
)
def test_precedence(text: str, tree: Expr) -> None:
    assert expr(text) == tree


def test_positions_do_not_take_part_in_equality() -> None:
    assert expr("a") == Variable(("a",), position=99)


# -- canonical text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("SELECT * FROM *", "SELECT * FROM *"),
        ("SELECT  a.B  FROM  s.b", "SELECT a.B FROM s.b"),
        ("SELECT * FROM s.b WHERE a>1", "SELECT * FROM s.b WHERE a > 1"),
        ("SELECT * FROM s.b WHERE !a", "SELECT * FROM s.b WHERE NOT a"),
        ("SELECT * FROM s.b WHERE NOT(a>1)", "SELECT * FROM s.b WHERE NOT (a > 1)"),
        ("SELECT * FROM s.b WHERE (a OR b) AND c", "SELECT * FROM s.b WHERE (a OR b) AND c"),
        ("SELECT * FROM s.b WHERE a OR (b AND c)", "SELECT * FROM s.b WHERE a OR b AND c"),
        ("SELECT * FROM s.b WHERE a-(b-c)", "SELECT * FROM s.b WHERE a - (b - c)"),
        ("SELECT * FROM s.b WHERE (a-b)-c", "SELECT * FROM s.b WHERE a - b - c"),
        ("SELECT * FROM s.b WHERE -(a+b)*c", "SELECT * FROM s.b WHERE -(a + b) * c"),
        ("SELECT * FROM s.b WHERE (a<b)<c", "SELECT * FROM s.b WHERE a < b < c"),
        ("SELECT * FROM s.b WHERE a<(b<c)", "SELECT * FROM s.b WHERE a < (b < c)"),
        (
            "SELECT * FROM s.b WHERE (a BETWEEN 1 AND 2)<c",
            "SELECT * FROM s.b WHERE (a BETWEEN 1 AND 2) < c",
        ),
        ("SELECT * FROM s.b WHERE a BETWEEN 1 AND 2", "SELECT * FROM s.b WHERE a BETWEEN 1 AND 2"),
        ("SELECT * FROM s.b WHERE a NOT IN(1,2)", "SELECT * FROM s.b WHERE a NOT IN (1, 2)"),
        ("SELECT * FROM s.b WHERE a = 'x'", 'SELECT * FROM s.b WHERE a = "x"'),
        ("SELECT * FROM s.b WHERE a = 'say \"hi\"'", "SELECT * FROM s.b WHERE a = 'say \"hi\"'"),
        ("SELECT * FROM s.b WHERE a = 1.50", "SELECT * FROM s.b WHERE a = 1.5"),
        (
            "SELECT * FROM s.b WHERE a = 10000000000000000000.0",
            "SELECT * FROM s.b WHERE a = 10000000000000000000.0",
        ),
        ("SELECT * FROM s.b WHERE a = 007", "SELECT * FROM s.b WHERE a = 7"),
        (
            "SELECT * FROM s.b WHERE a = true OR b = false",
            "SELECT * FROM s.b WHERE a = true OR b = false",
        ),
        ("SELECT * FROM s.b WHERE - -a", "SELECT * FROM s.b WHERE --a"),
    ],
)
def test_canonical_text_round_trips(text: str, canonical: str) -> None:
    q = parse_query(text)
    assert str(q) == canonical
    assert parse_query(str(q)) == q


# -- lexical rules --------------------------------------------------------------------------------


def test_integer_and_real_literals() -> None:
    assert expr("1 = 42") == Binary("=", lit(1), lit(42))
    assert type(expr("007").value) is int and expr("007") == lit(7)  # type: ignore[union-attr]
    real = expr("3.25")
    assert isinstance(real, Literal) and type(real.value) is float and real.value == 3.25


def test_strings_in_either_quote_without_escapes() -> None:
    assert expr("'abc'") == lit("abc")
    assert expr('"abc"') == lit("abc")
    assert expr("'say \"hi\"'") == lit('say "hi"')
    assert expr('"it\'s"') == lit("it's")
    assert expr("'back\\'") == lit("back\\")  # a backslash is an ordinary character
    assert expr("''") == lit("")


def test_booleans_are_lower_case() -> None:
    assert expr("true") == lit(True)
    assert expr("false") == lit(False)
    assert expr("True") == v("True")  # an identifier
    assert expr("FALSE") == v("FALSE")


def test_identifiers_are_case_sensitive_and_may_use_underscores_and_digits() -> None:
    assert expr("Speed") == v("Speed")
    assert expr("_a1.b_2") == v("_a1", "b_2")
    assert expr("Speed") != expr("speed")


def test_lower_case_keyword_words_are_identifiers() -> None:
    assert expr("select") == v("select")
    assert expr("and.or") == v("and", "or")


def test_whitespace_of_any_kind_separates_tokens() -> None:
    q = parse_query("SELECT\t*\nFROM\r\n s.b  WHERE\ta\n>\n1")
    assert q.where == Binary(">", a, lit(1))


def test_tokens_need_no_whitespace() -> None:
    assert expr("a>=1AND(b!=2)") == Binary("AND", Binary(">=", a, lit(1)), Binary("!=", b, lit(2)))


# -- parse errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("select * FROM *", "expected 'SELECT', found name 'select'", 1),
        ("SELECT * from *", "expected 'FROM', found name 'from'", 10),
        ("SELECT * FROM * where a", "expected 'WHERE' or end of query, found name 'where'", 17),
        (
            "SELECT * FROM s.b WHERE a and b",
            "expected an operator or end of query, found name 'and'",
            27,
        ),
        (
            "SELECT * FROM s.b WHERE a Or b",
            "expected an operator or end of query, found name 'Or'",
            27,
        ),
        ("SELECT * FROM s.b WHERE a == 1", "'==' is not an operator (use '=')", 27),
        ("SELECT * FROM s.b WHERE a <> 1", "'<>' is not an operator (use '!=')", 27),
        ("SELECT * FROM s.b WHERE a = = 1", "expected a value, found '='", 29),
        ("SELECT FROM s.b", "expected a class name or '*', found 'FROM'", 8),
        ("SELECT 1 FROM s.b", "expected a class name or '*', found number 1", 8),
        ("SELECT a b FROM s.b", "expected 'FROM', found name 'b'", 10),
        ("SELECT a FROM", "expected a bus address or '*', found end of query", 14),
        ("SELECT a FROM WHERE a", "expected a bus address or '*', found 'WHERE'", 15),
        ("SELECT a FROM 1 WHERE", "expected a bus address or '*', found number 1", 15),
        ("SELECT a FROM s", "invalid bus address 's'", 15),
        ("SELECT a FROM s.b.c", "invalid bus address 's.b.c'", 15),
        ("SELECT a FROM s.1b", "invalid bus address 's.1b'", 15),
        ("SELECT a FROM s.", "incomplete bus address 's.'", 15),
        ("SELECT a FROM .b", "incomplete bus address '.b'", 15),
        ("SELECT * FROM s.b WHERE", "expected a value, found end of query", 24),
        ("SELECT * FROM s.b WHERE (a", "expected ')', found end of query", 27),
        ("SELECT * FROM s.b WHERE a)", "expected an operator or end of query, found ')'", 26),
        ("SELECT * FROM s.b WHERE a NOT b", "expected BETWEEN or IN after NOT, found name 'b'", 31),
        ("SELECT * FROM s.b WHERE a NOT = 1", "expected BETWEEN or IN after NOT, found '='", 31),
        ("SELECT * FROM s.b WHERE a BETWEEN 1 OR 2", "expected 'AND', found 'OR'", 37),
        ("SELECT * FROM s.b WHERE a IN 1", "expected '(', found number 1", 30),
        ("SELECT * FROM s.b WHERE a IN ()", "expected a value, found ')'", 31),
        ("SELECT * FROM s.b WHERE a IN (1,)", "expected a value, found ')'", 33),
        ("SELECT * FROM s.b WHERE a IN (1 2)", "expected ')', found number 2", 33),
        (
            "SELECT * FROM s.b WHERE a BETWEEN 1 AND 2 < 3",
            "expected an operator or end of query, found '<'",
            43,
        ),
        (
            "SELECT * FROM s.b WHERE a < b BETWEEN 1 AND 2",
            "expected an operator or end of query, found 'BETWEEN'",
            31,
        ),
        (
            "SELECT * FROM s.b WHERE a IN (1) IN (2)",
            "expected an operator or end of query, found 'IN'",
            34,
        ),
        ("SELECT * FROM s.b WHERE 'abc", "unterminated string", 25),
        ("SELECT * FROM s.b WHERE \"abc'", "unterminated string", 25),
        ("SELECT * FROM s.b WHERE 1.", "expected digits after '.'", 27),
        ("SELECT * FROM s.b WHERE 1.x", "expected digits after '.'", 27),
        ("SELECT * FROM s.b WHERE .5", "unexpected character '.'", 25),
        (
            "SELECT * FROM s.b WHERE 1e5",
            "expected an operator or end of query, found name 'e5'",
            26,
        ),
        ("SELECT * FROM s.b WHERE a . b", "unexpected character '.'", 27),
        ("SELECT * FROM s.b WHERE a.", "expected a name after '.'", 27),
        ("SELECT * FROM s.b WHERE a.1", "expected a name after '.'", 27),
        ("SELECT * FROM s.b WHERE a.AND", "reserved word 'AND' inside a name", 27),
        ("SELECT * FROM s.b WHERE true.x", "reserved word 'true' inside a name", 25),
        ("SELECT * FROM s.b WHERE a = #", "unexpected character '#'", 29),
        ("SELECT * FROM s.b WHERE a % 2", "unexpected character '%'", 27),
        ("SELECT * FROM s.b WHERE WHERE", "expected a value, found 'WHERE'", 25),
        (
            "SELECT * FROM s.b WHERE a = 1 WHERE",
            "expected an operator or end of query, found 'WHERE'",
            31,
        ),
        ("", "expected 'SELECT', found end of query", 1),
    ],
)
def test_parse_errors(text: str, message: str, column: int) -> None:
    error = error_of(text)
    assert error.reason == message
    assert error.position == column - 1
    lines = str(error).split("\n")
    assert lines[0] == f"{message} at column {column}"
    assert lines[1] == f"  {text}"
    assert lines[2] == "  " + " " * (column - 1) + "^"


def test_error_caret_on_the_right_line_of_a_multi_line_query() -> None:
    error = error_of("SELECT * FROM s.b\nWHERE a == 1")
    assert (
        str(error)
        == "'==' is not an operator (use '=') at line 2, column 9\n  WHERE a == 1\n          ^"
    )


def test_error_caret_keeps_tabs_aligned() -> None:
    error = error_of("SELECT\t*\tFROM\ts.b\tWHERE\t#")
    assert str(error).split("\n")[2] == "  " + "      \t \t    \t   \t     \t^"


def test_between_literal_bounds_out_of_order_is_a_parse_error() -> None:
    error = error_of("SELECT * FROM s.b WHERE a BETWEEN 3 AND 1")
    assert error.reason == "BETWEEN bounds out of order"
    assert str(error).endswith(
        "column 41\n  SELECT * FROM s.b WHERE a BETWEEN 3 AND 1\n" + " " * 42 + "^"
    )
    for bounds in ("-1 AND -2", "1.5 AND 1", "'b' AND 'a'", "2 AND 1.99"):
        assert error_of(f"SELECT * FROM s.b WHERE a NOT BETWEEN {bounds}").reason == (
            "BETWEEN bounds out of order"
        )


def test_between_literal_bounds_in_order_parse() -> None:
    for bounds in ("1 AND 1", "-2 AND -1", "1 AND 1.5", "'a' AND 'b'"):
        assert isinstance(expr(f"a BETWEEN {bounds}"), Between)


def test_between_bounds_of_different_kinds_or_with_variables_are_not_parse_errors() -> None:
    assert isinstance(expr("a BETWEEN 'b' AND 1"), Between)
    assert isinstance(expr("a BETWEEN b AND 1"), Between)
    assert isinstance(expr("a BETWEEN 3 AND b"), Between)


def test_query_error_without_text() -> None:
    error = QueryError("a subscription needs a bus")
    assert str(error) == "a subscription needs a bus" and error.position is None


# -- §4.3 type condition --------------------------------------------------------------------------


def test_type_condition_by_qualified_name_and_ancestry() -> None:
    q = parse_query("SELECT geo.Base FROM s.b")
    assert q.matches(Fake(BASE))
    assert q.matches(Fake(DERIVED))
    assert not q.matches(Fake(THING))
    assert q.matches(Fake(REMOTE_DERIVED))  # declared ancestry of a type not known locally


def test_type_condition_of_a_subclass_excludes_the_parent() -> None:
    q = parse_query("SELECT geo.Derived FROM s.b")
    assert q.matches(Fake(DERIVED))
    assert not q.matches(Fake(BASE))


def test_type_condition_uses_qualified_names_only() -> None:
    assert not parse_query("SELECT Base FROM s.b").matches(Fake(BASE))


def test_star_matches_every_class() -> None:
    q = parse_query("SELECT * FROM *")
    assert all(q.matches(Fake(m)) for m in (BASE, DERIVED, THING, REMOTE_DERIVED))


def test_type_condition_combines_with_where() -> None:
    q = parse_query("SELECT geo.Base FROM s.b WHERE label = 'hello'")
    assert q.matches(Fake(DERIVED))
    assert not q.matches(Fake(THING, label="hello"))
    assert not q.matches(Fake(DERIVED, label="bye"))


# -- variables ------------------------------------------------------------------------------------


def test_properties_static_dynamic_own_and_inherited() -> None:
    assert where("level = 5")  # static
    assert where("label = 'hello'")  # dynamic
    assert where("level = 5 AND extra = 11", Fake(DERIVED))  # inherited and own
    assert not where("level = 6")


def test_name_and_id_pseudo_variables_take_precedence() -> None:
    obj = base(name_="x")
    assert where("name = 'obj'", obj)
    assert not where("name = 'x'", obj)  # the property called name is hidden
    assert where("id = 7", obj)
    assert where("id = 7", Fake(THING))


def test_name_and_id_have_no_fields() -> None:
    assert not where("name.x = 1 OR true")
    assert not where("id.x = 1 OR true")


def test_struct_fields_by_path() -> None:
    assert where("position.x = 1.0 AND position.y < 0")
    assert where("position.inner.z = 4")
    assert where("position.def = 9")  # STL name, not the Python one
    assert not where("position.def_ = 9 OR true")  # unknown: never matches


def test_optional_values_held_or_absent() -> None:
    assert where("maybe = 3", base(maybe=3))
    assert not where("maybe = 3")
    assert where("maybePoint.inner.z = 4", base(maybe_point=Point(0.0, 0.0, Inner(4))))
    assert not where("maybePoint.inner.z = 4")
    assert where("NOT (maybePoint.x = 1)")


def test_variant_alternatives_inside_the_path() -> None:
    assert where("geometry.Circle.radius = 3")
    assert where("geometry.geo.Circle.radius = 3")  # by qualified type name
    assert not where("geometry.Square.side = 3")  # another alternative held: absent
    assert not where("geometry.Square.side != 3")
    assert where("NOT (geometry.Square.side = 3)")
    square = base(geometry=Shape("Square", Square(2.0)))
    assert where("geometry.Square.side = 2", square)
    assert not where("geometry.Circle.radius > 0", square)
    assert where("geometry.u32 = 8", base(geometry=Shape("u32", 8)))
    assert not where("geometry.u32 = 8")


def test_unknown_variables_never_match() -> None:
    assert not where("nothing = 1 OR true")
    assert not where("NOT (nothing = 1)")
    assert not where("position.w = 1 OR true")
    assert not where("geometry.Triangle.side = 1 OR true")
    assert not where("Level = 5")  # case-sensitive
    assert not where("label = 'hello'", Fake(DERIVED, label="x")) and where(
        "extra = 11", Fake(DERIVED)
    )
    assert not where("extra = 11 OR true")  # BASE has no extra


def test_sequences_structs_and_variants_are_not_addressable() -> None:
    assert not where("samples = 1 OR true")
    assert not where("samples.x = 1 OR true")
    assert not where("position = 1 OR true")
    assert not where("geometry = 1 OR true")
    assert not where("geometry.Circle = 1 OR true")
    assert not where("level.x = 1 OR true")
    assert not where("label.x = 1 OR true")


def test_unknown_variable_logs_info_once_per_class(caplog: pytest.LogCaptureFixture) -> None:
    q = parse_query("SELECT * FROM s.b WHERE nothing = 1")
    with caplog.at_level(logging.DEBUG, logger="sengen.query"):
        for _ in range(3):
            assert not q.matches(base())
        assert not q.matches(Fake(THING))
    records = [(r.levelno, r.getMessage()) for r in caplog.records]
    why = "unknown variable 'nothing': no property 'nothing'"
    assert records == [
        (logging.INFO, f"query '{q}' never matches class geo.Base: {why}"),
        (logging.INFO, f"query '{q}' never matches class other.Thing: {why}"),
    ]
    assert not q.evaluator(BASE).known


def test_a_class_that_fails_the_type_condition_does_not_resolve_variables(
    caplog: pytest.LogCaptureFixture,
) -> None:
    q = parse_query("SELECT geo.Base FROM s.b WHERE extra = 1")
    with caplog.at_level(logging.DEBUG, logger="sengen.query"):
        assert not q.matches(Fake(THING))
    assert caplog.records == []


# -- values ---------------------------------------------------------------------------------------


def test_numbers_of_any_width_compare_int_with_real() -> None:
    assert where("count = 3.0")
    assert where("speed > 2 AND speed < 3")
    assert where("count < speed + 1")
    assert where("count = 18446744073709551615", base(count=2**64 - 1))
    assert not where("count = 18446744073709551614", base(count=2**64 - 1))


def test_strings_compare_by_code_point() -> None:
    assert where("label < 'i'")
    assert where("'B' < 'a'")
    assert where("'z' < 'é'")
    assert where("'abc' < 'abd' AND 'ab' < 'abc'")
    assert not where("'a' = 'A'")


def test_booleans_only_with_equality() -> None:
    assert where("enabled = true")
    assert where("enabled != false")
    assert not where("enabled < true OR true")
    assert not where("enabled = 1 OR true")
    assert not where("enabled BETWEEN false AND true OR true")


def test_enums_are_their_enumerator_name() -> None:
    assert where("mode = 'automatic'")
    assert where('mode = "automatic"')
    assert where("mode != 'manual'")
    assert where("mode IN ('automatic', 'manual')")
    assert not where("mode IN ('manual')")
    assert where("mode = 'def'", base(mode=Mode.def_))  # STL name, not the Python one
    assert not where("mode = 'def_'", base(mode=Mode.def_))
    assert where("mode < 'b'")  # a string like any other


def test_enum_against_a_number_is_a_type_error() -> None:
    assert not where("mode = 0 OR true")


def test_duration_and_timestamp_are_seconds() -> None:
    assert where("period = 1.5")
    assert where("period > 1 AND period < 2")
    assert not where("period = 1500000000")
    assert where("stamp = 2")
    assert where("stamp - period = 0.5")


def test_quantities_and_aliases_are_their_number() -> None:
    assert where("length = 12.5")
    assert where("level + 1 = 6")


# -- arithmetic -----------------------------------------------------------------------------------


def constant(text: str) -> object:
    return _compile(expr(text), None)(None)


def test_arithmetic_on_integers_gives_integers() -> None:
    for text, value in (("2 + 3", 5), ("2 - 3", -1), ("2 * 3", 6), ("-2", -2)):
        result = constant(text)
        assert type(result) is int and result == value


def test_division_always_gives_a_real() -> None:
    result = constant("6 / 3")
    assert type(result) is float and result == 2.0
    assert where("7 / 2 = 3.5")
    assert where("level / 2 = 2.5")


def test_arithmetic_with_a_real_gives_a_real() -> None:
    result = constant("2 + 0.5")
    assert type(result) is float and result == 2.5


def test_arithmetic_follows_precedence() -> None:
    assert where("1 + 2 * 3 = 7")
    assert where("(1 + 2) * 3 = 9")
    assert where("10 - 4 - 3 = 3")
    assert where("8 / 4 / 2 = 1")
    assert where("-level * 2 = -10")


def test_division_by_zero_is_a_type_error() -> None:
    assert not where("level / 0 = 1 OR true")
    assert not where("NOT (level / 0 = 1)")  # not false: no match at all
    assert not where("speed / 0.0 > 0 OR true")


def test_arithmetic_on_strings_and_booleans_is_a_type_error() -> None:
    assert not where("'a' + 'b' = 'ab'")
    assert not where("label * 2 = 1 OR true")
    assert not where("-label = 1 OR true")
    assert not where("enabled + 1 = 2 OR true")
    assert not where("-enabled = 1 OR true")


def test_an_overflowing_conversion_is_a_type_error() -> None:
    assert not where("count * 1.0 > 0 OR true", base(count=10**400))


# -- comparisons ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "result"),
    [
        ("level = 5", True),
        ("level != 5", False),
        ("level < 5", False),
        ("level <= 5", True),
        ("level > 4", True),
        ("level >= 6", False),
        ("label = 'hello'", True),
        ("label != 'hello'", False),
        ("label >= 'hello'", True),
    ],
)
def test_comparison_operators(condition: str, result: bool) -> None:
    assert where(condition) is result


def test_string_against_number_is_a_type_error() -> None:
    assert not where("label = 1 OR true")
    assert not where("label != 1 OR true")
    assert not where("label < 1 OR true")
    assert not where("level IN ('a', 5) OR true")  # every option is compared


def test_chained_comparison_is_a_type_error() -> None:
    assert not where("1 < 2 < 3")
    assert not where("1 < level < 10")


def test_equality_of_booleans_chains() -> None:
    assert where("(level = 5) = true")
    assert where("level = 5 = true")
    assert where("1 < 2 = true")


def test_not_binds_tighter_than_comparison() -> None:
    assert not where("NOT level > 1 OR true")  # (NOT level) > 1: a type error
    assert where("NOT (level > 6)")


def test_nan_follows_ieee() -> None:
    nan = base(speed=math.nan)
    assert not where("speed = speed", nan)
    assert where("speed != speed", nan)
    assert not where("speed < 1 OR speed >= 1", nan)
    assert not where("speed BETWEEN 0 AND 1", nan)
    assert where("speed NOT BETWEEN 0 AND 1", nan)


# -- BETWEEN and IN -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "result"),
    [
        ("level BETWEEN 5 AND 6", True),
        ("level BETWEEN 4 AND 5", True),
        ("level BETWEEN 5 AND 5", True),
        ("level BETWEEN 6 AND 7", False),
        ("level BETWEEN 1 AND 4.99", False),
        ("level NOT BETWEEN 5 AND 6", False),
        ("level NOT BETWEEN 6 AND 7", True),
        ("speed BETWEEN 2 AND 3", True),
        ("label BETWEEN 'a' AND 'z'", True),
        ("label BETWEEN 'i' AND 'z'", False),
        ("level BETWEEN level AND level", True),
        ("level BETWEEN 1 AND 9 AND label = 'hello'", True),
        ("level IN (1, 5)", True),
        ("level IN (5.0)", True),
        ("level IN (1, 2)", False),
        ("level NOT IN (1, 2)", True),
        ("level NOT IN (1, 5)", False),
        ("label IN ('x', 'hello')", True),
        ("level IN (level - 1, level + 0)", True),
    ],
)
def test_between_and_in(condition: str, result: bool) -> None:
    assert where(condition) is result


def test_computed_bounds_out_of_order_mean_no_match() -> None:
    assert not where("5 BETWEEN level + 1 AND level - 1")
    assert not where("5 NOT BETWEEN level + 1 AND level - 1")
    assert where("NOT (5 BETWEEN level + 1 AND level - 1)")


def test_between_of_mixed_kinds_is_a_type_error() -> None:
    assert not where("label BETWEEN 1 AND 2 OR true")
    assert not where("level BETWEEN 'a' AND 'b' OR true")
    assert not where("level BETWEEN 1 AND 'b' OR true")


# -- absent values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "condition",
    [
        "maybe = 1",
        "maybe != 1",
        "maybe < 1",
        "maybe <= 1",
        "maybe > 1",
        "maybe >= 1",
        "1 = maybe",
        "maybe = maybe",
        "maybe + 1 = 1",
        "-maybe = -1",
        "maybe / 0 = 1",
        "maybe BETWEEN 0 AND 1",
        "maybe NOT BETWEEN 0 AND 1",
        "1 BETWEEN maybe AND 2",
        "maybe IN (1, 2)",
        "maybe NOT IN (1, 2)",
        "1 IN (maybe, 1)",
        "1 NOT IN (maybe, 2)",
        "maybe = 'text'",
    ],
)
def test_comparisons_with_absent_values_are_false(condition: str) -> None:
    assert not where(condition)
    assert where(f"NOT ({condition})")


def test_absent_values_match_once_held() -> None:
    assert where("maybe NOT IN (1, 2)", base(maybe=3))
    assert where("maybe != 1", base(maybe=3))


# -- conditions -----------------------------------------------------------------------------------


def test_bare_boolean_variable_as_condition() -> None:
    assert where("enabled")
    assert not where("NOT enabled")
    assert not where("enabled", base(enabled=False))
    assert where("NOT enabled", base(enabled=False))
    assert where("!enabled", base(enabled=False))
    assert where("true") and not where("false")


def test_non_boolean_conditions_are_type_errors() -> None:
    assert not where("level")
    assert not where("NOT level")
    assert not where("'text'")
    assert not where("1")
    assert not where("enabled AND level")
    assert not where("level OR enabled")
    assert not where("mode")


def test_and_or_not() -> None:
    assert where("enabled AND level = 5")
    assert not where("enabled AND level = 6")
    assert where("level = 6 OR enabled")
    assert not where("level = 6 OR NOT enabled")
    assert where("NOT enabled OR level = 6 OR label = 'hello'")


def test_type_errors_are_not_hidden_by_the_other_operand() -> None:
    assert not where("true OR label = 1")
    assert not where("false AND label = 1 OR true")


# -- type-error logging ---------------------------------------------------------------------------


def test_type_error_logs_one_warning_per_class_and_raises_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    q = parse_query("SELECT * FROM s.b WHERE label < 10")
    with caplog.at_level(logging.DEBUG, logger="sengen.query"):
        for _ in range(3):
            assert not q.matches(base())
        assert not q.matches(Fake(DERIVED))
        assert not q.matches(Fake(DERIVED))
    messages = [(r.levelno, r.getMessage()) for r in caplog.records]
    why = "type error: cannot apply '<' to string and number"
    assert messages == [
        (logging.WARNING, f"query '{q}' does not match objects of class geo.Base: {why}"),
        (logging.WARNING, f"query '{q}' does not match objects of class geo.Derived: {why}"),
    ]


def test_division_by_zero_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sengen.query"):
        assert not where("level / 0 > 1")
    assert [r.getMessage().rpartition(": ")[2] for r in caplog.records] == ["division by zero"]


def test_non_boolean_condition_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sengen.query"):
        assert not where("level")
    assert [r.getMessage().rpartition("type error: ")[2] for r in caplog.records] == [
        "the condition must be boolean, not number"
    ]


def test_no_log_when_the_query_matches_or_is_merely_false(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="sengen.query"):
        assert where("level = 5")
        assert not where("level = 6")
        assert not where("maybe = 1")
    assert caplog.records == []


# -- compilation, re-evaluation and referenced properties -----------------------------------------


def test_evaluator_is_compiled_once_per_class() -> None:
    q = parse_query("SELECT * FROM s.b WHERE level = 5")
    assert q.evaluator(BASE) is q.evaluator(BASE)
    assert q.evaluator(BASE) is not q.evaluator(DERIVED)


def test_re_evaluation_sees_the_current_values() -> None:
    q = parse_query("SELECT geo.Base FROM s.b WHERE speed < 10")
    obj = base(speed=5.0)
    assert q.matches(obj)
    setattr(obj, "speed", 100.0)  # noqa: B010 (a property set dynamically on the fake)
    assert not q.matches(obj)
    setattr(obj, "speed", 5.0)  # noqa: B010
    assert q.matches(obj)


def test_referenced_properties() -> None:
    q = parse_query(
        "SELECT * FROM s.b WHERE name = 'x' AND id = 1 OR position.inner.z BETWEEN level AND 3"
        " OR -speed IN (count, 1) OR NOT enabled"
    )
    assert q.properties == frozenset({"position", "level", "speed", "count", "enabled"})
    assert parse_query("SELECT * FROM s.b").properties == frozenset()
    assert parse_query("SELECT * FROM s.b WHERE name = 'a' AND id = 3").properties == frozenset()


def test_dynamic_properties_per_class() -> None:
    q = parse_query("SELECT * FROM s.b WHERE level = 5 AND speed = 1 AND extra = 2 AND name = 'a'")
    assert q.evaluator(DERIVED).dynamic_properties == frozenset({"speed", "extra"})
    assert q.evaluator(THING).dynamic_properties == frozenset()


def test_a_query_without_where_matches_every_conforming_object() -> None:
    q = parse_query("SELECT geo.Base FROM s.b")
    assert q.matches(base(label=None))
    assert q.conforms(DERIVED) and not q.conforms(THING)
