"""Resolution of one file: statements in order, names to types, every declaration check.

Files are resolved in one pass in statement order (spec stl.md §4.1): a type is visible only
after its declaration or after the import that brings it. Imports are delegated to the loader,
which loads (and resolves) the imported file at that point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lark import Token

from sengen.diagnostics import Diagnostic, Note, Severity
from sengen.stl import model as m
from sengen.stl.classes import InheritedNames, resolve_class
from sengen.stl.names import member_name_error, type_name_error
from sengen.stl.settings import Settings
from sengen.stl.source import SourceFile
from sengen.stl.suggest import suggest_type
from sengen.stl.syntax import Ref, Statement
from sengen.stl.units import find_unit, suggest_unit


class _InvalidType(m.Type):
    """Stands for a declaration that failed, so that its uses are not reported again."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return "<invalid>"


INVALID = _InvalidType()

_ENUM_STORAGE = ("u8", "u16", "u32", "u64", "i16", "i32", "i64")


@dataclass(eq=False)
class FileScope:
    """What one file declares and sees while (and after) it is resolved."""

    path: Path
    source: SourceFile
    root: Path
    chain: tuple[Note, ...]
    package: str = ""
    package_token: Token | None = None
    simple: dict[str, m.Type] = field(default_factory=dict)
    qualified: dict[str, m.Type] = field(default_factory=dict)
    types: list[m.UserType] = field(default_factory=list)
    direct: list[FileScope] = field(default_factory=list)
    closure: list[FileScope] = field(default_factory=list)
    imports: list[Path] = field(default_factory=list)
    failed: bool = False

    def add_import(self, other: FileScope) -> None:
        if other not in self.direct:
            self.direct.append(other)
            self.imports.append(other.path)
        for scope in (other, *other.closure):
            if scope is not self and scope not in self.closure:
                self.closure.append(scope)


# Names compared for "did you mean" in one run: each suggestion compares the reference with every
# visible name, so thousands of unresolved references among thousands of names (a file written
# in the wrong order) took minutes; past the budget the errors come without a suggestion.
SUGGESTION_BUDGET = 100_000


