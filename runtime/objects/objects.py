"""Objects: the interface root, native objects with their double buffers (runtime.md §3).

A property's current value lives in a plain slot under its Python name, so reading it is a slot
read. Assignment to property names is refused by a class-level ``__setattr__`` guard; the commit
writes the slots through their cached descriptors. Pending writes go to a per-object ``next``
dict and are flipped at the owner's commit, atomically per object (a per-object lock that
readers in other threads share), only where the value changed by STL equality.
"""

from __future__ import annotations

import functools
import operator
import threading
from abc import ABCMeta
from collections.abc import Callable, Mapping, Sequence
from time import sleep as _sleep
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from sengen.runtime.errors import CallDropped, ConstViolation, ObjectGone, SengenError
from sengen.runtime.objects import declare, values
from sengen.runtime.objects.addresses import object_name_problem
from sengen.runtime.objects.calls import Call, Promise, completed, failure, log_raised
from sengen.runtime.objects.checks import checks
from sengen.runtime.objects.context import CALLS, Context
from sengen.runtime.objects.duration import Duration
from sengen.runtime.objects.events import Connection, Events
from sengen.runtime.objects.meta import Category, ClassMeta, EventMeta, MethodMeta, PropertyMeta
from sengen.runtime.objects.suggest import did_you_mean

if TYPE_CHECKING:
    from typing import Self

T = TypeVar("T")
_get_ident = threading.get_ident
_object_setattr = object.__setattr__
_yield = functools.partial(_sleep, 0)


class ConfigError(SengenError, ValueError):
    """Problems of an object's configuration; ``problems`` holds one message each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class Prop:
    """A property of a generated class: its metadata, cached slot accessors, STL equality and
    check. ``key`` is the Python name."""

    __slots__ = (
        "accepts",
        "alone",
        "check",
        "deep",
        "eq",
        "get",
        "key",
        "meta",
        "nan",
        "set",
        "slot",
        "write",
    )

    def __init__(self, meta: PropertyMeta, descriptor: Any) -> None:
        self.meta = meta
        self.key = meta.py_name
        self.slot = descriptor
        self.get: Callable[[Any], Any] = descriptor.__get__
        self.set: Callable[[Any, Any], None] = descriptor.__set__
        self.eq = values.equality(meta.type)
        # The commit's STL equality without a call where ``==`` decides: ``deep`` is None for
        # the types whose equality is ``==``, except that two NaNs are equal where ``nan``.
        self.nan = self.eq is values.float_equal
        self.deep = None if self.nan or self.eq is operator.eq else self.eq
        self.check = values.checker(meta.type)
        self.accepts = _stem(meta.py_name) + "_accepts_set" if meta.checked else None
        self.alone = (self,)  # what a commit that changed only this property returns
        # ``set_next_<s>`` of an owner's view (:func:`_writer`), None in a proxy's.
        self.write: Callable[[NativeObject, Any], None] | None = None


def _writer(prop: Prop) -> Callable[[NativeObject, Any], None]:
    """``set_next_<s>`` of ``prop``: the owner's checks, then a pending write (the last one in
    a cycle wins). The hot path of every write, so what the property fixes (its check, its
    checked hook, its name) is bound here and :meth:`NativeObject._validate` is inlined."""
    check = prop.check
    passing = values.passing_classes(prop.meta.type)
    accepts = prop.accepts
    member = prop.meta.stl_name

    def write(self: NativeObject, value: Any) -> None:
        # The class first: most values pass by it, without a look at the switch.
        if type(value) not in passing and checks.enabled:
            try:
                check(value)
            except values.Invalid as error:
                raise self._rejected(prop, error) from None
        if accepts is not None:
            self._accept(prop, value)
        context = self._ctx_
        pending = self._next_
        if context is not None:
            if context.writer != _get_ident():
                self._guard_(member)  # a foreign thread or a [const] method, or unbound
            # In the context's dirty list exactly while something is pending.
            if not pending:
                context.dirty.append(self)
        pending[prop] = value

    return write


def _state_reader(dynamic: tuple[Prop, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """Every dynamic property's value as one tuple, read in C (``operator.attrgetter``)."""
    if len(dynamic) > 1:
        return operator.attrgetter(*(p.key for p in dynamic))
    if dynamic:
        get = dynamic[0].get
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _stem(py_name: str) -> str:
    """The unmangled snake name that derived names are built from (codegen.md §2.3): STL names
    never end in ``_``, so a trailing one is always the mangling."""
    return py_name[:-1] if py_name.endswith("_") else py_name


