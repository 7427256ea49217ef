"""uvicorn on a thread of its own, with its own event loop: the server never runs on the
component's thread, so no request can hold up a cycle, and the cycle never waits for it."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

import uvicorn

from .config import WebConfig

_log = logging.getLogger("sengen.component.web")


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, ready: threading.Event) -> None:
        super().__init__(config)
        self._ready = ready
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        self._ready.set()


class Server:
    """Serve ``app`` on ``config``'s address from :meth:`start` to :meth:`stop`."""

    def __init__(self, app: Any, config: WebConfig) -> None:
        self.ready = threading.Event()
        # The socket is bound here, so that the port (0: any free one) is known at once and a
        # port in use fails the component's start with its own message.
        family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
        # IPPROTO_TCP explicitly: asyncio turns Nagle's algorithm off only on sockets that say
        # so, and with it on every response waits for a delayed acknowledgement (40 ms).
        self._socket = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((config.host, config.port))
            # Listening at once, so that a client told the address (the log line) is queued
            # until uvicorn accepts instead of refused while its thread starts.
            self._socket.listen(socket.SOMAXCONN)
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        self.scheme = "https" if config.tls_cert is not None else "http"
        settings = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws_max_size=1 << 16,
            ssl_certfile=config.tls_cert,
            ssl_keyfile=config.tls_key,
            timeout_graceful_shutdown=1,
        )
        self._server = _Server(settings, self.ready)
        self._thread = threading.Thread(target=self._serve, name="web-server", daemon=True)

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self._server.loop if self.ready.is_set() else None

    def start(self) -> None:
        self._thread.start()

    def _serve(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except Exception:  # the server's failure is logged; the kernel goes on without it
            _log.exception("the web server stopped")
        finally:
            self.ready.set()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._socket.close()
