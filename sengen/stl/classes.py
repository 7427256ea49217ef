"""Resolution of a class declaration: parents, members, attributes, constructor (§8)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from sengen.stl import model as m
from sengen.stl.comments import join_texts
from sengen.stl.names import member_name_error
from sengen.stl.settings import Settings
from sengen.stl.source import SourceFile
from sengen.stl.suggest import suggest_attribute
from sengen.stl.syntax import Member, Ref, Statement

if TYPE_CHECKING:
    from lark import Token

    from sengen.diagnostics import Note

_CATEGORIES = {
    "static": m.PropertyCategory.STATIC_RW,
    "static_no_config": m.PropertyCategory.STATIC_RO,
    "writable": m.PropertyCategory.DYNAMIC_RW,
}
_TRANSPORTS = {"confirmed": m.TransportMode.CONFIRMED, "bestEffort": m.TransportMode.UNICAST}
_ALLOWED = {
    "var": frozenset(_CATEGORIES) | frozenset(_TRANSPORTS) | {"checked"},
    "fn": frozenset(_TRANSPORTS) | {"const", "local", "deferred"},
    "event": frozenset(_TRANSPORTS),
}
_KNOWN = frozenset().union(*_ALLOWED.values(), {"tag"})
_WORD = {"var": "property", "fn": "method", "event": "event"}
_ARTICLE = {"var": "a property", "fn": "a method", "event": "an event"}
_REPEATED = {
    "var": "duplicated property name '{}'",
    "fn": "method with repeated name '{}'",
    "event": "event with repeated name '{}'",
}
_DEPRECATED = "using '{}' in STL is now deprecated. Please use code generation settings."


_Derived = TypeVar("_Derived", m.ClassType, m.StructType)


class InheritedNames:
    """Which classes and structs declare each member or field name, so that a new one is
    checked against its type's ancestors in time independent of their number (a walk over
    every ancestor's members per member made 5,000 levels of inheritance quadratic)."""

    def __init__(self) -> None:
        self._declarers: dict[tuple[str, str], set[m.ClassType | m.StructType]] = {}
        self._indexed: set[m.ClassType | m.StructType] = set()

    def _index(self, t: m.ClassType | m.StructType | None) -> None:
        while t is not None and t not in self._indexed:
            self._indexed.add(t)
            if isinstance(t, m.StructType):
                names = [("field", f.name) for f in t.fields]
            else:
                names = [("var", p.name) for p in t.properties]
                names += [("fn", f.name) for f in t.methods]
                names += [("event", e.name) for e in t.events]
            for key in names:
                self._declarers.setdefault(key, set()).add(t)
            t = t.parent

    def declarer(self, parent: _Derived, kind: str, name: str) -> _Derived | None:
        """The nearest of ``parent`` and its ancestors that declares ``name`` as ``kind``
        (``var``, ``fn``, ``event`` of a class, ``field`` of a struct)."""
        self._index(parent)
        declarers = self._declarers.get((kind, name))
        current: _Derived | None = parent if declarers else None
        while current is not None and current not in declarers:  # type: ignore[operator]
            current = current.parent
        return current


class _Shared(Protocol):
    @property
    def settings(self) -> Settings: ...

    @property
    def inherited(self) -> InheritedNames: ...


class Resolver(Protocol):
    """What resolving a class needs of the resolver of its file
    (:class:`~sengen.stl.resolver.FileResolver`, which imports this module: by its class, the
    reference back would close an import cycle)."""

    @property
    def universe(self) -> _Shared: ...

    @property
    def source(self) -> SourceFile: ...

    def qualified(self, name: str) -> str: ...

    def common(self, stmt: Statement) -> tuple[str, str, str, m.Location]: ...

    def error(self, token: Token, message: str, notes: Sequence[Note] = ()) -> None: ...

    def warning(self, token: Token, message: str) -> None: ...

    def ref_error(self, ref: Ref, message: str) -> None: ...

    def location(self, token: Token) -> m.Location: ...

    def lookup(self, ref: Ref) -> m.Type | None: ...

    def suggestion(self, ref: Ref) -> str: ...

    def value_type(self, ref: Ref, not_found: str) -> m.Type | None: ...

    def class_parent(self, ref: Ref) -> m.ClassType | None: ...


class _Attributes:
    """The checked attributes of one member."""

    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.category: str | None = None
        self.transport: str | None = None
        self.tags: list[str] = []
        self.ok = True


