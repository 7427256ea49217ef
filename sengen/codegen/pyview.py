"""The Python view of the model that templates render: where each STL file lands, how a type is
spelled from a given module, and the imports a module needs (codegen.md §1, §5).

Rendering a module's body records every module it refers to, so the module imports exactly
what it uses. Cross-module references go through private aliases built from the dotted path
(``_sen__kernel__basic_types``); imports inside the generated tree are relative.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from sengen.codegen.naming import python_name, snake_case
from sengen.codegen.typehash import TypeHasher
from sengen.stl import model as m

_NATIVE_ANNOTATIONS = {
    **{n: "int" for n in ("u8", "u16", "u32", "u64", "i16", "i32", "i64")},
    "f32": "float",
    "f64": "float",
    "bool": "bool",
    "string": "str",
    "Duration": "_rt.Duration",
    "TimeStamp": "_rt.TimeStamp",
}
# The runtime's metadata constant of each native type.
NATIVE_META = {
    "u8": "_rt.U8",
    "u16": "_rt.U16",
    "u32": "_rt.U32",
    "u64": "_rt.U64",
    "i16": "_rt.I16",
    "i32": "_rt.I32",
    "i64": "_rt.I64",
    "f32": "_rt.F32",
    "f64": "_rt.F64",
    "bool": "_rt.BOOL",
    "string": "_rt.STRING",
    "Duration": "_rt.DURATION",
    "TimeStamp": "_rt.TIMESTAMP",
}
STANDARD_IMPORTS = {
    "_abc": "import abc as _abc",
    "_dc": "import dataclasses as _dc",
    "_enum": "import enum as _enum",
    "_t": "import typing as _t",
    "_rt": "from sengen.runtime import abi as _rt",
}


def module_name(stem: str) -> str:
    """The module of an STL file: its stem with ``.`` and ``-`` replaced by ``_``."""
    return python_name(stem.replace(".", "_").replace("-", "_"), "module")


def package_path(package: str) -> tuple[str, ...]:
    return tuple(python_name(segment, "module") for segment in package.split(".") if segment)


@dataclass(frozen=True, slots=True)
class ModulePlace:
    """Where a file's module lives: ``package`` segments below the root, then ``name``.
    ``external`` is the absolute Python package of an ``external-packages`` STL package."""

    package: tuple[str, ...]
    name: str
    external: str | None = None

    @property
    def alias(self) -> str:
        return "_" + "__".join((*self.package, self.name))

    @property
    def relative_file(self) -> str:
        return "/".join((*self.package, self.name)) + ".py"


class Layout:
    """The module of every file of the program, generated or external."""

    def __init__(self, program: m.Program, external: Mapping[str, str]) -> None:
        self.places: dict[str, ModulePlace] = {}
        self.files: dict[Path, ModulePlace] = {}
        self.hasher = TypeHasher()
        for stl_file in program.files:
            name = module_name(stl_file.path.name.removesuffix(".stl").removesuffix(".xml"))
            place = ModulePlace(
                package_path(stl_file.package), name, external.get(stl_file.package)
            )
            self.files[stl_file.path] = place
            for t in stl_file.types:
                self.places[t.qualified_name] = place
        self.generated = [f for f in program.files if f.package not in external]

    def place(self, t: m.UserType) -> ModulePlace:
        return self.places[t.qualified_name]


class ModuleView:
    """Rendering state of one module: its place and the imports its body used."""

    def __init__(self, layout: Layout, place: ModulePlace) -> None:
        self.layout = layout
        self.place = place
        self._used: dict[str, str] = {}

    # -- imports ----------------------------------------------------------------------------------

    def use(self, alias: str) -> str:
        """Record a standard or runtime alias (``_t``, ``_rt``, …) and return it."""
        self._used[alias] = STANDARD_IMPORTS[alias]
        return alias

    def _module_of(self, t: m.UserType) -> str | None:
        """The alias to reach ``t``'s module, or None when ``t`` is declared in this one."""
        target = self.layout.place(t)
        if target == self.place:
            return None
        if target.external is not None:
            line = f"from {target.external} import {target.name} as {target.alias}"
        else:
            line = self._relative(target)
        self._used[target.alias] = line
        return target.alias

    def _relative(self, target: ModulePlace) -> str:
        if target.package == self.place.package:
            return f"from . import {target.name} as {target.alias}"
        dots = "." * (len(self.place.package) + 1)
        return f"from {dots}{'.'.join(target.package)} import {target.name} as {target.alias}"

    def imports(self) -> list[str]:
        """The import lines in isort's sections: the standard library, then absolute imports
        (the runtime, external packages), then the tree's relative imports; a blank line
        (an empty string) between sections."""
        lines = sorted(set(self._used.values()))
        standard = [line for line in lines if line.startswith("import ")]
        relative = [line for line in lines if line.startswith("from .")]
        absolute = [line for line in lines if line not in standard and line not in relative]
        sections = [section for section in (standard, absolute, relative) if section]
        return [line for section in sections for line in (*section, "")][:-1]

    # -- spelling types ---------------------------------------------------------------------------

    def qualified(self, t: m.UserType, name: str | None = None) -> str:
        module = self._module_of(t)
        local = name if name is not None else t.name
        return local if module is None else f"{module}.{local}"

    def annotation(self, t: m.Type | None) -> str:
        """The Python annotation of a type reference (None: void)."""
        if t is None or isinstance(t, m.VoidType):
            return "None"
        if isinstance(t, m.NativeType):
            name = _NATIVE_ANNOTATIONS[t.name]
            if name.startswith("_rt."):
                self.use("_rt")
            return name
        assert isinstance(t, m.UserType)
        return self.qualified(t)

    def declared(self, t: m.UserType) -> str:
        """The right-hand side of an alias-like type's ``TypeAlias`` declaration."""
        if isinstance(t, m.SequenceType | m.ArrayType):
            if is_bytes(t):
                return "bytes"
            return f"tuple[{self.annotation(t.element)}, ...]"
        if isinstance(t, m.OptionalType):
            return f"{self.annotation(t.target)} | None"
        if isinstance(t, m.QuantityType):
            return f"{self.use('_t')}.Annotated[{self.annotation(t.value_type)}, META_{t.name}]"
        assert isinstance(t, m.AliasType)
        return f"{self.use('_t')}.Annotated[{self.annotation(t.target)}, META_{t.name}]"

    def meta(self, t: m.Type | None) -> str:
        """The expression of a type's runtime metadata."""
        if t is None or isinstance(t, m.VoidType):
            return "None"
        if isinstance(t, m.NativeType):
            return self.use("_rt") and NATIVE_META[t.name]
        assert isinstance(t, m.UserType)
        if isinstance(t, m.StructType | m.VariantType | m.ClassType):
            return self.qualified(t) + ".META"
        return self.qualified(t, f"META_{t.name}")

    def type_hash(self, t: m.Type) -> str:
        return f"0x{self.layout.hasher.hash(t):016X}"


def is_bytes(t: m.SequenceType | m.ArrayType) -> bool:
    """A sequence or array whose element is exactly native ``u8`` is ``bytes``."""
    return isinstance(t.element, m.NativeType) and t.element.name == "u8"


def member(name: str) -> str:
    """The Python name of a property or method; derived names use :func:`snake_case`."""
    return python_name(snake_case(name), "member")


def optional_of_optional(t: m.OptionalType) -> bool:
    return isinstance(m.unaliased(t.target), m.OptionalType)
