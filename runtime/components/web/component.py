"""The shipped ``web`` component (docs/guide/web.md): a page and an API on the objects of the
system, served by uvicorn on its own thread.

The component is real-time-only, like the shell: its cycle (``freqHz``, 30 Hz by default) runs
the requests the server queued, refreshes the snapshots of the objects its clients follow and
hands the server one frame of changes. The server turns them into JSON at each client's rate.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sengen.runtime import Component, Duration, RunApi

from .app import make_app
from .bridge import Bridge
from .config import WebConfig
from .explorer import Explorer, Frame
from .hub import Hub
from .security import new_token
from .server import Server

_log = logging.getLogger("sengen.component.web")


class Web(Component):
    config_model = WebConfig

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        # Beyond the loopback a token is required: one is made up when none is configured.
        self.token = config.token
        if self.token is None and not config.loopback:
            self.token = new_token()
        self.server: Server | None = None
        self.hub: Hub | None = None  # what the server pushes through: clients, for tests
        self.url = ""

    def is_real_time_only(self) -> bool:
        return True

    def run(self, api: RunApi) -> None:
        config = self.config
        explorer = Explorer(api, config.max_interests)
        bridge = Bridge()
        self.hub = hub = Hub(explorer, config.max_clients)
        for bus in config.open:
            explorer.open_interest(f"SELECT * FROM {bus}")
        self.server = server = Server(make_app(explorer, bridge, hub, config, self.token), config)
        host = f"[{config.host}]" if ":" in config.host else config.host
        self.url = f"{server.scheme}://{host}:{server.port}/"
        server.start()
        _log.warning("web explorer at %s", self.url)
        if self.token is not None and config.token is None:
            _log.warning("web token: %s", self.token)

        def cycle() -> None:
            bridge.serve()
            frame = explorer.cycle()
            loop = server.loop
            if loop is not None:
                self._post(loop, hub, frame)

        try:
            api.exec_loop(Duration.from_hz(config.freq_hz), cycle, log_overruns=False)
        finally:
            server.stop()
            explorer.close()

    @staticmethod
    def _post(loop: asyncio.AbstractEventLoop, hub: Hub, frame: Frame) -> None:
        with contextlib.suppress(RuntimeError):  # the server's loop has closed: it stops
            loop.call_soon_threadsafe(hub.publish, frame)