class _ClassResolver:
    def __init__(self, resolver: Resolver, stmt: Statement) -> None:
        self.r = resolver
        self.stmt = stmt
        assert stmt.name is not None
        self.name = str(stmt.name)
        self.qualified = resolver.qualified(self.name)
        self.ok = True
        self.spec = f"Type '{self.qualified}': error in class '{self.name}' spec: "

    def resolve(self) -> m.ClassType | None:
        name, package, description, location = self.r.common(self.stmt)
        parent = self._parent()
        properties: list[m.Property] = []
        methods: list[m.Method] = []
        events: list[m.Event] = []
        own: dict[str, set[str]] = {"var": set(), "fn": set(), "event": set()}
        for member in self.stmt.members:
            if not self._member_name(member, own, parent):
                self.ok = False
            attributes = self._attributes(member)
            if not attributes.ok:
                # A mistyped attribute ('statc') changes what the member means: checking the
                # member without it would report a consequence (data loss) before the cause.
                self.ok = False
                continue
            if member.kind == "var":
                prop = self._property(member, attributes)
                if prop is not None:
                    properties.append(prop)
            elif member.kind == "fn":
                method = self._method(member, attributes)
                if method is not None:
                    methods.append(method)
            else:
                event = self._event(member, attributes)
                if event is not None:
                    events.append(event)
        if not self.ok:
            return None
        constructor = self._constructor(parent, properties)
        return m.ClassType(
            name,
            package,
            description,
            location,
            self.stmt.abstract,
            parent,
            tuple(properties),
            tuple(methods),
            tuple(events),
            constructor,
        )

    def _parent(self) -> m.ClassType | None:
        parent: m.ClassType | None = None
        extended = False
        for clause in self.stmt.parents:
            if clause.keyword.type == "IMPLEMENTS":
                self.r.error(
                    clause.keyword,
                    f"STL interfaces are not supported: 'implements {clause.type.text}' in "
                    f"class '{self.name}'",
                )
                self.ok = False
            elif extended:
                self.r.error(
                    clause.keyword,
                    "Cannot inherit from more than one class. Consider using interfaces.",
                )
                self.ok = False
            else:
                extended = True
                parent = self.r.class_parent(clause.type)
                if parent is None:
                    self.ok = False
        return parent

    def _member_name(
        self, member: Member, own: dict[str, set[str]], parent: m.ClassType | None
    ) -> bool:
        label = str(member.name)
        problem = member_name_error(label)
        if problem is not None:
            self.r.error(member.name, problem)
            return False
        names = own[member.kind]
        if label in names:
            self.r.error(member.name, self.spec + _REPEATED[member.kind].format(label))
            return False
        names.add(label)
        ancestor = (
            None
            if parent is None
            else self.r.universe.inherited.declarer(parent, member.kind, label)
        )
        if ancestor is not None:
            self.r.error(
                member.name,
                f"{self.spec}parent class {ancestor.qualified_name} already has "
                f"{_ARTICLE[member.kind]} named {label}",
            )
            return False
        return True

    def _attributes(self, member: Member) -> _Attributes:
        result = _Attributes()
        word = f"{_WORD[member.kind]} '{member.name}'"
        for attribute in member.attributes:
            label = str(attribute.name)
            if label == "tag" and member.kind == "var" and not attribute.is_bare:
                assert attribute.value is not None
                result.tags.append(str(attribute.value))
                continue
            if label not in _ALLOWED[member.kind] or attribute.value is not None:
                # Only a name no member kind knows is a typo: '[writable]' on a method is not.
                extra = "" if label in _KNOWN else suggest_attribute(label, _ALLOWED[member.kind])
                self.r.error(attribute.name, f"invalid attribute '{label}' for {word}{extra}")
                result.ok = False
                continue
            if label in result.flags or (label in _TRANSPORTS and result.transport is not None):
                self.r.error(attribute.name, f"repeated value for attribute '{label}'")
                result.ok = False
                continue
            if label in _CATEGORIES and result.category is not None:
                self.r.error(
                    attribute.name, f"conflicting attributes '{result.category}' and '{label}'"
                )
                result.ok = False
                continue
            result.flags.add(label)
            if label in _TRANSPORTS:
                result.transport = label
            elif label in _CATEGORIES:
                result.category = label
            elif label in ("checked", "deferred"):
                self.r.warning(attribute.name, _DEPRECATED.format(label))
        return result

    def _property(self, member: Member, attributes: _Attributes) -> m.Property | None:
        assert member.type is not None
        prop_type = self.r.value_type(member.type, f"expecting property type: '{member.type.text}'")
        if member.default is not None:
            self.r.warning(
                member.default, "default values for properties are not supported and are ignored"
            )
        category = (
            _CATEGORIES[attributes.category]
            if attributes.category is not None
            else m.PropertyCategory.DYNAMIC_RO
        )
        transport = (
            _TRANSPORTS[attributes.transport]
            if attributes.transport is not None
            else m.TransportMode.MULTICAST
        )
        if prop_type is None:
            self.ok = False
            return None
        if (
            not category.is_static
            and transport is not m.TransportMode.CONFIRMED
            and not m.is_bounded(prop_type)
        ):
            self.r.error(
                member.name,
                "unbounded dynamic properties with non-confirmed transport mode may cause data "
                "loss: add [confirmed], or give the type a bound",
            )
            self.ok = False
            return None
        label = str(member.name)
        checked = "checked" in attributes.flags or self.r.universe.settings.is_checked(
            self.qualified, label
        )
        return m.Property(
            label,
            prop_type,
            category,
            transport,
            tuple(attributes.tags),
            checked,
            member.description,
            self.r.location(member.name),
        )

    def _arguments(self, member: Member) -> tuple[m.Argument, ...] | None:
        ok = True
        seen: set[str] = set()
        arguments: list[m.Argument] = []
        docs: dict[str, str] = {}
        for doc in member.param_docs:
            note = self.r.source.note(doc.line, doc.column, "documented here")
            if doc.name in docs:
                self.r.error(
                    member.name, f"Parameter '{doc.name}' is documented more than once.", [note]
                )
                ok = False
            elif all(str(a.name) != doc.name for a in member.arguments):
                self.r.error(
                    member.name,
                    f"Documented parameter '{doc.name}' was not found in the argument list.",
                    [note],
                )
                ok = False
            docs.setdefault(doc.name, doc.text)
        for argument in member.arguments:
            label = str(argument.name)
            problem = member_name_error(label)
            if problem is not None:
                self.r.error(argument.name, problem)
                ok = False
            elif label in seen:
                self.r.error(
                    argument.name, f"Type '{self.qualified}': duplicated argument name '{label}'"
                )
                ok = False
            seen.add(label)
            arg_type = self.r.value_type(
                argument.type, f"invalid type for argument {label}: '{argument.type.text}'"
            )
            if arg_type is None:
                ok = False
                continue
            description = join_texts((argument.description, docs.get(label, "")))
            arguments.append(
                m.Argument(label, arg_type, description, self.r.location(argument.name))
            )
        if not ok:
            self.ok = False
            return None
        return tuple(arguments)

    def _method(self, member: Member, attributes: _Attributes) -> m.Method | None:
        label = str(member.name)
        arguments = self._arguments(member)
        return_type: m.Type | None = None
        valid_return = True
        if member.type is not None:
            found = self.r.lookup(member.type)
            if found is None:
                self.r.ref_error(
                    member.type,
                    f"invalid return type for method {label}: '{member.type.text}'"
                    + self.r.suggestion(member.type),
                )
                valid_return = False
            elif isinstance(found, m.VoidType):
                return_type = None
            else:
                return_type = self.r.value_type(member.type, "")
                valid_return = return_type is not None
        if arguments is None or not valid_return:
            self.ok = False
            return None
        transport = (
            _TRANSPORTS[attributes.transport]
            if attributes.transport is not None
            else m.TransportMode.CONFIRMED
        )
        deferred = "deferred" in attributes.flags or self.r.universe.settings.is_deferred(
            self.qualified, label
        )
        return m.Method(
            label,
            arguments,
            return_type,
            "const" in attributes.flags,
            "local" in attributes.flags,
            deferred,
            transport,
            member.description,
            self.r.location(member.name),
        )

    def _event(self, member: Member, attributes: _Attributes) -> m.Event | None:
        arguments = self._arguments(member)
        if arguments is None:
            return None
        transport = (
            _TRANSPORTS[attributes.transport]
            if attributes.transport is not None
            else m.TransportMode.MULTICAST
        )
        return m.Event(
            str(member.name),
            arguments,
            transport,
            member.description,
            self.r.location(member.name),
        )

    def _constructor(self, parent: m.ClassType | None, properties: list[m.Property]) -> m.Method:
        # The parent's constructor already lists its lineage's static properties: a walk over
        # every ancestor per class would be quadratic on deep inheritance.
        inherited = parent.constructor.arguments if parent is not None else ()
        arguments = inherited + tuple(
            m.Argument(p.name, p.type, p.description, p.location)
            for p in properties
            if p.category is m.PropertyCategory.STATIC_RW
        )
        assert self.stmt.name is not None
        return m.Method(
            f"constructor{self.name}",
            arguments,
            None,
            False,
            False,
            False,
            m.TransportMode.CONFIRMED,
            "constructor",
            self.r.location(self.stmt.name),
        )


def resolve_class(resolver: Resolver, stmt: Statement) -> m.ClassType | None:
    return _ClassResolver(resolver, stmt).resolve()
