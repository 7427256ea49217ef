"""The API's guards: the token, request sizes and request rates.

A token, when set (always when the server listens beyond the loopback), is sent as
``Authorization: Bearer <token>``, as the cookie the page's login sets, or, for a WebSocket or an
event stream that cannot send headers from a browser, as ``?token=``. Sizes and rates are checked
before a request reaches a handler, by plain ASGI middleware.
"""

from __future__ import annotations

import hmac
import json
import secrets
import time
from typing import Any

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import ApiError

COOKIE = "sengen_token"
# What a person may read without the token: the page (which then asks for it) and the API's
# description.
OPEN_PATHS = ("/", "/static/", "/api/login", "/api/docs", "/api/openapi.json")


def new_token() -> str:
    return secrets.token_urlsafe(24)


def presented(connection: HTTPConnection) -> str | None:
    header = connection.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return connection.cookies.get(COOKIE) or connection.query_params.get("token")


def check_token(connection: HTTPConnection, token: str | None) -> None:
    """Raises 401 when a token is set and the request does not carry it."""
    if token is None:
        return
    given = presented(connection)
    if given is None or not hmac.compare_digest(given.encode(), token.encode()):
        raise ApiError(401, "unauthorised: this server needs its token (Authorization: Bearer)")


def is_open(path: str) -> bool:
    return path == "/" or any(path.startswith(p) for p in OPEN_PATHS[1:])


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Bucket:
    """``rate`` requests per second with bursts of twice as many (a token bucket)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.burst = 2 * rate
        self._tokens = self.burst
        self._then = time.monotonic()

    def allowed(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._then) * self.rate)
        self._then = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True


class Limits:
    """ASGI middleware: bodies above ``max_body`` bytes are refused (413), and each client
    address gets ``rate`` requests (and WebSocket connections) per second with bursts of twice
    as many (429 beyond). Requests sent over a WebSocket have a bucket per connection
    (:mod:`.stream`)."""

    def __init__(self, app: ASGIApp, max_body: int, rate: float) -> None:
        self.app = app
        self.max_body = max_body
        self.rate = rate
        self._buckets: dict[str, Bucket] = {}

    def _allowed(self, address: str) -> bool:
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= 10_000:  # forget idle addresses rather than grow
                self._buckets.clear()
            bucket = self._buckets[address] = Bucket(self.rate)
        return bucket.allowed()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        address = client[0] if client else "?"
        if not self._allowed(address):
            if scope["type"] == "http":
                await _refuse(send, 429, "too many requests: slow down")
            else:
                await send({"type": "websocket.close", "code": 1013})
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await _refuse(send, 413, f"request body too large (at most {self.max_body} bytes)")
            return
        await self.app(scope, self._bounded(receive), send)

    def _bounded(self, receive: Receive) -> Receive:
        """A body sent in chunks without a length is counted as it arrives."""
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message: dict[str, Any] = dict(await receive())
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise ApiError(413, f"request body too large (at most {self.max_body} bytes)")
            return message

        return bounded