def object_id(address: str) -> int:
    """The deterministic 64-bit id of ``session.bus.name`` (runtime.md §3.2)."""
    # Loaded by the first id (at a publication, not per message): importing hashlib loads
    # OpenSSL, which a process that only imports generated code never needs.
    import hashlib

    return int.from_bytes(hashlib.blake2b(address.encode(), digest_size=8).digest(), "big")


def check_object_name(name: object) -> str:
    problem = object_name_problem(name) if isinstance(name, str) else "object names are strings"
    if problem is not None:
        raise ValueError(problem)
    assert isinstance(name, str)
    return name


class ObjectType(ABCMeta):
    """The metaclass of objects: it turns a generated class's declarations into what they imply
    (:mod:`declare`) before the class is made, since slots cannot be added afterwards.

    A generated interface says ``module=`` and holds the declarations: its ``ClassMeta`` is built
    from them. A class that lists such an interface next to a runtime base (``NativeObject``, a
    proxy) is its generated base or proxy: it gets the interface's slots and derived members.
    Anything else (an implementation, a class made from a description) is left as written."""

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        /,
        *,
        module: declare.Module | None = None,
        line: int = 0,
        hash: int = 0,
        abstract: bool = False,
        stl: str | None = None,
        events: type[Events] | None = None,
        **kwargs: Any,
    ) -> ObjectType:
        compiled = None
        interface = None
        if module is not None:
            parent: ClassMeta | None = getattr(bases[0], "META", None)
            event_metas = declare.events_of(events) if events is not None else ()
            meta = declare.class_meta(
                name,
                namespace,
                parent,
                event_metas,
                module=module,
                line=line,
                hash=hash,
                abstract=abstract,
                stl=stl,
            )
            derived = declare.interface_members(meta)
            namespace = {**derived, **namespace, "META": meta}
            namespace.setdefault("__slots__", ())
            if events is not None:
                namespace["_EVENTS"] = events
            if event_metas:
                # Shadowed by the slot of every instance; here for help() of the interface.
                namespace["events"] = property(doc=declare.events_doc(event_metas))
        else:
            interface = next((b for b in bases if "META" in vars(b) and _role(b) is None), None)
            role = _role(bases[0]) if bases else None
            if interface is not None and "META" not in namespace and role is not None:
                meta = vars(interface)["META"]
                if role == "base":
                    derived = declare.base_members(meta)
                    compiled = derived["__init__"]
                    namespace = {**derived, **namespace}
                namespace.setdefault("__slots__", declare.slots_of(meta))
                namespace["_STL_VIEW"] = True
                if events is not None:
                    namespace["_EVENTS"] = events
            else:
                interface = None
        cls = super().__new__(mcls, name, bases, namespace, **kwargs)
        if compiled is not None:
            declare.bind_class(compiled, cls)
            # Made once the class's Props exist (they hold its slots): each one is its
            # property's own write, without a lookup by name or a second call.
            props: dict[str, Prop] = vars(cls)["_PROPS"]
            for p in meta.properties:
                setter = f"set_next_{_stem(p.py_name)}"
                if p.dynamic and setter not in namespace:
                    write = props[p.py_name].write
                    assert write is not None  # an owner's view: NativeObject made it
                    setattr(cls, setter, declare.setter(p, write))
        if interface is not None:
            _add_view(interface, cls)
        return cls


def _role(cls: type) -> str | None:
    role: str | None = getattr(cls, "_ROLE_", None)
    return role


# The generated views of each interface, until all three exist and the class is registered.
_views: dict[type, dict[str, type]] = {}


def _add_view(interface: type, view: type) -> None:
    views = _views.setdefault(interface, {})
    views[str(_role(view))] = view
    if len(views) == 3:
        del _views[interface]
        declare.registrations.add_class(
            interface.__module__, interface, views["base"], views["local"], views["remote"]
        )


