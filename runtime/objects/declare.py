"""The declarations generated classes are written in, and what the runtime derives from them.

A generated class declares each STL member once, with keyword metadata: a property as
``x: Prop[float] = prop(F64, writable=True, doc="...")``, a method with the :func:`method`
decorator, an event as ``e: Event[[int]] = event({"count": U32})`` in the class's events
namespace. When the class is created, :func:`class_meta` turns the declarations into its
``ClassMeta`` and :func:`derived_members` writes what follows from them (change subscriptions,
``set_next_*``, constructors, slots), the way dataclasses and attrs do: the generated source
holds only what a type checker must see. Structs and variants are declared with the
:func:`struct` and :func:`variant` class decorators, enums with :func:`enum_meta`, alias-like
types with the methods of the module's :class:`Module` (codegen.md §3.7).

A member's STL name is its Python name in lowerCamelCase (:func:`stl_name_of`) unless the
declaration says ``stl=``: the generator writes it only where that rule does not give it back.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, dataclass_transform, overload

from sengen.runtime.errors import VariantTagError
from sengen.runtime.objects.meta import (
    AliasMeta,
    AlternativeMeta,
    ArgMeta,
    ArrayMeta,
    Category,
    ClassMeta,
    EnumeratorMeta,
    EnumMeta,
    EventMeta,
    FieldMeta,
    MethodMeta,
    NativeMeta,
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

if TYPE_CHECKING:
    from typing import Never, Self

    from sengen.runtime.objects.events import BaseEvents, Emitter, EventHandle

T = TypeVar("T")
C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")


class Registrations:
    """Where declared types and classes are registered. The registry sits above this module
    and the object classes, so it installs its methods here when it is imported (as ``abi``
    imports it, before any generated module runs)."""

    def __init__(self) -> None:
        self.add_type: Callable[[str, str, TypeMeta], None] = _unregistered
        self.add_class: Callable[[str, type, type, type, type], None] = _unregistered


def _unregistered(*_: object) -> None:
    raise RuntimeError("sengen.runtime.objects.registry was not imported")


registrations = Registrations()


def stl_name_of(py_name: str) -> str:
    """The STL name a declaration stands for unless it says otherwise: ``max_flow`` →
    ``maxFlow`` (a trailing ``_``, which only mangling adds, dropped)."""
    head, *rest = py_name.removesuffix("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _doc(obj: object) -> str:
    """The STL description an object's docstring holds ("" without one)."""
    text = obj.__doc__ if isinstance(obj.__doc__, str) else None
    return inspect.cleandoc(text).rstrip() if text else ""


class Module:
    """A generated module: its STL package and file, and the registry scope of its root
    package. Every declaration in the module names it."""

    __slots__ = ("file", "name", "package", "scope")

    def __init__(self, name: str, *, package: str, file: str, depth: int) -> None:
        self.name = name
        self.package = package
        self.file = file
        self.scope = name.rsplit(".", depth)[0]

    def qualified(self, name: str) -> str:
        return f"{self.package}.{name}" if self.package else name

    def register(self, meta: TypeMeta) -> None:
        registrations.add_type(self.scope, self.name, meta)

    # -- alias-like types: their metadata is all there is at run time ------------------------------

    def sequence(
        self,
        name: str,
        *,
        element: TypeMeta,
        max_size: int | None = None,
        hash: int,
        doc: str = "",
    ) -> SequenceMeta:
        meta = SequenceMeta(self.qualified(name), doc, hash, element, max_size, _is_u8(element))
        self.register(meta)
        return meta

    def array(
        self, name: str, *, element: TypeMeta, size: int, hash: int, doc: str = ""
    ) -> ArrayMeta:
        meta = ArrayMeta(self.qualified(name), doc, hash, element, size, _is_u8(element))
        self.register(meta)
        return meta

    def optional(self, name: str, *, target: TypeMeta, hash: int, doc: str = "") -> OptionalMeta:
        meta = OptionalMeta(self.qualified(name), doc, hash, target)
        self.register(meta)
        return meta

    def alias(self, name: str, *, target: TypeMeta, hash: int, doc: str = "") -> AliasMeta:
        meta = AliasMeta(self.qualified(name), doc, hash, target)
        self.register(meta)
        return meta

    def quantity(
        self,
        name: str,
        *,
        value_type: NativeMeta,
        unit: UnitMeta | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
        hash: int,
        doc: str = "",
    ) -> QuantityMeta:
        meta = QuantityMeta(self.qualified(name), doc, hash, value_type, unit, minimum, maximum)
        self.register(meta)
        return meta


