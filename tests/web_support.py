"""A kernel running examples/plant with a web component, for the web tests (test_web*.py).

The plant's STL is generated into a root of each test module's own (one registry scope per
generated tree), with the example's implementation module copied beside it and pointed at that
root, so the web tests share no generated tree with each other or with other tests.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

import sengen
from sengen.runtime.components.web import Web
from sengen.runtime.kernel.config import load_config_text
from sengen.runtime.kernel.kernel import Kernel

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plant"


def plant_package(folder: Path, root: str) -> Iterator[Path]:
    """The generated plant and its implementations in ``folder``, on sys.path."""
    result = sengen.generate([EXAMPLE / "stl"], output=folder / root)
    assert result.ok, [d.format() for d in result.diagnostics]
    impl = (EXAMPLE / "plant_impl.py").read_text().replace("from gen.plant", f"from {root}.plant")
    (folder / f"{root}_impl.py").write_text(impl)
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module(f"{root}_impl")
        yield folder
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n.startswith(root)]:
            del sys.modules[name]


def plant_config(root: str, web: dict[str, object], virtual: bool = False) -> str:
    tree = yaml.safe_load((EXAMPLE / "plant.yaml").read_text())
    tree["kernel"]["logConfig"] = {"level": "warn"}
    if virtual:
        tree["kernel"].update(runMode="virtualTime", clockMaster=True)
    for entry in tree["build"]:
        entry["imports"] = [f"{root}.plant", f"{root}_impl"]
    tree["load"] = [{"name": "web", "port": 0, **web}]
    return yaml.safe_dump(tree)


@dataclass
class Running:
    kernel: Kernel
    web: Web
    url: str


def running(config: str) -> Iterator[Running]:
    """The kernel started, its web server ready; stopped afterwards."""
    kernel = Kernel(load_config_text(config))
    web = kernel.runner("web").component
    assert isinstance(web, Web)
    watchdog = threading.Timer(120.0, kernel.request_stop, (99,))
    watchdog.start()
    try:
        assert kernel.start()
        while web.server is None:  # set at the component's start, before its first cycle
            threading.Event().wait(0.005)
        assert web.server.ready.wait(10)
        yield Running(kernel, web, web.url.rstrip("/"))
    finally:
        watchdog.cancel()
        kernel.shutdown()