class Object(metaclass=ObjectType):
    """The root of every generated interface: what all views of an object share.

    An object's public names belong to its STL members (codegen.md §2.3), so the runtime's own
    members are underscored. Those that code outside the class hierarchy uses (the other object
    layer modules, the kernel, the transport, the shell) are ``_sunder_`` names, like enum's
    ``_value_``: no STL-derived name starts with ``_``, and they stay clear of an
    implementation's own ``_attributes``. A plain ``_name`` is used only by the class and its
    subclasses, generated ones included."""

    __slots__ = ()
    META: ClassVar[ClassMeta]
    _PROPS: ClassVar[dict[str, Prop]] = {}
    _DYNAMIC: ClassVar[tuple[Prop, ...]] = ()
    _STATE_: ClassVar[Callable[[Any], tuple[Any, ...]]]
    _EVENTS: ClassVar[type[Events]] = Events
    _ROLE_: ClassVar[str | None] = None  # "base", "local", "remote": see ObjectType

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_STL_VIEW" in cls.__dict__:
            # A property whose slot the class inherits keeps its parent view's Prop: pending
            # writes are keyed by Prop, and an inherited ``set_next_<s>`` writes its own.
            inherited = cls._PROPS
            props: dict[str, Prop] = {}
            for p in cls.META.all_properties:
                descriptor = getattr(cls, p.py_name)
                prop = inherited.get(p.py_name)
                if prop is None or prop.meta is not p or prop.slot is not descriptor:
                    prop = Prop(p, descriptor)
                props[p.py_name] = prop
            cls._PROPS = props
            cls._DYNAMIC = tuple(p for p in props.values() if p.meta.dynamic)
            cls._STATE_ = _state_reader(cls._DYNAMIC)  # read through the class: never bound

    def __setattr__(self, name: str, value: object) -> None:
        # Every attribute an implementation keeps pays for this guard, so it is kept short.
        if name in self._PROPS:
            raise AttributeError(
                f"property '{name}' of '{self.META.qualified_name}' cannot be assigned;"
                f" use set_next_{_stem(name)}() on the owner"
            )
        _object_setattr(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._PROPS:
            raise AttributeError(f"property '{name}' cannot be deleted")
        object.__delattr__(self, name)

    # -- identity -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def bus(self) -> str | None:
        raise NotImplementedError

    @property
    def _address_(self) -> str:
        """``session.bus.name`` (just the name while unpublished)."""
        return f"{self.bus}.{self.name}" if self.bus else self.name

    @property
    def id(self) -> int:
        return object_id(self._address_)

    @property
    def last_commit_time(self) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._address_}>"

    # -- what generated interface members call --------------------------------------------------

    def _on_changed_(self, key: str, callback: Callable[[Any], None]) -> Connection:
        raise NotImplementedError

    def _connect_event_(
        self, meta: EventMeta, callback: Callable[..., None], with_info: bool
    ) -> Connection:
        raise NotImplementedError

    def _send_call_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        raise NotImplementedError

    def _call_(
        self,
        stl_name: str,
        args: tuple[Any, ...],
        on_result: Callable[[Call[T]], None] | None,
        timeout: Duration | None,
    ) -> Call[T]:
        """An asynchronous method call: sent at the caller's commit, never blocking."""
        method = self.META.method(stl_name)
        assert method is not None
        if checks.enabled:
            try:
                _check_arguments(self.META, method, args)
            except ValueError as error:
                # An error result naming the argument, like any failed call (runtime.md §3.9).
                call: Call[T] = Call(f"{self._address_}.{stl_name}")
                if on_result is not None:
                    call.add_done_callback(on_result)
                completed(Context.current(), call, None, error)
                return call
        return self._dispatch(method, args, on_result, timeout)

    def _setter_call_(self, stl_name: str, value: Any) -> Call[None]:
        """``set_next_*`` through a proxy: a call that the owner executes in its drain."""
        prop = self.META.property(stl_name)
        assert prop is not None
        if not prop.writable:
            raise AttributeError(f"property '{stl_name}' of '{self._address_}' is not writable")
        return self._dispatch(prop, (value,), None, None)

    def _dispatch(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        on_result: Callable[[Call[T]], None] | None,
        timeout: Duration | None,
    ) -> Call[T]:
        call: Call[T] = Call(f"{self._address_}.{member.stl_name}")
        if on_result is not None:
            call.add_done_callback(on_result)
        caller = Context.current()
        if caller is not None:
            after = caller.call_timeout if timeout is None else timeout.ns
            if after is not None:
                call.deadline = caller.time + after
                caller.watch_deadline(call)
        self._send_call_(member, args, call, caller)
        return call


