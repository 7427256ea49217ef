"""``<obj>.<member> ...``: read a property, print them all, call a method, set a writable
property (runtime.md §9.1).

Reads show the shell's proxy, as of its last drain: no remote call. Calls and setters go through
the proxy like any component's, are sent at the shell's commit and answered in a later drain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sengen.runtime import Call, Object
from sengen.runtime.errors import LocalMethodError
from sengen.runtime.kernel.extension import (
    ArgMeta,
    MethodMeta,
    NativeMeta,
    PropertyMeta,
    TypeMeta,
    resolve_alias,
    values,
)

from .jobs import CommandError, Steps
from .literals import LiteralError, parse_value, parse_values
from .render import json_text, property_lines, signature
from .suggest import member_hint

if TYPE_CHECKING:
    from .console import Console

SETTER = "setNext"


def setter_name(prop: PropertyMeta) -> str:
    """``setNextSetpoint`` for ``setpoint``."""
    return SETTER + prop.stl_name[:1].upper() + prop.stl_name[1:]


def member_command(console: Console, target: str, rest: str) -> Steps:
    head, _, member = target.rpartition(".")
    if not head or head in console.sources.sources or console.sources.find(target) is not None:
        raise CommandError(f"unknown command '{target}': expected a command or <object>.<member>")
    obj = yield from console.find(head)
    path = console.sources.path_of(obj)
    meta = obj.META
    if member == "print" and not rest:
        for line in property_lines(path, obj, console.virtual):
            console.say(line)
        return
    prop = meta.property(member)
    if prop is not None:
        if rest.startswith("="):
            yield from _set(console, path, obj, prop, rest[1:])
        elif rest:
            raise CommandError(f"to set {member}, write: {target} = <value>")
        else:
            console.say(json_text(prop.type, getattr(obj, prop.py_name)))
        return
    written = next((p for p in meta.all_properties if setter_name(p) == member), None)
    if written is not None:
        yield from _set(console, path, obj, written, rest)
        return
    method = meta.method(member)
    if method is None:
        what = "method" if rest else "property or method"
        hint = member_hint(meta, member, methods_only=bool(rest))
        raise CommandError(f"{what} '{member}' not found in {path} ({meta.qualified_name}){hint}")
    if method.local:
        raise CommandError(str(LocalMethodError(method.stl_name)))
    # The generated methods' dynamic form, by STL name: the shell works from metadata alone.
    call: Call[Any] = obj._call_(method.stl_name, tuple(_arguments(method, rest)), None, None)
    yield call
    value = console.result(call)
    if method.return_type is not None:
        console.say(json_text(method.return_type, value))


def _set(console: Console, path: str, obj: Object, prop: PropertyMeta, text: str) -> Steps:
    if not prop.writable:
        raise CommandError(f"property '{prop.stl_name}' of '{obj.bus}.{obj.name}' is not writable")
    try:
        raw = _one(prop.type, text)
        value = values.from_config(prop.type)(raw)
    except LiteralError as error:
        raise CommandError(f"error parsing the value: {error}") from None
    except values.Invalid as error:
        where = _where(prop.stl_name, error)
        raise CommandError(f"invalid value for property '{where}': {error.message}") from None
    call = obj._setter_call_(prop.stl_name, value)
    yield call
    console.result(call)


def _arguments(method: MethodMeta, text: str) -> list[Any]:
    """The call's arguments from ``text``, converted to their STL types; every error is
    followed by the method's signature."""
    params = method.args
    usage = f"  {signature(method)}"
    try:
        if len(params) == 1 and text and _is_string(params[0].type):
            raw = [_one(params[0].type, text)]
        else:
            raw = parse_values(text)
    except LiteralError as error:
        raise CommandError(f"error parsing the arguments: {error}", usage) from None
    if raw and not params:
        raise CommandError(f"the method {method.stl_name} takes no arguments", usage)
    if len(raw) > len(params):
        raise CommandError(f"too many arguments for method {method.stl_name}", usage)
    if len(raw) < len(params):
        raise CommandError(f"not enough arguments for method {method.stl_name}", usage)
    return [_converted(arg, value, usage) for arg, value in zip(params, raw, strict=True)]


def _converted(arg: ArgMeta, raw: Any, usage: str) -> Any:
    try:
        return values.from_config(arg.type)(raw)
    except values.Invalid as error:
        detail = f"argument '{_where(arg.stl_name, error)}': {error.message}"
        raise CommandError(f"error parsing the arguments: {detail}", usage) from None


def _one(meta: TypeMeta, text: str) -> Any:
    """One value; for a string, the text itself when it is not a quoted string (the rest of
    the line may be written unquoted)."""
    if _is_string(meta):
        try:
            value = parse_value(text)
        except LiteralError:
            return text.strip()
        return value if isinstance(value, str) else text.strip()
    return parse_value(text)


def _is_string(meta: TypeMeta) -> bool:
    target = resolve_alias(meta)
    return isinstance(target, NativeMeta) and target.qualified_name == "string"


def _where(name: str, error: values.Invalid) -> str:
    return ".".join((name, *error.path)).replace(".[", "[")