# -- enums, structs and variants: decorators of their classes ------------------------------------

E = TypeVar("E", bound=enum.Enum)


def enum_meta(
    cls: type[enum.Enum], *, module: Module, storage: NativeMeta, hash: int, stl: str | None = None
) -> EnumMeta:
    """An enum's metadata. Its enumerators are ``NAME = key``, or ``NAME = enumerator(key,
    doc=...)`` when described (or named otherwise in STL)."""
    enumerators = []
    for member in cls:
        key = member.value
        told = key if isinstance(key, _Enumerator) else None
        if told is not None:
            member._value_ = int(key)
            member.__doc__ = told.doc or None
        enumerators.append(
            EnumeratorMeta(
                told.stl if told is not None and told.stl else member.name.removesuffix("_"),
                member.name,
                int(key),
                told.doc if told is not None else "",
            )
        )
    # Looked up by the plain keys, now that the values are plain integers again.
    cls._value2member_map_ = {m.value: m for m in cls}
    own_doc = _doc(cls) if "__doc__" in cls.__dict__ else ""
    name = module.qualified(stl or cls.__name__)
    meta = EnumMeta(name, own_doc, hash, storage, tuple(enumerators), cls)
    module.register(meta)
    return meta


def variant(*, module: Module, hash: int, stl: str | None = None) -> Callable[[C], C]:
    """A variant: ``tag`` and ``value`` in slots, frozen, with the dataclass's equality, hash
    and repr. Its alternatives are declared as ``ALTERNATIVES = (alternative(...), ...)``."""

    def declare(declared: C) -> C:
        cls: Any = declared
        alternatives: list[Alternative] = cls.__dict__["ALTERNATIVES"]
        skip = ("__dict__", "__weakref__", "ALTERNATIVES")
        namespace = {k: v for k, v in cls.__dict__.items() if k not in skip}
        namespace["__slots__"] = ("tag", "value")
        made: Any = dataclasses.dataclass(frozen=True, init=False)(
            type(cls)(cls.__name__, cls.__bases__, namespace)
        )
        made.__init__ = _struct_init(made, ("tag", "value"))
        made.get = _variant_get
        meta = VariantMeta(
            module.qualified(stl or cls.__name__),
            _doc(cls),
            hash,
            tuple(a.meta(i) for i, a in enumerate(alternatives)),
            made,
        )
        made.META = meta
        module.register(meta)
        result: C = made
        return result

    return declare


def _is_u8(element: TypeMeta) -> bool:
    return isinstance(element, NativeMeta) and element.qualified_name == "u8"


def _variant_get(variant: Any, tag: str) -> Any:
    """The value held, when the variant holds alternative ``tag``; else ``VariantTagError``."""
    if variant.tag != tag:
        raise VariantTagError(f"{type(variant).__qualname__} holds '{variant.tag}', not '{tag}'")
    return variant.value


class _Enumerator(int):
    """An enumerator's key with its description, until the enum's declaration reads them."""

    doc: str
    stl: str | None


def enumerator(key: int, *, doc: str = "", stl: str | None = None) -> int:
    """An enumerator with a description (or an STL name its Python name does not give back)."""
    described = _Enumerator(key)
    described.doc = doc
    described.stl = stl
    return described


class Alternative:
    """A variant alternative: its tag, key and type."""

    __slots__ = ("doc", "key", "tag", "type")

    def __init__(self, tag: str, type: TypeMeta, key: int | None, doc: str) -> None:
        self.tag = tag
        self.type = type
        self.key = key
        self.doc = doc

    def meta(self, index: int) -> AlternativeMeta:
        return AlternativeMeta(
            self.tag, index if self.key is None else self.key, self.type, self.doc
        )


def alternative(tag: str, *, type: TypeMeta, key: int | None = None, doc: str = "") -> Alternative:
    """A variant alternative; its key is its position unless ``key`` says otherwise."""
    return Alternative(tag, type, key, doc)


# -- structs ----------------------------------------------------------------------------------


class Field:
    """A struct field's declaration: its STL type and description."""

    __slots__ = ("doc", "stl", "type")

    def __init__(self, type: TypeMeta, doc: str, stl: str | None) -> None:
        self.type = type
        self.doc = doc
        self.stl = stl