def _check_arguments(cls: ClassMeta, method: MethodMeta, args: tuple[Any, ...]) -> None:
    for arg, value in zip(method.args, args, strict=True):
        try:
            values.checker(arg.type)(value)
        except values.Invalid as error:
            where = f"{method.stl_name}.{arg.stl_name}"
            raise ValueError(
                values.describe(error, where, "argument", cls.qualified_name)
            ) from None


def dropped(component: str) -> CallDropped:
    return CallDropped(f"call dropped: work queue of component '{component}' is full")


def gone(address: str) -> ObjectGone:
    return ObjectGone(f"object '{address}' no longer exists")


def route_call(
    target: NativeObject,
    member: MethodMeta | PropertyMeta,
    args: tuple[Any, ...],
    call: Call[Any],
    caller: Context | None,
) -> None:
    """Hand a call to ``target``'s owner at the caller's commit (at once outside any cycle)."""

    def send() -> None:
        owner = target._ctx_
        if owner is None or target._removed_ or not owner.running:
            completed(caller, call, None, gone(target._address_))
        elif owner.limit:
            owner.push(
                CALLS,
                target._execute_,
                (member, args, call, caller),
                not member.transport.reliable,
                lambda: completed(caller, call, None, dropped(owner.name)),
            )
        else:
            owner.post(target._execute_, member, args, call, caller)

    if caller is None:
        send()
    else:
        caller.send_at_commit(send)


# The user classes subclassing a generated base, by ``<stl package>.<PythonClassName>``, in the
# order they were defined. Recorded here, where their creation is seen; the registry, which sits
# above the classes it catalogues, looks them up (:func:`implementations`).
_implementations: dict[str, list[type[NativeObject]]] = {}
_implementations_lock = threading.Lock()


def _add_implementation(cls: type[NativeObject]) -> None:
    package = cls.META.package
    name = f"{package}.{cls.__name__}" if package else cls.__name__
    with _implementations_lock:
        found = _implementations.setdefault(name, [])
        if cls not in found:
            found.append(cls)


def implementations() -> dict[str, list[type[NativeObject]]]:
    """The implementation classes defined so far, by registered name (a copy)."""
    with _implementations_lock:
        return {name: list(found) for name, found in _implementations.items()}


