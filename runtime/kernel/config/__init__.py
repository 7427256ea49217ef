"""The configuration of ``sengen run``: YAML files with ``@env``, ``include`` and merging,
validated into typed models (runtime.md §1)."""

from sengen.runtime.kernel.config.envsubst import substitute_env
from sengen.runtime.kernel.config.loader import (
    Config,
    ConfigurationError,
    load_config,
    load_config_text,
)
from sengen.runtime.kernel.config.models import (
    BuildEntry,
    KernelConfig,
    LoadEntry,
    LogConfig,
    LogFileConfig,
    ObjectEntry,
    QueueConfig,
)
from sengen.runtime.objects.addresses import bus_address_problem, object_name_problem

__all__ = [
    "BuildEntry",
    "Config",
    "ConfigurationError",
    "KernelConfig",
    "LoadEntry",
    "LogConfig",
    "LogFileConfig",
    "ObjectEntry",
    "QueueConfig",
    "bus_address_problem",
    "load_config",
    "load_config_text",
    "object_name_problem",
    "substitute_env",
]