def field(type: TypeMeta, *, doc: str = "", stl: str | None = None) -> Any:
    """A struct field: ``x: float = field(F64, doc="...")`` (a field specifier, PEP 681)."""
    return Field(type, doc, stl)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def struct(*, module: Module, hash: int, stl: str | None = None) -> Callable[[C], C]:
    """A struct: its fields in slots that carry their descriptions, frozen, with the
    dataclass's field list, equality, hash and repr (``dataclasses.replace`` works) and a fast
    constructor."""

    def declare(declared: C) -> C:
        cls: Any = declared
        own = {k: v for k, v in cls.__dict__.items() if isinstance(v, Field)}
        namespace = {
            k: v
            for k, v in cls.__dict__.items()
            if k not in own and k not in ("__dict__", "__weakref__")
        }
        # The values live in slots that carry the fields' descriptions (help() shows them).
        namespace["__slots__"] = {k: f.doc or None for k, f in own.items()}
        made: Any = dataclasses.dataclass(frozen=True, init=False)(
            type(cls)(cls.__name__, cls.__bases__, namespace)
        )
        parent: StructMeta | None = getattr(cls, "META", None)
        inherited = parent.fields if parent is not None else ()
        fields = inherited + tuple(
            FieldMeta(f.stl or stl_name_of(k), k, f.type, f.doc) for k, f in own.items()
        )
        made.__init__ = _struct_init(made, tuple(f.py_name for f in fields))
        meta = StructMeta(
            module.qualified(stl or cls.__name__), _doc(cls), hash, parent, fields, made
        )
        made.META = meta
        module.register(meta)
        result: C = made
        return result

    return declare


def _struct_init(cls: type, names: tuple[str, ...]) -> Callable[..., None]:
    """An ``__init__`` that stores each field through its slot's cached ``__set__`` (a closure
    variable), past the frozen guard, at about the cost of a plain store (codegen.md §1.2)."""
    setters = [f"_set_{n}" for n in names]
    body = "".join(f"\n        _set_{n}(self, {n})" for n in names) or "\n        pass"
    source = (
        f"def make({', '.join(setters)}):"
        f"\n    def __init__(self, {', '.join(names)}):{body}"
        "\n    return __init__"
    )
    scope: dict[str, Any] = {}
    exec(compile(source, f"<{cls.__qualname__} __init__>", "exec"), scope)
    init: Callable[..., None] = scope["make"](*(getattr(cls, n).__set__ for n in names))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


# -- class members ----------------------------------------------------------------------------


class _PropDecl(property):
    """A property declaration. It is a ``property`` so that ``help()`` lists it with its
    description; the slots of the base and the proxies hold the values and shadow it."""

    description: str
    stl: str | None
    type: TypeMeta
    category: Category
    transport: Transport
    checked: bool
    tags: tuple[str, ...]

    def meta(self, py_name: str) -> PropertyMeta:
        meta = PropertyMeta(
            self.stl or stl_name_of(py_name),
            py_name,
            self.type,
            self.category,
            self.transport,
            self.checked,
            self.tags,
            self.description,
        )
        # In the instance's own dict: a property subclass's class docstring would shadow it.
        self.__doc__ = described(meta)
        return meta


if TYPE_CHECKING:

    class Prop(Generic[T]):
        """What a type checker sees of a property: a read-only value of type ``T``."""

        @overload
        def __get__(self, obj: None, owner: type[Any], /) -> Self: ...
        @overload
        def __get__(self, obj: object, owner: type[Any], /) -> T: ...
        def __get__(self, obj: object, owner: type[Any], /) -> Any: ...
        def __set__(self, obj: object, value: Never, /) -> None: ...

    class Event(Generic[P]):
        """What a type checker sees of an event: a handle, with ``emit`` on the owner's."""

        @overload
        def __get__(self, obj: None, owner: type[Any], /) -> Self: ...
        @overload
        def __get__(self, obj: BaseEvents, owner: type[Any], /) -> Emitter[P]: ...
        @overload
        def __get__(self, obj: object, owner: type[Any], /) -> EventHandle[P]: ...
        def __get__(self, obj: object, owner: type[Any], /) -> Any: ...