class NativeObject(Object):
    """The owner's own instance: double-buffered properties, events, method execution."""

    _ROLE_ = "base"

    __slots__ = (
        "__weakref__",
        "_bus",
        "_change_subs_",
        "_ctx_",
        "_emitted_",
        "_event_subs_",
        "_id_",
        "_name",
        "_next_",
        "_removed_",
        "_version_",
        "events",
    )
    _bus: str | None
    _change_subs_: dict[str, list[Connection]]
    _ctx_: Context | None
    _emitted_: list[tuple[EventMeta, tuple[Any, ...]]]  # emitted before registration
    _event_subs_: dict[str, list[Connection]]
    _id_: int | None  # ``id`` once published (a digest: the transport asks for it per object)
    _name: str
    _next_: dict[Prop, Any]  # the pending writes
    _removed_: bool
    _version_: list[int]  # [commit sequence, last commit time]; odd sequence: a commit is writing

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_STL_VIEW" in cls.__dict__:
            for prop in cls._PROPS.values():
                if prop.write is None:  # not inherited with its Prop
                    prop.write = _writer(prop)
        elif hasattr(cls, "META"):
            _add_implementation(cls)

    def __init__(self, name: str) -> None:
        cls = type(self)
        if cls.__dict__.get("_STL_VIEW") and cls.META.is_abstract:
            raise TypeError(
                f"class '{cls.META.qualified_name}' is abstract and cannot be instantiated"
            )
        setter = object.__setattr__
        setter(self, "_name", check_object_name(name))
        setter(self, "_bus", None)
        setter(self, "_ctx_", None)
        setter(self, "_next_", {})
        setter(self, "_emitted_", [])
        setter(self, "_change_subs_", {})
        setter(self, "_event_subs_", {})
        setter(self, "_id_", None)
        setter(self, "_removed_", False)
        setter(self, "_version_", [0, 0])
        # Zero values for everything; the constructor then sets the [static] ones.
        for prop in cls._PROPS.values():
            prop.set(self, values.zero(prop.meta.type))
        setter(self, "events", cls._EVENTS(self, cls.META.all_events))

    # -- construction from configuration ---------------------------------------------------------

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, object]) -> Self:
        """Build an object from configuration values keyed by STL property names (runtime.md
        §1.7). Every problem is collected into one :class:`ConfigError`."""
        meta = cls.META
        problems: list[str] = []
        statics: dict[str, Any] = {}
        dynamics: list[tuple[PropertyMeta, Any]] = []
        for key, raw in config.items():
            prop = meta.property(key)
            if prop is None:
                # Suggest only what a configuration may set: a read-only static would fail next.
                settable = [
                    p.stl_name for p in meta.all_properties if p.category is not Category.STATIC_RO
                ]
                problems.append(
                    f"did not find any property named '{key}' in class '{meta.qualified_name}'"
                    + did_you_mean(key, settable)
                )
            elif prop.category is Category.STATIC_RO:
                problems.append(
                    f"property '{key}' of class '{meta.qualified_name}' cannot be set from the"
                    " configuration"
                )
            else:
                try:
                    value = values.from_config(prop.type)(raw)
                except values.Invalid as error:
                    problems.append(_invalid_config(prop, raw, error))
                    continue
                if prop.category is Category.STATIC_RW:
                    statics[prop.py_name] = value
                else:
                    dynamics.append((prop, value))
        for prop in meta.all_properties:
            if prop.category is Category.STATIC_RW and prop.stl_name not in config:
                problems.append(
                    f"missing constructor argument '{prop.stl_name}' of type"
                    f" '{prop.type.qualified_name}' for creating object '{name}' of class"
                    f" '{meta.qualified_name}'"
                )
        if problems:
            raise ConfigError(problems)
        obj = cls(name=name, **statics)
        for prop, value in dynamics:
            slot = cls._PROPS[prop.py_name]
            try:
                obj._accept(slot, value)
            except ValueError as error:
                problems.append(str(error))
            slot.set(obj, value)
        if problems:
            raise ConfigError(problems)
        return obj

    # -- identity -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def bus(self) -> str | None:
        return self._bus

    @property
    def id(self) -> int:
        found = self._id_
        return found if found is not None else object_id(self._address_)

    @property
    def local_name(self) -> str:
        prefix = self._ctx_.name if self._ctx_ is not None else ""
        return f"{prefix}.{self._address_}" if prefix else self._address_

    @property
    def last_commit_time(self) -> int:
        return self._version_[1]

    # -- lifecycle hooks: the implementation overrides them ---------------------------------------

    def update(self, api: Any) -> None:
        """Called every cycle of the owner, after its drain."""

    def registered(self, api: Any) -> None:
        """Called when the object is added to a bus."""

    def unregistered(self, api: Any) -> None:
        """Called when the object is removed from its bus."""

    # -- registration (driven by the kernel) -----------------------------------------------------

    def _bind_(
        self, context: Context, bus: str, time: int, api: Any = None, ident: int | None = None
    ) -> None:
        """Publish on ``bus`` owned by ``context``: the ``registered`` hook runs, then the
        initial state (constructor, configuration and pending values) becomes current."""
        if self._ctx_ is not None:
            raise ValueError(f"object '{self.name}' is already registered on '{self._bus}'")
        setter = object.__setattr__
        setter(self, "_ctx_", context)
        setter(self, "_bus", bus)
        setter(self, "_id_", object_id(f"{bus}.{self._name}") if ident is None else ident)
        self._version_[1] = time
        context.own(self)
        # Subscriptions made before registration had no context yet: they belong to the owner.
        for table in (self._change_subs_, self._event_subs_):
            for subscriptions in table.values():
                for subscription in subscriptions:
                    if subscription.context is None:
                        subscription.context = context
        self.registered(api)
        pending = self._next_
        for prop, value in pending.items():
            prop.set(self, value)
        pending.clear()
        if self._emitted_:  # dispatched at the owner's first commit
            context.emissions.extend((self, meta, args) for meta, args in self._emitted_)
            self._emitted_.clear()

    def _unbind_(self, api: Any = None) -> None:
        """Remove from the bus: the ``unregistered`` hook runs; later calls fail."""
        context = self._ctx_
        if context is None or self._removed_:
            return
        object.__setattr__(self, "_removed_", True)
        context.disown(self)
        self.unregistered(api)
        self._change_subs_.clear()
        self._event_subs_.clear()

    # -- the double buffer ------------------------------------------------------------------------

    def _guard_(self, member: str) -> None:
        context = self._ctx_
        if context is None:
            return
        if context.thread is not None and context.thread != _get_ident():
            raise RuntimeError(
                f"property '{member}' of '{self._address_}' written from a foreign thread"
            )
        if context.const_member is not None:
            raise ConstViolation(
                f"const method '{context.const_member}' tried to change '{member}'"
            )

    def _set_next(self, key: str, value: Any) -> None:
        """``set_next_<s>`` by the property's Python name (:func:`_writer`)."""
        write = self._PROPS[key].write
        assert write is not None  # every Prop of an owner's view has one
        write(self, value)

    def _validate(self, prop: Prop, value: Any) -> None:
        """The owner's checks on a write: the value's type when checks are on, the checked
        hook always."""
        if checks.enabled:
            try:
                prop.check(value)
            except values.Invalid as error:
                raise self._rejected(prop, error) from None
        if prop.accepts is not None:
            self._accept(prop, value)

    def _rejected(self, prop: Prop, error: values.Invalid) -> ValueError:
        owner = self.META.qualified_name
        return ValueError(values.describe(error, prop.meta.stl_name, "property", owner))

    def _accept(self, prop: Prop, value: Any) -> None:
        if prop.accepts is not None and not getattr(self, prop.accepts)(value):
            raise ValueError(f"invalid value for property {prop.meta.stl_name}")

    def _get_next(self, key: str) -> Any:
        prop = self._PROPS[key]
        pending = self._next_
        return pending[prop] if prop in pending else prop.get(self)

    def _set_static(self, key: str, value: Any) -> None:
        """``set_<s>`` of a ``[static_no_config]`` property: immediate, before registration."""
        if self._ctx_ is not None:
            stl_name = self._PROPS[key].meta.stl_name
            raise RuntimeError(f"static property '{stl_name}' cannot change after registration")
        prop = self._PROPS[key]
        self._validate(prop, value)
        prop.set(self, value)

    def _init_static(self, key: str, value: Any) -> None:
        """A constructor argument: checked like a write, then stored."""
        prop = self._PROPS[key]
        self._validate(prop, value)
        prop.set(self, value)

    def _commit_(self, time: int) -> Sequence[Prop] | None:
        """Flip the pending values that differ from current; returns the properties that
        changed. (Events are dispatched by the context, :meth:`Context.flip`, which also flips
        a single pending value itself: this is the general case.)"""
        pending = self._next_
        if not pending:
            return None
        version = self._version_
        changed: list[Prop] = []
        for prop, value in pending.items():
            if not prop.eq(value, getattr(self, prop.key)):  # getattr: in C
                if not changed:
                    version[0] += 1  # odd: readers in other threads retry (a seqlock)
                prop.set(self, value)
                changed.append(prop)
        pending.clear()
        if not changed:
            return None
        version[1] = time
        version[0] += 1
        subscriptions = self._change_subs_
        if subscriptions:
            for prop in changed:
                for subscription in subscriptions.get(prop.key, ()):
                    subscription.deliver((prop.get(self),))
        return changed

    def _snapshot_(self) -> tuple[int, int, tuple[Any, ...]]:
        """The committed state for readers in other threads: (sequence, time, values), all
        from one commit. The owner's commit makes the sequence odd while it writes; a reader
        that saw it odd, or saw it move, reads again."""
        version = self._version_
        for attempt in range(1_000_000):
            before = version[0]
            if not before & 1:
                state = type(self)._STATE_(self)
                time = version[1]
                if version[0] == before:
                    return before, time, state
            if attempt % 16 == 15:
                _yield()
        raise RuntimeError(f"no stable state of '{self._address_}': its owner never finished")

    # -- subscriptions ----------------------------------------------------------------------------

    def _subscribe(
        self, table: dict[str, list[Connection]], key: str, subscription: Connection
    ) -> Connection:
        table.setdefault(key, []).append(subscription)
        return subscription

    def _on_changed_(self, key: str, callback: Callable[[Any], None]) -> Connection:
        connection = Connection(self._ctx_, callback, self._unsubscribe_change)
        connection.droppable = not self._PROPS[key].meta.transport.reliable
        return self._subscribe(self._change_subs_, key, connection)

    def _connect_event_(
        self, meta: EventMeta, callback: Callable[..., None], with_info: bool
    ) -> Connection:
        return self._connect_event_from_(Context.current() or self._ctx_, meta, callback, with_info)

    def _connect_event_from_(
        self,
        context: Context | None,
        meta: EventMeta,
        callback: Callable[..., None],
        with_info: bool,
    ) -> Connection:
        """Subscribe ``context`` to an event: its callbacks run in that context's drains."""
        subscription = Connection(context, callback, self._unsubscribe_event, with_info)
        subscription.droppable = not meta.transport.reliable
        return self._subscribe(self._event_subs_, meta.stl_name, subscription)

    def _unsubscribe_change(self, subscription: Connection) -> None:
        _discard(self._change_subs_, subscription)

    def _unsubscribe_event(self, subscription: Connection) -> None:
        _discard(self._event_subs_, subscription)

    # -- calls ------------------------------------------------------------------------------------

    def _send_call_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        route_call(self, member, args, call, caller)

    def _execute_(
        self,
        member: MethodMeta | PropertyMeta,
        args: tuple[Any, ...],
        call: Call[Any],
        caller: Context | None,
    ) -> None:
        """Run an arrived call in the owner's drain; its result is sent at the owner's commit."""
        context = self._ctx_
        assert context is not None

        def reply(value: Any, error: BaseException | None) -> None:
            context.send_at_commit(lambda: completed(caller, call, value, error))

        if self._removed_:
            reply(None, gone(self._address_))
            return
        if isinstance(member, PropertyMeta):
            self._execute_setter(member, args[0], reply)
            return
        implementation = getattr(self, _stem(member.py_name) + "_impl")
        if member.deferred:
            promise: Promise[Any] = Promise(call.label, reply)
            try:
                implementation(*args, promise)
            except Exception as error:
                log_raised(call, context, caller, error)
                if not promise.settled:
                    promise.set_exception(error)
            return
        if member.constant:
            context.const_member = member.stl_name
        try:
            value = implementation(*args)
            if checks.enabled and member.return_type is not None:
                values.checker(member.return_type)(value)
        except values.Invalid as error:
            where = f"{member.stl_name} result"
            reply(
                None,
                failure(
                    ValueError(values.describe(error, where, "method", self.META.qualified_name))
                ),
            )
        except Exception as error:
            log_raised(call, context, caller, error)
            reply(None, failure(error))
        else:
            reply(value, None)
        finally:
            context.const_member = None

    def _execute_setter(
        self, prop: PropertyMeta, value: Any, reply: Callable[[Any, BaseException | None], None]
    ) -> None:
        """A proxy's setter call: always validated here, checked hook included."""
        slot = self._PROPS[prop.py_name]
        try:
            if not checks.enabled:  # _set_next checks only while they are on
                try:
                    slot.check(value)
                except values.Invalid as error:
                    owner = self.META.qualified_name
                    raise ValueError(
                        values.describe(error, prop.stl_name, "property", owner)
                    ) from None
            self._set_next(slot.key, value)
        except Exception as error:
            reply(None, failure(error))
        else:
            reply(None, None)


def _invalid_config(prop: PropertyMeta, raw: object, error: values.Invalid) -> str:
    text = f"invalid value for property '{prop.stl_name}': expected {prop.type.qualified_name}"
    text += f", got {values.show(raw)}"
    detail = ".".join(error.path)
    if error.message and not error.message.startswith("expected "):
        text += f" ({detail + ': ' if detail else ''}{error.message})"
    elif detail:
        text += f" ({detail}: {error.message})"
    return text


def _discard(table: dict[str, list[Connection]], subscription: Connection) -> None:
    for subscriptions in table.values():
        if subscription in subscriptions:
            subscriptions.remove(subscription)
            return
