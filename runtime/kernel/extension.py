"""The kernel's extension interface: everything a shipped or third-party component may use
beyond the user's API (:mod:`sengen.runtime`).

Components (``runtime/components/*``) import the runtime only from here, from
:mod:`sengen.runtime` and from :mod:`sengen.runtime.errors`; an import-linter contract holds them
to it. What is here is documented in docs/architecture.md, by need:

* a **transport** (remote objects): the bus space and its sources, sessions, the owner and
  subscriber sides of discovery (interests, subscriptions, change logs), queries, the codecs and
  metadata that put objects on a wire, remote proxies and call results, the kernel clock;
* a **recorder**: subscriptions and their change logs, metadata, values as JSON, the
  configuration's helpers for its own keys, and its control class ``RecordingBase``;
* a **replayer**: type descriptions (``describe``) and the registry, to publish objects of
  classes it does not import, values, and its control class ``ReplayBase``;
* an **inspector** (the shell, the web explorer): subscriptions, proxies, calls, metadata, the
  registry, queries, the processes of the system, values as JSON (``json_form``), and the kernel
  to build when it is launched on its own.
"""

from __future__ import annotations

from sengen.runtime.kernel.buses import BusSpace, Source
from sengen.runtime.kernel.collector import bulk
from sengen.runtime.kernel.config import Config, LogConfig, load_config_text
from sengen.runtime.kernel.config.loader import writable_file_problem
from sengen.runtime.kernel.config.models import BusAddress, fail
from sengen.runtime.kernel.processes import Answer, ProcessDirectory, ProcessInfo, this_process
from sengen.runtime.kernel.publisher import Interests
from sengen.runtime.kernel.query import Query, QueryError, parse_query
from sengen.runtime.kernel.sessions import BusDirectory
from sengen.runtime.kernel.subscriptions import (
    Delivery,
    Discovery,
    Interest,
    Log,
    LogRecord,
    Owner,
    Subscription,
)
from sengen.runtime.objects import describe, evolution, values
from sengen.runtime.objects.addresses import bus_address_problem
from sengen.runtime.objects.codec import SKIPPED, ClassCodec, class_codec
from sengen.runtime.objects.context import Context
from sengen.runtime.objects.events import Events
from sengen.runtime.objects.jsonform import json_form
from sengen.runtime.objects.meta import (
    AliasMeta,
    ArgMeta,
    ArrayMeta,
    Category,
    ClassMeta,
    EnumMeta,
    EventMeta,
    MethodMeta,
    NativeMeta,
    OptionalMeta,
    PropertyMeta,
    QuantityMeta,
    SequenceMeta,
    StructMeta,
    TypeMeta,
    VariantMeta,
    resolve_alias,
)
from sengen.runtime.objects.objects import Prop, route_call
from sengen.runtime.objects.proxies import refused
from sengen.runtime.objects.registry import registry
from sengen.runtime.objects.suggest import did_you_mean, dotted_suggestion, suggestion
from sengen.runtime.objects.values import Invalid
from sengen.runtime.sen.kernel.recorder import RecordingBase, RecordingState
from sengen.runtime.sen.kernel.replay import ReplayBase, ReplayState
from sengen.runtime.time.stepping import KernelClock, StepPlan

__all__ = [
    "SKIPPED",
    "AliasMeta",
    "Answer",
    "ArgMeta",
    "ArrayMeta",
    "BusAddress",
    "BusDirectory",
    "BusSpace",
    "Category",
    "ClassCodec",
    "ClassMeta",
    "Config",
    "Context",
    "Delivery",
    "Discovery",
    "EnumMeta",
    "EventMeta",
    "Events",
    "Interest",
    "Interests",
    "Invalid",
    "KernelClock",
    "Log",
    "LogConfig",
    "LogRecord",
    "MethodMeta",
    "NativeMeta",
    "OptionalMeta",
    "Owner",
    "ProcessDirectory",
    "ProcessInfo",
    "Prop",
    "PropertyMeta",
    "QuantityMeta",
    "Query",
    "QueryError",
    "RecordingBase",
    "RecordingState",
    "ReplayBase",
    "ReplayState",
    "SequenceMeta",
    "Source",
    "StepPlan",
    "StructMeta",
    "Subscription",
    "TypeMeta",
    "VariantMeta",
    "bulk",
    "bus_address_problem",
    "class_codec",
    "describe",
    "did_you_mean",
    "dotted_suggestion",
    "evolution",
    "fail",
    "json_form",
    "load_config_text",
    "parse_query",
    "refused",
    "registry",
    "resolve_alias",
    "route_call",
    "suggestion",
    "this_process",
    "values",
    "writable_file_problem",
]