def prop(
    type: TypeMeta,
    *,
    static: bool = False,
    static_no_config: bool = False,
    writable: bool = False,
    checked: bool = False,
    transport: Transport = Transport.MULTICAST,
    tags: tuple[str, ...] = (),
    doc: str = "",
    stl: str | None = None,
) -> Any:
    """A property: ``static`` is STL's ``[static]``, ``static_no_config`` its
    ``[static_no_config]``, ``writable`` its ``[writable]``; the default is read-only dynamic."""
    category = (
        Category.STATIC_RW
        if static
        else (
            Category.STATIC_RO
            if static_no_config
            else Category.DYNAMIC_RW if writable else Category.DYNAMIC_RO
        )
    )
    declared = _PropDecl()
    declared.description = doc
    declared.stl = stl
    declared.type = type
    declared.category = category
    declared.transport = transport
    declared.checked = checked
    declared.tags = tags
    return declared


class Arg:
    """An argument whose STL name its Python name does not give back, or that is described."""

    __slots__ = ("doc", "stl", "type")

    def __init__(self, type: TypeMeta, doc: str, stl: str | None) -> None:
        self.type = type
        self.doc = doc
        self.stl = stl


def arg(type: TypeMeta, *, doc: str = "", stl: str | None = None) -> Any:
    return Arg(type, doc, stl)


def _args(args: Mapping[str, TypeMeta | Arg]) -> tuple[ArgMeta, ...]:
    metas = []
    for py_name, declared in args.items():
        if isinstance(declared, Arg):
            stl = declared.stl or stl_name_of(py_name)
            metas.append(ArgMeta(stl, py_name, declared.type, declared.doc))
        else:
            metas.append(ArgMeta(stl_name_of(py_name), py_name, declared, ""))
    return tuple(metas)


class _MethodDecl:
    __slots__ = ("args", "const", "deferred", "local", "returns", "stl", "transport")

    def __init__(
        self,
        args: tuple[ArgMeta, ...],
        returns: TypeMeta | None,
        const: bool,
        deferred: bool,
        local: bool,
        transport: Transport,
        stl: str | None,
    ) -> None:
        self.args = args
        self.returns = returns
        self.const = const
        self.deferred = deferred
        self.local = local
        self.transport = transport
        self.stl = stl


def method(
    args: Mapping[str, TypeMeta | Arg] | None = None,
    *,
    returns: TypeMeta | None = None,
    const: bool = False,
    deferred: bool = False,
    local: bool = False,
    transport: Transport = Transport.CONFIRMED,
    stl: str | None = None,
) -> Callable[[F], F]:
    """A method: its arguments' STL types by Python name, its result, its STL attributes. Its
    docstring is the STL description."""
    declared = _MethodDecl(
        args=_args(args or {}),
        returns=returns,
        const=const,
        deferred=deferred,
        local=local,
        transport=transport,
        stl=stl,
    )

    def mark(function: F) -> F:
        function._stl_method_ = declared  # type: ignore[attr-defined]
        return function

    return mark


class _EventDecl:
    """An event in an ``Events`` namespace class. Each object's namespace holds its handles in
    its own attributes, which shadow this declaration."""

    __slots__ = ("args", "doc", "stl", "transport")

    def __init__(
        self, args: tuple[ArgMeta, ...], transport: Transport, doc: str, stl: str | None
    ) -> None:
        self.args = args
        self.transport = transport
        self.doc = doc
        self.stl = stl

    def meta(self, py_name: str) -> EventMeta:
        return EventMeta(
            self.stl or stl_name_of(py_name), py_name, self.args, self.transport, self.doc
        )

    def __repr__(self) -> str:
        # What help() of the namespace shows for it: the arguments and the description.
        args = ", ".join(f"{a.stl_name}: {a.type.qualified_name}" for a in self.args)
        return f"event({args})" + (f": {self.doc}" if self.doc else "")


def event(
    args: Mapping[str, TypeMeta | Arg] | None = None,
    *,
    transport: Transport = Transport.MULTICAST,
    doc: str = "",
    stl: str | None = None,
) -> Any:
    """An event: its arguments' STL types by Python name."""
    return _EventDecl(_args(args or {}), transport, doc, stl)


def events_of(namespace: type) -> tuple[EventMeta, ...]:
    """The events an ``Events`` class declares itself."""
    return tuple(
        value.meta(key) for key, value in vars(namespace).items() if isinstance(value, _EventDecl)
    )


