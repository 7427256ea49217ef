"""sengen.runtime: the API of a running system, for components, implementations and tests.

Everything a user's code needs is importable from here::

    from sengen.runtime import Component, Duration, RunApi

Names are loaded on first use, so that a process that only runs objects pays for what it uses
(``import sengen.runtime`` loads neither the kernel's configuration models nor the transport).
The sub-packages (``objects``, ``time``, ``kernel``, ``components``) are private and free to
change; generated code imports :mod:`sengen.runtime.abi`. See docs/architecture.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sengen.runtime.errors import (
        CallDropped,
        CallError,
        CallFailed,
        CallTimeout,
        ConstViolation,
        LocalMethodError,
        NotSeen,
        ObjectGone,
        RegistryError,
        SengenError,
        VariantTagError,
    )
    from sengen.runtime.kernel.api import RunApi
    from sengen.runtime.kernel.buses import DuplicateObjectName
    from sengen.runtime.kernel.component import Component, Retry
    from sengen.runtime.kernel.config import (
        Config,
        ConfigurationError,
        load_config,
        load_config_text,
    )
    from sengen.runtime.kernel.kernel import Kernel, PreloadError
    from sengen.runtime.kernel.query import QueryError
    from sengen.runtime.kernel.subscriptions import Subscription
    from sengen.runtime.objects.calls import Call, Promise
    from sengen.runtime.objects.checks import set_checks
    from sengen.runtime.objects.duration import Duration, TimeStamp, TimeValueError
    from sengen.runtime.objects.events import Connection, EventHandle, EventInfo
    from sengen.runtime.objects.objects import ConfigError, NativeObject, Object
    from sengen.runtime.objects.proxies import LocalProxy, RemoteProxy
    from sengen.runtime.time.tracing import ChromeTracer, Tracer

# Where each public name lives (tests/test_api.py checks it against the imports above and
# __all__).
_HOMES: dict[str, str] = {
    "CallDropped": "errors",
    "CallError": "errors",
    "CallFailed": "errors",
    "CallTimeout": "errors",
    "ConstViolation": "errors",
    "LocalMethodError": "errors",
    "NotSeen": "errors",
    "ObjectGone": "errors",
    "RegistryError": "errors",
    "SengenError": "errors",
    "VariantTagError": "errors",
    "DuplicateObjectName": "kernel.buses",
    "Component": "kernel.component",
    "Retry": "kernel.component",
    "Config": "kernel.config",
    "ConfigurationError": "kernel.config",
    "load_config": "kernel.config",
    "load_config_text": "kernel.config",
    "Kernel": "kernel.kernel",
    "PreloadError": "kernel.kernel",
    "QueryError": "kernel.query",
    "RunApi": "kernel.api",
    "Subscription": "kernel.subscriptions",
    "Call": "objects.calls",
    "Promise": "objects.calls",
    "set_checks": "objects.checks",
    "Duration": "objects.duration",
    "TimeStamp": "objects.duration",
    "TimeValueError": "objects.duration",
    "Connection": "objects.events",
    "EventHandle": "objects.events",
    "EventInfo": "objects.events",
    "ConfigError": "objects.objects",
    "NativeObject": "objects.objects",
    "Object": "objects.objects",
    "LocalProxy": "objects.proxies",
    "RemoteProxy": "objects.proxies",
    "ChromeTracer": "time.tracing",
    "Tracer": "time.tracing",
}

__all__ = [
    "Call",
    "CallDropped",
    "CallError",
    "CallFailed",
    "CallTimeout",
    "ChromeTracer",
    "Component",
    "Config",
    "ConfigError",
    "ConfigurationError",
    "Connection",
    "ConstViolation",
    "DuplicateObjectName",
    "Duration",
    "EventHandle",
    "EventInfo",
    "Kernel",
    "LocalMethodError",
    "LocalProxy",
    "NativeObject",
    "NotSeen",
    "Object",
    "ObjectGone",
    "PreloadError",
    "Promise",
    "QueryError",
    "RegistryError",
    "RemoteProxy",
    "Retry",
    "RunApi",
    "SengenError",
    "Subscription",
    "TimeStamp",
    "TimeValueError",
    "Tracer",
    "VariantTagError",
    "load_config",
    "load_config_text",
    "set_checks",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'sengen.runtime' has no attribute '{name}'")
    value = getattr(importlib.import_module(f"sengen.runtime.{home}"), name)
    globals()[name] = value  # loaded once: later reads are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
