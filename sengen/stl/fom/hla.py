"""The synthetic ``hla`` file (fom.md §7.1): ``hla.ObjectRoot`` and the native optionals."""

from __future__ import annotations

from pathlib import Path

from sengen.stl import model as m

# Names no real file: the hla file is never read from disk (§10.1).
HLA_PATH = Path("/nonexistent-sengen-fom/hla.stl")
HLA_DISPLAY = "hla.stl"
_NATIVE_OPTIONALS = ("u8 i16 u16 i32 u32 i64 u64 f32 f64 bool string TimeStamp Duration").split()


def optional_name(native: m.NativeType) -> str:
    """``MaybeI32``, ``MaybeString``, ``MaybeTimeStamp``: the native's name capitalised."""
    return "Maybe" + native.name[:1].upper() + native.name[1:]


def hla_types() -> list[m.UserType]:
    """The hla file's declarations, in order, located at line and column 0."""
    at = m.Location(HLA_PATH.as_posix(), HLA_DISPLAY, 0, 0)
    rti_id = m.Property(
        "rtiId",
        m.NATIVES["string"],
        m.PropertyCategory.DYNAMIC_RW,
        m.TransportMode.CONFIRMED,
        (),
        False,
        "HLA RTI object ID",
        at,
    )
    constructor = m.Method(
        "constructorObjectRoot", (), None, False, False, False, m.TransportMode.CONFIRMED,
        "constructor", at,
    )  # fmt: skip
    root = m.ClassType(
        "ObjectRoot",
        "hla",
        "HLA Base Class that contains the RTI object ID",
        at,
        False,
        None,
        (rti_id,),
        (),
        (),
        constructor,
    )
    optionals: list[m.UserType] = [
        m.OptionalType(optional_name(m.NATIVES[n]), "hla", "", at, m.NATIVES[n])
        for n in _NATIVE_OPTIONALS
    ]
    return [root, *optionals]