def class_meta(
    name: str,
    namespace: Mapping[str, Any],
    parent: ClassMeta | None,
    events: tuple[EventMeta, ...],
    *,
    module: Module,
    line: int,
    hash: int,
    abstract: bool,
    stl: str | None,
) -> ClassMeta:
    """An interface's metadata, from the declarations in its class body."""
    properties = tuple(v.meta(k) for k, v in namespace.items() if isinstance(v, _PropDecl))
    methods = []
    for key, value in namespace.items():
        declared: _MethodDecl | None = getattr(value, "_stl_method_", None)
        if declared is not None:
            description = _doc(value)
            described_args = [a for a in declared.args if a.description]
            if described_args:
                # help() lists the arguments' STL descriptions under the method's own.
                items = "".join(f"\n    {a.py_name}: {a.description}" for a in described_args)
                value.__doc__ = f"{description}\n\nArguments:{items}".lstrip()
            methods.append(
                MethodMeta(
                    declared.stl or stl_name_of(key),
                    key,
                    declared.args,
                    declared.returns,
                    declared.const,
                    declared.transport,
                    declared.deferred,
                    declared.local,
                    description,
                )
            )
    inherited = parent.all_properties if parent is not None else ()
    constructor = tuple(
        ArgMeta(p.stl_name, p.py_name, p.type, p.description)
        for p in (*inherited, *properties)
        if p.category is Category.STATIC_RW
    )
    doc = namespace.get("__doc__")
    # Usable without user code (codegen.md §3.8): not abstract, no method in the class or an
    # ancestor, no checked property.
    instantiable = (
        not abstract
        and not methods
        and not any(p.checked for p in (*inherited, *properties))
        and (parent is None or not parent.all_methods)
    )
    return ClassMeta(
        module.qualified(stl or name),
        inspect.cleandoc(doc).rstrip() if isinstance(doc, str) else "",
        f"{module.file}:{line}",
        parent,
        abstract,
        instantiable,
        properties,
        tuple(methods),
        events,
        constructor,
        hash,
        module.scope,
    )


_CATEGORY_NAMES = {
    Category.STATIC_RW: "static",
    Category.STATIC_RO: "static_no_config",
    Category.DYNAMIC_RW: "writable",
    Category.DYNAMIC_RO: "read-only",
}


def described(meta: PropertyMeta) -> str | None:
    """A property's docstring: its STL description, then its STL type and category; None for
    a property without a description (no text is made up)."""
    if not meta.description:
        return None
    return f"{meta.description}\n\n{meta.type.qualified_name}, {_CATEGORY_NAMES[meta.category]}"


def events_doc(events: tuple[EventMeta, ...]) -> str:
    """What ``help()`` of an interface shows for its events: each one's STL signature and
    description."""
    lines = []
    for e in events:
        args = ", ".join(f"{a.stl_name}: {a.type.qualified_name}" for a in e.args)
        lines.append(f"{e.py_name}({args})" + (f": {e.description}" if e.description else ""))
    return "\n".join(lines)


def stem(py_name: str) -> str:
    """The unmangled snake name that derived names are built from (codegen.md §2.3)."""
    return py_name[:-1] if py_name.endswith("_") else py_name


def interface_members(meta: ClassMeta) -> dict[str, Callable[..., Any]]:
    """What an interface derives from its properties: ``on_<s>_changed`` for every dynamic one,
    ``set_next_<s>`` (a setter call to the owner) for every writable one."""
    members: dict[str, Callable[..., Any]] = {}
    for p in meta.properties:
        s = stem(p.py_name)
        if p.dynamic:
            members[f"on_{s}_changed"] = _on_changed(p)
        if p.writable:
            members[f"set_next_{s}"] = _setter_call(p)
    return members


def _named(
    function: Callable[..., Any], name: str, doc: str, **annotations: str
) -> Callable[..., Any]:
    """A derived member as help() shows it: its name, what it does, its STL types."""
    function.__name__ = name
    function.__doc__ = doc
    function.__annotations__ = annotations
    return function


def _on_changed(p: PropertyMeta) -> Callable[..., Any]:
    key = p.py_name

    def on_changed(self: Any, callback: Callable[[Any], None]) -> Any:
        return self._on_changed_(key, callback)

    doc = f"Call ``callback`` with the new value of ``{p.stl_name}`` after each change."
    callback = f"Callable[[{p.type.qualified_name}], None]"
    return _named(on_changed, f"on_{stem(key)}_changed", doc, callback=callback)


def _setter_call(p: PropertyMeta) -> Callable[..., Any]:
    stl_name = p.stl_name

    def set_next(self: Any, value: Any) -> Any:
        return self._setter_call_(stl_name, value)

    doc = f"Ask the owner to set ``{stl_name}``; visible after the owner's commit."
    return _named(set_next, f"set_next_{stem(p.py_name)}", doc, value=p.type.qualified_name)