class Universe:
    """The run-wide state that every file's resolver shares."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.inherited = InheritedNames()
        self.suggestion_budget = SUGGESTION_BUDGET
        self.declared: dict[str, tuple[FileScope, Token]] = {}
        self.by_simple: dict[str, list[m.UserType]] = {}
        self.diagnostics: list[Diagnostic] = []


ImportHandler = Callable[["FileScope", Token], "FileScope | None"]


def _common_prefix(a: str, b: str) -> str:
    common: list[str] = []
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x != y:
            break
        common.append(x)
    return ".".join(common)


class FileResolver:
    def __init__(self, universe: Universe, scope: FileScope, on_import: ImportHandler) -> None:
        self.universe = universe
        self.scope = scope
        self.source = scope.source
        self.on_import = on_import

    # --- diagnostics -----------------------------------------------------------------------

    def _report(
        self,
        severity: Severity,
        token: Token,
        message: str,
        length: int | None = None,
        notes: Sequence[Note] = (),
    ) -> None:
        size = length if length is not None else len(str(token))
        if token.type == "STRING":
            size = (token.end_pos or 0) - (token.start_pos or 0)
        self.universe.diagnostics.append(
            self.source.diagnostic(
                severity,
                token.line or 1,
                token.column or 1,
                message,
                max(size, 1),
                (*notes, *self.scope.chain),
            )
        )
        if severity is Severity.ERROR:
            self.scope.failed = True

    def error(self, token: Token, message: str, notes: Sequence[Note] = ()) -> None:
        self._report(Severity.ERROR, token, message, notes=notes)

    def warning(self, token: Token, message: str) -> None:
        self._report(Severity.WARNING, token, message)

    def ref_error(self, ref: Ref, message: str) -> None:
        self._report(Severity.ERROR, ref.first, message, ref.length)

    def location(self, token: Token) -> m.Location:
        return m.Location(
            self.scope.path.as_posix(), self.source.display, token.line or 1, token.column or 1
        )

    # --- statements ------------------------------------------------------------------------

    def resolve(self, statements: Sequence[Statement]) -> None:
        for stmt in statements:
            if stmt.kind == "import":
                assert stmt.path is not None
                imported = self.on_import(self.scope, stmt.path)
                if imported is None:
                    self.scope.failed = True
                    return  # §4.2.6: the rest of the file is not resolved
                self.scope.add_import(imported)
            elif stmt.kind == "package":
                self._package(stmt)
            else:
                self._declaration(stmt)

    def _package(self, stmt: Statement) -> None:
        assert stmt.package is not None
        if self.scope.package_token is not None:
            self.error(
                stmt.package.first,
                f"package name is already defined as '{self.scope.package}' in file "
                f"'{self.source.display}'",
                [
                    self.source.note(
                        self.scope.package_token.line or 1,
                        self.scope.package_token.column or 1,
                        "first package statement",
                    )
                ],
            )
            return
        self.scope.package = stmt.package.text
        self.scope.package_token = stmt.package.first

    def _declaration(self, stmt: Statement) -> None:
        assert stmt.name is not None
        name = str(stmt.name)
        valid = self._declared_name(stmt)
        builder = getattr(self, f"_{stmt.kind}")
        built: m.UserType | None = builder(stmt)
        self._register(stmt.name, name, built if valid else None)

    def _declared_name(self, stmt: Statement) -> bool:
        assert stmt.name is not None
        name = str(stmt.name)
        if stmt.kind == "interface":
            self.error(stmt.name, f"STL interfaces are not supported: '{name}'")
            return False
        problem = type_name_error(name)
        if problem is not None:
            self.error(stmt.name, problem)
            return False
        if self.scope.package_token is None:
            self.error(stmt.name, "please specify the package before defining a type")
            return False
        qualified = self.qualified(name)
        first = self.universe.declared.get(qualified)
        if first is not None:
            scope, token = first
            self.error(
                stmt.name,
                f"There is already a type named '{qualified}'",
                [
                    scope.source.note(
                        token.line or 1, token.column or 1, "first declared here", len(str(token))
                    )
                ],
            )
            return False
        self.universe.declared[qualified] = (self.scope, stmt.name)
        if name in m.NATIVES:
            self.warning(
                stmt.name, f"type '{name}' is shadowed by the built-in type of the same name"
            )
        return True

    def qualified(self, name: str) -> str:
        return f"{self.scope.package}.{name}" if self.scope.package else name

    def _register(self, token: Token, name: str, built: m.UserType | None) -> None:
        qualified = self.qualified(name)
        value: m.Type = built if built is not None else INVALID
        self.scope.simple.setdefault(name, value)
        self.scope.qualified.setdefault(qualified, value)
        if built is not None:
            self.scope.types.append(built)
            self.universe.by_simple.setdefault(name, []).append(built)

    def common(self, stmt: Statement) -> tuple[str, str, str, m.Location]:
        assert stmt.name is not None
        return str(stmt.name), self.scope.package, stmt.description, self.location(stmt.name)

    # --- lookup ----------------------------------------------------------------------------

    def lookup(self, ref: Ref) -> m.Type | None:
        """§5: the first hit wins; None when nothing is found."""
        text = ref.text
        if text == "void":
            return m.VOID
        if "." in text:
            for scope in (self.scope, *self.scope.closure):
                hit = scope.qualified.get(text)
                if hit is not None:
                    return hit
        else:
            native = m.NATIVES.get(text)
            if native is not None:
                return native
            hit = self.scope.simple.get(text)
            if hit is not None:
                return hit
        package = self.scope.package
        for imported in self.scope.direct:
            if imported.package == package:
                hit = imported.simple.get(text) or imported.qualified.get(text)
                if hit is not None:
                    return hit
            prefix = _common_prefix(imported.package, package)
            if prefix:
                hit = imported.qualified.get(f"{prefix}.{text}")
                if hit is not None:
                    return hit
        return None

    def _not_found(self, ref: Ref, message: str) -> None:
        elsewhere = self.universe.by_simple.get(str(ref.last), [])
        if elsewhere:
            found = elsewhere[0]
            visible = {s.path.as_posix() for s in (self.scope, *self.scope.closure)}
            if found.location.path in visible:
                advice = f"write its qualified name '{found.qualified_name}'"
            else:
                advice = f"import '{found.location.file}', which declares '{found.qualified_name}'"
            message += f": {advice}"
        else:
            message += self.suggestion(ref)
        self.ref_error(ref, message)

    def suggestion(self, ref: Ref) -> str:
        """`` (did you mean 'x'?)`` for a reference that was not found, or ``""``; none once
        the run's budget of compared names is spent (see :data:`SUGGESTION_BUDGET`)."""
        names = self._visible_names(ref.text)
        if self.universe.suggestion_budget < len(names):
            return ""
        self.universe.suggestion_budget -= len(names)
        return suggest_type(ref.text, names)

    def _visible_names(self, text: str) -> list[str]:
        """The declared names that :meth:`lookup` would find, spelled as ``text`` is (dotted or
        not), for suggesting one in place of a reference that was not found."""
        if "." in text:
            return [name for s in (self.scope, *self.scope.closure) for name in s.qualified]
        names = list(self.scope.simple)
        package = self.scope.package
        for imported in self.scope.direct:
            if imported.package == package:
                names += imported.simple
            prefix = _common_prefix(imported.package, package)
            if prefix:
                names += [
                    name.removeprefix(f"{prefix}.")
                    for name in imported.qualified
                    if name.startswith(f"{prefix}.")
                ]
        return names

    def value_type(self, ref: Ref, not_found: str) -> m.Type | None:
        """A reference in a value position; None when invalid (and reported unless inherited)."""
        found = self.lookup(ref)
        if found is None:
            self._not_found(ref, not_found)
            return None
        if found is INVALID:
            return None
        if isinstance(found, m.VoidType):
            self.ref_error(ref, "'void' can only be used as a method return type")
            return None
        if isinstance(found, m.ClassType):
            self.ref_error(ref, f"{found.qualified_name} is not a value type")
            return None
        return found

    # --- declarations ----------------------------------------------------------------------

    def _struct(self, stmt: Statement) -> m.StructType | None:
        name, package, description, location = self.common(stmt)
        ok = True
        parent: m.StructType | None = None
        if stmt.target is not None:
            found = self.value_type(stmt.target, f"type '{stmt.target.text}' not found")
            if found is None:
                ok = False
            elif not isinstance(found, m.StructType):
                self.ref_error(
                    stmt.target,
                    f"parent of struct {name} of type '{stmt.target.text}' is not a struct",
                )
                ok = False
            else:
                parent = found
        qualified = self.qualified(name)
        fields: list[m.Field] = []
        seen: set[str] = set()
        for element in stmt.elements:
            assert element.name is not None and element.type is not None
            field_name = str(element.name)
            problem = member_name_error(field_name)
            if problem is not None:
                self.error(element.name, problem)
                ok = False
            elif field_name in seen:
                self.error(
                    element.name, f"Type '{qualified}': repeated struct field name '{field_name}'"
                )
                ok = False
            elif (
                parent is not None
                and (owner := self.universe.inherited.declarer(parent, "field", field_name))
                is not None
            ):
                self.error(
                    element.name,
                    f"Type '{qualified}': parent structure '{owner.qualified_name}' already has "
                    f"a field named '{field_name}'",
                )
                ok = False
            seen.add(field_name)
            field_type = self.value_type(element.type, f"type not found: '{element.type.text}'")
            if field_type is None:
                ok = False
                continue
            fields.append(
                m.Field(field_name, field_type, element.description, self.location(element.name))
            )
        if not ok:
            return None
        return m.StructType(name, package, description, location, parent, tuple(fields))

    def _enum(self, stmt: Statement) -> m.EnumType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None and stmt.name is not None
        qualified = self.qualified(name)
        ok = True
        storage = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        if storage is not None and not (
            isinstance(storage, m.NativeType) and storage.name in _ENUM_STORAGE
        ):
            self.ref_error(
                stmt.target,
                "type is not numeric: enum storage must be u8, u16, u32, u64, i16, i32 or i64",
            )
            storage = None
        ok = storage is not None
        enumerators: list[m.Enumerator] = []
        keys: dict[str, int] = {}
        for key, element in enumerate(stmt.elements):
            assert element.name is not None
            label = str(element.name)
            problem = member_name_error(label)
            if problem is not None:
                self.error(element.name, problem)
                ok = False
            elif label in keys:
                self.error(
                    element.name,
                    f"Type '{qualified}': enumerators with keys {keys[label]} and {key} have "
                    f"the same name '{label}'",
                )
                ok = False
            keys.setdefault(label, key)
            enumerators.append(
                m.Enumerator(label, key, element.description, self.location(element.name))
            )
        if not stmt.elements:
            self.error(stmt.name, f"Type '{qualified}': no enumerators")
            ok = False
        if isinstance(storage, m.NativeType):
            capacity = 2 ** (storage.bits - 1) if storage.signed else 2**storage.bits
            if len(enumerators) > capacity:
                self.error(
                    stmt.name,
                    f"enum '{qualified}' has {len(enumerators)} enumerators, more than its "
                    f"storage type {storage.name} can represent",
                )
                ok = False
        if not ok or not isinstance(storage, m.NativeType):
            return None
        return m.EnumType(name, package, description, location, storage, tuple(enumerators))

    def _variant(self, stmt: Statement) -> m.VariantType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.name is not None
        ok = True
        alternatives: list[m.Alternative] = []
        seen: set[str] = set()
        for key, element in enumerate(stmt.elements):
            assert element.type is not None
            found = self.value_type(element.type, f"type not found: '{element.type.text}'")
            if found is None:
                ok = False
                continue
            if found.qualified_name in seen:
                self.ref_error(
                    element.type,
                    f"variant '{name}' contains type '{found.qualified_name}' more than once.",
                )
                ok = False
            seen.add(found.qualified_name)
            alternatives.append(
                m.Alternative(key, found, element.description, self.location(element.type.first))
            )
        if not stmt.elements:
            self.error(stmt.name, f"variant '{self.qualified(name)}' has no alternatives")
            ok = False
        if not ok:
            return None
        return m.VariantType(name, package, description, location, tuple(alternatives))

    def _size(self, stmt: Statement) -> tuple[bool, int | None]:
        if stmt.size is None:
            return True, None
        size = int(stmt.size)
        if not 0 <= size <= 4294967295:
            self.error(stmt.size, "size must be between 0 and 4294967295")
            return False, None
        if size == 0:
            self.warning(
                stmt.size,
                f"sequence or array '{self.qualified(str(stmt.name))}' of size 0 can hold "
                "no elements",
            )
        return True, size

    def _ignored_attributes(self, stmt: Statement) -> None:
        if stmt.attributes and stmt.attributes_open is not None:
            self.warning(
                stmt.attributes_open, "attributes on sequence and array declarations are ignored"
            )

    def _sequence(self, stmt: Statement) -> m.SequenceType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None
        element = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        size_ok, size = self._size(stmt)
        self._ignored_attributes(stmt)
        if element is None or not size_ok:
            return None
        return m.SequenceType(name, package, description, location, element, size)

    def _array(self, stmt: Statement) -> m.ArrayType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None
        element = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        size_ok, size = self._size(stmt)
        self._ignored_attributes(stmt)
        if element is None or not size_ok or size is None:
            return None
        return m.ArrayType(name, package, description, location, element, size)

    def _quantity(self, stmt: Statement) -> m.QuantityType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None and stmt.unit is not None and stmt.name is not None
        qualified = self.qualified(name)
        ok = True
        value = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        if value is not None and not (isinstance(value, m.NativeType) and value.is_numeric):
            self.ref_error(stmt.target, "type is not numeric")
            value = None
        unit_name = str(stmt.unit)
        unit = find_unit(unit_name)
        if unit is None:
            suggestion = suggest_unit(unit_name)
            extra = f" (did you mean '{suggestion}'?)" if suggestion else ""
            self.warning(
                stmt.unit, f"unknown unit '{unit_name}': the quantity is treated as unitless{extra}"
            )
        bounds: dict[str, float] = {}
        for attribute in stmt.attributes:
            attr = str(attribute.name)
            if attr not in ("min", "max"):
                self.warning(attribute.name, f"attribute '{attr}' is ignored on quantities")
                continue
            if attr in bounds:
                self.error(attribute.name, f"repeated value for attribute {attr}")
                ok = False
                continue
            if attribute.is_bare:
                self.error(attribute.name, f"attribute '{attr}' needs a value")
                ok = False
                continue
            assert attribute.value is not None
            if attribute.value.type not in ("INT", "REAL"):
                self.error(attribute.name, f"expecting a numeric value for attribute '{attr}'")
                ok = False
                continue
            bounds[attr] = float(str(attribute.value))
        minimum, maximum = bounds.get("min"), bounds.get("max")
        if minimum is not None and maximum is not None and minimum > maximum:
            self.error(
                stmt.name, f"Type '{qualified}': minimum value is greater than maximum value"
            )
            ok = False
        if isinstance(value, m.NativeType):
            low, high = value.value_range
            for label, bound in (("minimum", minimum), ("maximum", maximum)):
                if bound is not None and not low <= bound <= high:
                    self.error(
                        stmt.name,
                        f"Type '{qualified}': {label} value ({bound!r}) cannot be represented "
                        f"using {value.name}",
                    )
                    ok = False
        if not ok or not isinstance(value, m.NativeType):
            return None
        return m.QuantityType(
            name, package, description, location, value, unit_name, unit, minimum, maximum
        )

    def _alias(self, stmt: Statement) -> m.AliasType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None
        target = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        if target is None:
            return None
        return m.AliasType(name, package, description, location, target)

    def _optional(self, stmt: Statement) -> m.OptionalType | None:
        name, package, description, location = self.common(stmt)
        assert stmt.target is not None
        target = self.value_type(stmt.target, f"type not found: '{stmt.target.text}'")
        if target is None:
            return None
        return m.OptionalType(name, package, description, location, target)

    def _interface(self, stmt: Statement) -> None:
        return None  # refused in _declared_name; its body is not checked

    def _class(self, stmt: Statement) -> m.ClassType | None:
        return resolve_class(self, stmt)

    def class_parent(self, ref: Ref) -> m.ClassType | None:
        """A class-parent reference; None when invalid (reported unless already invalid)."""
        found = self.lookup(ref)
        if found is None:
            self._not_found(ref, f"expecting a valid parent type for class: '{ref.text}'")
            return None
        if found is INVALID:
            return None
        if not isinstance(found, m.ClassType):
            self.ref_error(ref, f"{found.qualified_name} is not a class type")
            return None
        return found
