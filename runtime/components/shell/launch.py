"""What ``sengen shell [CONFIG...]`` runs: the given configurations merged in order, plus a
transport (unless they load one) and a shell (runtime.md §1.12), so that the shell sees the
objects of every process of the machine's default rendezvous.

The files are merged exactly as ``include`` merges them (runtime.md §1.3), so a shell entry in
one of them keeps its keys. Unless a file places the shell in a group, it joins the highest group
so that it starts last, once the rest of the system runs. Unless a file sets a log level, the
shell's kernel logs warnings only: INFO lines would bury the shell's own output.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from sengen.runtime import Config, Kernel, load_config_text
from sengen.runtime.kernel.extension import LogConfig

from .component import Shell

NAME = "shell"
# The names the shipped transport is registered under (sengen.components, pyproject.toml).
TRANSPORTS = ("transport", "zenoh", "ether")


def shell_config(paths: Sequence[Path], transport: dict[str, object] | None = None) -> Config:
    """The merged configuration; raises ``ConfigurationError`` like any configuration.
    ``transport``: the transport entry of a shell that joins a running system (``--connect``,
    ``--attach``) instead of starting one."""
    tree: dict[str, object] = {"load": [{"name": NAME}]}
    if transport is not None:
        tree["load"] = [transport, {"name": NAME}]
    if paths:
        tree = {"include": [str(p.resolve()) for p in paths], **tree}
    config = load_config_text(yaml.safe_dump(tree), "<sengen shell>")
    if not any(e.name in TRANSPORTS for e in config.load):
        tree["load"] = [{"name": "transport"}, {"name": NAME}]
        config = load_config_text(yaml.safe_dump(tree), "<sengen shell>")
    entry = next(e for e in config.load if e.name == NAME)
    if "group" not in _user_shell(config):
        groups = [e.group for e in (*config.load, *config.build)]
        entry.group = max(groups)
    kernel = config.tree.get("kernel")
    if not (isinstance(kernel, dict) and isinstance(kernel.get("logConfig"), dict)):
        config.kernel.log_config = LogConfig(level="warn")
    return config


def _user_shell(config: Config) -> dict[object, object]:
    load = config.tree.get("load")
    for item in load if isinstance(load, list) else []:
        if isinstance(item, dict) and item.get("name") == NAME:
            return item
    return {}


def shell_of(kernel: Kernel) -> Shell | None:
    """The kernel's shell; None when a configuration loads another class under its name."""
    component = kernel.runner(NAME).component
    return component if isinstance(component, Shell) else None
