"""STL naming rules (spec stl.md §2.5, §7): declared type names, member names, C++ words."""

from __future__ import annotations

CPP_RESERVED = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "atomic_cancel",
        "atomic_commit",
        "atomic_noexcept",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "contract_assert",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "reflexpr",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "synchronized",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
        "final",
        "override",
        "transaction_safe",
        "transaction_safe_dynamic",
        "import",
        "pre",
        "post",
        "trivially_relocatable_if_eligible",
        "replaceable_if_eligible",
        "_Pragma",
    ]
)


def _shape_error(name: str, *, type_name: bool) -> str | None:
    first = name[0]
    if first.isdigit():
        return "not allowed to start with digits"
    if first == "_":
        return "not allowed to start with _"
    if type_name and first.islower():
        return "not allowed to start with lowercase letter"
    if not type_name and first.isupper():
        return "not allowed to start with uppercase letter"
    if "_" in name:
        return f"name must only contain alpha-numeric characters but '_' was found in '{name}'"
    return None


def type_name_error(name: str) -> str | None:
    """The message for a declared type name that breaks ``[A-Z][A-Za-z0-9]*``, else None."""
    # Sen rejects reserved words while parsing, before any naming rule is applied.
    if name in CPP_RESERVED:
        return f"usage of reserved word '{name}'"
    problem = _shape_error(name, type_name=True)
    return f"invalid type name '{name}': {problem}" if problem is not None else None


def member_name_error(name: str) -> str | None:
    """The message for a field/enumerator/member/argument name breaking ``[a-z][A-Za-z0-9]*``."""
    if name in CPP_RESERVED:
        return f"usage of reserved word '{name}'"
    problem = _shape_error(name, type_name=False)
    return f"invalid name '{name}': {problem}" if problem is not None else None