def base_members(meta: ClassMeta) -> dict[str, Callable[..., Any]]:
    """What the implementation base derives: the constructor, ``get_next_<s>`` of dynamic
    properties (their ``set_next_<s>`` is added to the class: :func:`setter`), ``set_<s>`` of
    ``[static_no_config]`` ones, the default ``<s>_accepts_set`` of ``[checked]`` ones, and the
    forwarding of ``[local]`` methods."""
    members: dict[str, Callable[..., Any]] = {"__init__": _constructor(meta)}
    for p in meta.properties:
        s = stem(p.py_name)
        key = p.py_name
        if p.category is Category.STATIC_RO:
            members[f"set_{s}"] = _static_setter(key, p)
        elif p.dynamic:
            members[f"get_next_{s}"] = _get_next(key, p)
        if p.checked:
            members[f"{s}_accepts_set"] = _named(
                lambda self, value: True,
                f"{s}_accepts_set",
                f"Whether ``{p.stl_name}`` may take ``value``; override to restrict it.",
            )
    for m in meta.methods:
        if m.local:
            members[m.py_name] = _local(m)
    return members


def _get_next(key: str, p: PropertyMeta) -> Callable[..., Any]:
    def get_next(self: Any) -> Any:
        return self._get_next(key)

    doc = f"The pending value of ``{p.stl_name}``, or the current one when none is pending."
    return _named(get_next, f"get_next_{stem(key)}", doc, **{"return": p.type.qualified_name})


def setter(p: PropertyMeta, write: Callable[[Any, Any], None]) -> Callable[..., Any]:
    """``set_next_<s>`` of a dynamic property, once the base class exists: ``write`` is made
    from the class's slot (``objects._writer``), which :func:`base_members` cannot see."""
    doc = f"Set ``{p.stl_name}`` at the next commit; the last write in a cycle wins."
    return _named(write, f"set_next_{stem(p.py_name)}", doc, value=p.type.qualified_name)


def _static_setter(key: str, p: PropertyMeta) -> Callable[..., Any]:
    def set_static(self: Any, value: Any) -> None:
        self._set_static(key, value)

    doc = f"Set ``{p.stl_name}``; allowed only before the object is registered on a bus."
    return _named(set_static, f"set_{stem(key)}", doc, value=p.type.qualified_name)


def _local(m: MethodMeta) -> Callable[..., Any]:
    hook = f"{stem(m.py_name)}_impl"

    def local(self: Any, *args: Any) -> Any:
        return getattr(self, hook)(*args)

    return _named(local, m.py_name, m.description)


def _constructor(meta: ClassMeta) -> Callable[..., None]:
    """``__init__(self, name, <[static] properties, parents first>)``: cooperative, passing
    the parent's statics on by keyword (codegen.md §3.1)."""
    own = [p.py_name for p in meta.properties if p.category is Category.STATIC_RW]
    names = [a.py_name for a in meta.constructor]
    inherited = names[: len(names) - len(own)]
    call = "".join(f", {n}={n}" for n in inherited)
    lines = [
        f"def __init__(self, name, {', '.join(names)}):" if names else "def __init__(self, name):"
    ]
    lines.append(
        f"    super_(cls, self).__init__(name{call})"
        if call
        else "    super_(cls, self).__init__(name)"
    )
    lines += [f"    self._init_static({n!r}, {n})" for n in own]
    return _compiled("\n".join(lines), "__init__", meta)


def _compiled(source: str, name: str, meta: ClassMeta) -> Callable[..., None]:
    scope: dict[str, Any] = {"super_": super, "cls": None}
    exec(compile(source, f"<{meta.qualified_name} {name}>", "exec"), scope)
    function: Callable[..., None] = scope[name]
    function._scope_ = scope  # type: ignore[attr-defined]  # the class is set once it exists
    return function


def bind_class(function: Callable[..., Any], cls: type) -> None:
    """Give a compiled constructor its class (for ``super()``), once the class exists."""
    scope: dict[str, Any] | None = getattr(function, "_scope_", None)
    if scope is not None:
        scope["cls"] = cls


def slots_of(meta: ClassMeta) -> dict[str, str | None]:
    """The slots of a base or proxy: one per own property, documented."""
    return {p.py_name: described(p) for p in meta.properties}


if not TYPE_CHECKING:
    # At run time a declaration's annotation names the class of what it declares.
    Prop = _PropDecl
    Event = _EventDecl
