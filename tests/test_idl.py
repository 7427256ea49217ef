"""sengen's own ``sen.kernel`` types: generated from ``idl/`` and checked in, never stale."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from sengen.runtime.objects.meta import Transport
from sengen.runtime.objects.registry import OWN_SCOPE, registry
from sengen.runtime.sen.kernel import KernelApi, VirtualKernelClock, VirtualMasterClockBase

IDL = Path(__file__).resolve().parent.parent / "idl"


def _regenerate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("idl_regenerate", IDL / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_code_matches_the_idl() -> None:
    result = _regenerate_module().regenerate(check=True)
    assert result.ok, [d.format() for d in result.diagnostics]
    stale = [str(p) for p in (*result.written, *result.removed)]
    assert not stale, f"run 'python idl/regenerate.py': stale {stale}"


def test_kernel_types_live_in_sengens_own_scope() -> None:
    assert KernelApi.META.scope == OWN_SCOPE
    assert registry.find_stl_class("sen.kernel.KernelApi", [OWN_SCOPE])
    clock = VirtualKernelClock.META
    assert clock.parent is not None and clock.parent.qualified_name == "sen.kernel.VirtualClock"
    assert [m.stl_name for m in clock.methods] == ["processNoFlush", "flushOutputs"]
    assert all(m.transport is Transport.CONFIRMED for m in clock.methods)


def test_master_clock_methods_are_deferred_and_have_no_delta() -> None:
    meta = VirtualMasterClockBase.META
    assert [(m.stl_name, m.deferred) for m in meta.methods] == [
        ("step", True),
        ("steps", True),
        ("advanceTime", True),
    ]
    assert meta.property("delta") is None
    assert meta.property("time") is not None
