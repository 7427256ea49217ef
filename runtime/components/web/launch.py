"""What ``sengen web [CONFIG...]`` runs: the given configurations merged in order, plus a
transport (unless they load one) and a web component, so that the page shows the objects of
every process of the machine's default rendezvous. As for ``sengen shell``, the web component
joins the highest group, and the kernel logs warnings only unless a file sets a level.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from sengen.runtime import Config, load_config_text
from sengen.runtime.kernel.extension import LogConfig

NAME = "web"
# The names the shipped transport is registered under (sengen.components, pyproject.toml).
TRANSPORTS = ("transport", "zenoh", "ether")


def web_config(paths: Sequence[Path], web: dict[str, object]) -> Config:
    """The merged configuration; ``web``: the keys given on the command line (host, port,
    token). Raises ``ConfigurationError`` like any configuration."""
    tree: dict[str, object] = {"load": [{"name": NAME, **web}]}
    if paths:
        tree = {"include": [str(p.resolve()) for p in paths], **tree}
    config = load_config_text(yaml.safe_dump(tree), "<sengen web>")
    if not any(e.name in TRANSPORTS for e in config.load):
        tree["load"] = [{"name": "transport"}, {"name": NAME, **web}]
        config = load_config_text(yaml.safe_dump(tree), "<sengen web>")
    entry = next(e for e in config.load if e.name == NAME)
    entry.group = max(e.group for e in (*config.load, *config.build))
    kernel = config.tree.get("kernel")
    if not (isinstance(kernel, dict) and isinstance(kernel.get("logConfig"), dict)):
        config.kernel.log_config = LogConfig(level="warn")
    return config
