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

from .evaluate import Evaluator, Query
from .parse import QueryError, parse_query
from .syntax import Between, Binary, Expr, In, Literal, Unary, Variable

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
