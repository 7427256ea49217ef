"""Python names for STL names (codegen.md §2): snake_case and reserved-name mangling.

STL names stay the public identity (configuration, shell, queries, wire); Python names are a
local convenience. A Python name that equals a reserved name of its context gets one trailing
``_`` (STL names cannot end in ``_``, so this never clashes) and a warning at the STL location.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from sengen.diagnostics import Diagnostic, Severity
from sengen.stl import model as m

_KEYWORDS = frozenset(keyword.kwlist)
_SOFT_KEYWORDS = frozenset(("match", "case", "type", "_"))
_BUILTINS = frozenset(
    "bool bytes float int object str tuple type property classmethod staticmethod super".split()
)
_RUNTIME_MEMBERS = frozenset(
    "name local_name id owner bus last_commit_time update registered unregistered"
    " pre_drain pre_commit from_config events".split()
)
_ARGUMENT_NAMES = frozenset(["self", "cls", "on_result", "timeout", "promise"])

# Extra reserved names per context, on top of keywords and soft keywords (§2.3's table).
_CONTEXTS: dict[str, tuple[tuple[frozenset[str], str], ...]] = {
    "field": ((_BUILTINS, "builtin"),),
    "argument": ((_BUILTINS, "builtin"), (_ARGUMENT_NAMES, "generated argument")),
    "event": ((_BUILTINS, "builtin"),),
    "member": ((_BUILTINS, "builtin"), (_RUNTIME_MEMBERS, "runtime member")),
    "enumerator": ((frozenset(("mro",)), "rejected by enum"),),
    "module": (),  # package segments and module names: keywords and soft keywords only
}
_TYPE_NAMES = frozenset(("None", "True", "False"))
_Check = Callable[[str, str, str, m.Location], None]
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_case(name: str) -> str:
    """The snake_case of a member name: ``getHTTPCode`` → ``get_http_code``.

    ``_`` goes before an uppercase letter that follows a lowercase letter or a digit, or that
    follows an uppercase letter and precedes a lowercase one; then everything is lowercased.
    """
    return _SNAKE.sub("_", name).lower()


def reserved_cause(name: str, context: str) -> str | None:
    """Why ``name`` cannot be used as is in ``context``, or None when it can."""
    if context == "type":
        return "constant" if name in _TYPE_NAMES else None
    if name in _KEYWORDS:
        return "keyword"
    if name in _SOFT_KEYWORDS:
        return "soft keyword"
    for names, cause in _CONTEXTS[context]:
        if name in names:
            return cause
    return None


def python_name(name: str, context: str) -> str:
    """The Python identifier for an already converted name, mangled when reserved."""
    return name + "_" if reserved_cause(name, context) is not None else name


def variant_tags(t: m.VariantType) -> list[str]:
    """Each alternative's tag (codegen.md §1.2): its simple type name, or its qualified name for
    every alternative whose simple name another alternative shares."""
    qualified = [a.type.qualified_name for a in t.alternatives]
    if len(set(qualified)) < len(qualified):
        # fom.md §10.7: a FOM variant may repeat a type; its HLA alternative names are unique.
        return [a.hla_name for a in t.alternatives]
    simple = [a.type.name for a in t.alternatives]
    return [
        a.type.qualified_name if simple.count(a.type.name) > 1 else a.type.name
        for a in t.alternatives
    ]


def mangling_warnings(program: m.Program) -> list[Diagnostic]:
    """A warning for every STL name whose Python name had to be mangled, in model order."""
    found: list[Diagnostic] = []

    def check(py: str, context: str, what: str, location: m.Location) -> None:
        cause = reserved_cause(py, context)
        if cause is not None:
            found.append(
                Diagnostic(
                    Severity.WARNING,
                    location.file,
                    location.line,
                    location.column,
                    f"'{py}' is reserved in Python ({cause}); {what} is generated as '{py}_'",
                )
            )

    for user_type in program.types:
        qualified = user_type.qualified_name
        check(user_type.name, "type", f"type '{qualified}'", user_type.location)
        if isinstance(user_type, m.StructType):
            for f in user_type.fields:
                what = f"field '{f.name}' of struct '{qualified}'"
                check(snake_case(f.name), "field", what, f.location)
        elif isinstance(user_type, m.EnumType):
            for e in user_type.enumerators:
                what = f"enumerator '{e.name}' of enum '{qualified}'"
                check(e.name, "enumerator", what, e.location)
        elif isinstance(user_type, m.ClassType):
            _class_names(user_type, check)
    return found


def _class_names(cls: m.ClassType, check: _Check) -> None:
    qualified = cls.qualified_name
    for prop in cls.properties:
        what = f"property '{prop.name}' of class '{qualified}'"
        check(snake_case(prop.name), "member", what, prop.location)
    for method in cls.methods:
        what = f"method '{method.name}' of class '{qualified}'"
        check(snake_case(method.name), "member", what, method.location)
        _arguments(method.arguments, f"method '{method.name}' of class '{qualified}'", check)
    for event in cls.events:
        what = f"event '{event.name}' of class '{qualified}'"
        check(snake_case(event.name), "event", what, event.location)
        _arguments(event.arguments, f"event '{event.name}' of class '{qualified}'", check)


def _arguments(arguments: tuple[m.Argument, ...], owner: str, check: _Check) -> None:
    for argument in arguments:
        what = f"argument '{argument.name}' of {owner}"
        check(snake_case(argument.name), "argument", what, argument.location)
