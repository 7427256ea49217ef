"""The push streams: a WebSocket at ``/api/stream`` and server-sent events at ``/api/events``.

A WebSocket client sends requests as JSON messages (``op``: open, close, follow, watch, rate,
set, invoke; each may carry a ``ref`` echoed in its answer) and receives the messages of
:mod:`.hub`. Interests opened through a connection close with it, so a client that goes away
leaves nothing behind. A connection's requests are bounded as HTTP requests are (``rateLimit``
per second, bursts of twice as many; an error with status 429 beyond). The event stream is
read-only: its interests and watched objects are query parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse

from .bridge import Bridge
from .errors import ApiError
from .explorer import Explorer
from .hub import MAX_HZ, Client, Hub, cancel
from .security import Bucket, check_token

MAX_MESSAGE = 65536  # bytes of one client message


def routes(
    app: FastAPI, explorer: Explorer, bridge: Bridge, hub: Hub, token: str | None, rate: float
) -> None:
    @app.websocket("/api/stream")
    async def websocket(socket: WebSocket) -> None:
        try:
            check_token(socket, token)
        except ApiError:
            await socket.close(code=4401, reason="unauthorised")
            return
        if len(hub.clients) >= hub.max_clients:
            await socket.close(code=1013, reason="too many clients")
            return
        await socket.accept()
        client = Client(explorer)
        hub.attach(client)
        sender = asyncio.create_task(hub.serve(client, socket.send_json))
        bucket = Bucket(rate)  # the connection's requests, bounded as HTTP requests are
        try:
            while True:
                text = await socket.receive_text()
                if bucket.allowed():
                    await _request(explorer, bridge, client, text)
                else:
                    client.reply(_refused(text))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            hub.detach(client)
            await cancel(sender)
            for interest in client.owned:
                await _quietly(bridge, lambda i=interest: explorer.close_interest(i))

    @app.get("/api/events", tags=["push"])
    async def events(
        request: Request,
        interest: Annotated[list[int] | None, Query(description="interests to follow")] = None,
        watch: Annotated[list[str] | None, Query(description="only these objects' values")] = None,
        hz: Annotated[float, Query(gt=0, le=MAX_HZ)] = 10.0,
    ) -> StreamingResponse:
        """Server-sent events: the messages of the WebSocket stream, one ``data:`` line each."""
        check_token(request, token)
        interest = interest or []
        if len(hub.clients) >= hub.max_clients:
            raise ApiError(503, "too many clients")
        for one in interest:
            if one not in explorer.interests:
                raise ApiError(404, f"no open interest {one}")
        client = Client(explorer)
        client.period = 1 / hz
        client.watch = set(watch) if watch else None
        for one in interest:
            client.follow(one)

        async def lines() -> AsyncIterator[str]:
            queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1)

            async def put(message: dict[str, Any]) -> None:
                await queue.put(message)

            hub.attach(client)
            sender = asyncio.create_task(hub.serve(client, put))
            try:
                yield ": sengen\n\n"
                while True:
                    message = await queue.get()
                    yield f"data: {json.dumps(message)}\n\n"
            finally:
                hub.detach(client)
                await cancel(sender)

        return StreamingResponse(lines(), media_type="text/event-stream")


async def _quietly(bridge: Bridge, work: Any) -> None:
    with contextlib.suppress(ApiError):
        await bridge.run(work)


def _refused(text: str) -> dict[str, Any]:
    """The answer to a request beyond the connection's rate (not parsed beyond its ``ref``)."""
    ref = None
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        ref = json.loads(text[:MAX_MESSAGE]).get("ref")
    return {"type": "error", "ref": ref, "error": "too many requests: slow down", "status": 429}


async def _request(explorer: Explorer, bridge: Bridge, client: Client, text: str) -> None:
    ref: Any = None
    try:
        if len(text) > MAX_MESSAGE:
            raise ApiError(413, f"message too large (at most {MAX_MESSAGE} bytes)")
        try:
            message = json.loads(text)
        except json.JSONDecodeError as error:
            raise ApiError(400, f"malformed JSON: {error}") from None
        if not isinstance(message, dict):
            raise ApiError(400, "a request is a JSON object with an 'op'")
        ref = message.get("ref")
        answer = await _answer(explorer, bridge, client, message)
        client.reply({"type": "ok", "ref": ref, **answer})
    except ApiError as error:
        client.reply({"type": "error", "ref": ref, "error": error.message, "status": error.status})


def _field(message: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = message.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ApiError(400, f"invalid request: '{name}' is missing or of the wrong type")
    return value


async def _answer(
    explorer: Explorer, bridge: Bridge, client: Client, message: dict[str, Any]
) -> dict[str, Any]:
    op = message.get("op")
    if op == "open":
        query = _field(message, "query", str)
        view = await bridge.run(lambda: explorer.open_interest(query))
        client.owned.add(view.id)
        client.follow(view.id)
        return {"interest": view.id, "query": view.query}
    if op == "close":
        interest = _field(message, "interest", int)
        if interest not in client.owned:
            raise ApiError(404, f"no interest {interest} opened by this connection")
        client.owned.discard(interest)
        client.interests.discard(interest)
        await bridge.run(lambda: explorer.close_interest(interest))
        return {"closed": interest}
    if op == "follow":
        for interest in _field(message, "interests", list):
            if not isinstance(interest, int) or interest not in explorer.interests:
                raise ApiError(404, f"no open interest {interest}")
            client.follow(interest)
        return {}
    if op == "watch":
        paths = message.get("paths")
        if paths is not None and not (
            isinstance(paths, list) and all(isinstance(p, str) for p in paths)
        ):
            raise ApiError(400, "invalid request: 'paths' is a list of object paths or null")
        client.watch_paths(paths)
        return {}
    if op == "rate":
        hz = _field(message, "hz", (int, float))
        if not 0 < hz <= MAX_HZ:
            raise ApiError(400, f"invalid request: 'hz' is in (0, {MAX_HZ:g}]")
        client.period = 1 / hz
        return {}
    if op == "set":
        path, name = _field(message, "path", str), _field(message, "name", str)
        value = message.get("value")
        await bridge.run(lambda: explorer.set_property(path, name, value))
        return {}
    if op == "invoke":
        path, name = _field(message, "path", str), _field(message, "method", str)
        args = message.get("args", [])
        if not isinstance(args, list | dict):
            raise ApiError(400, "invalid request: 'args' is a list or a map")
        record = await bridge.run(lambda: explorer.invoke(path, name, args))
        return {"id": record.id}
    raise ApiError(400, f"unknown op {op!r}: open, close, follow, watch, rate, set or invoke")
