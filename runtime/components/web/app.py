"""The ASGI application: the page, the REST API under ``/api`` (OpenAPI at ``/api/docs``) and
the push streams (:mod:`.stream`).

Reads are served from the explorer's snapshots on the server's thread; whatever acts on the
system (interests, writes, invocations, the clock) runs in the component's cycle through the
:class:`~.bridge.Bridge`. Every error is ``{"error": message}`` with a 4xx status.
"""

from __future__ import annotations

import asyncio
import hmac
from importlib import resources
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from sengen.runtime import Duration, TimeValueError
from sengen.runtime.kernel.extension import did_you_mean, json_form, values

from . import stream
from .bridge import Bridge
from .config import WebConfig
from .errors import ApiError, bad_request, conflict, not_found
from .explorer import MASTER, CallRecord, Explorer, Snapshot, arguments, property_of
from .hub import Hub
from .security import COOKIE, Limits, check_token, is_open
from .typeinfo import describe_name

RESULT_WAIT = 10.0  # seconds a clock request waits for the master's answer
STATIC = {"app.js": "text/javascript", "app.css": "text/css"}


class InterestRequest(BaseModel):
    query: str = Field(description="SELECT ... FROM session.bus [WHERE ...]", max_length=4096)


class ValueRequest(BaseModel):
    value: Any = Field(description="the new value, as JSON in the shell's form")


class InvokeRequest(BaseModel):
    args: list[Any] | dict[str, Any] = Field(
        default_factory=list, description="arguments in order, or by name"
    )


class StepRequest(BaseModel):
    count: int = Field(default=1, ge=1, le=1_000_000)


class AdvanceRequest(BaseModel):
    duration: str = Field(description='how far, e.g. "250 ms"', max_length=64)


class LoginRequest(BaseModel):
    token: str = Field(max_length=256)


def _page(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def make_app(
    explorer: Explorer, bridge: Bridge, hub: Hub, config: WebConfig, token: str | None
) -> FastAPI:
    app = FastAPI(
        title="sengen web",
        description="The objects of a running sengen system: read, write, invoke, follow.",
        docs_url="/api/docs",
        openapi_url="/api/openapi.json",
        redoc_url=None,
    )
    pages = {name: _page(name) for name in ("index.html", *STATIC)}

    def guard(request: Request) -> None:
        if not is_open(request.url.path):
            check_token(request, token)

    api = Depends(guard)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, error: ApiError) -> JSONResponse:
        body: dict[str, Any] = {"error": error.message}
        if error.detail:
            body["detail"] = error.detail
        return JSONResponse(body, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": _validation_message(error)}, status_code=400)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, error: HTTPException) -> JSONResponse:
        return JSONResponse({"error": str(error.detail).lower()}, status_code=error.status_code)

    # -- the page ---------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(pages["index.html"])

    @app.get("/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if name not in STATIC:
            raise not_found(f"no file {name}")
        return Response(pages[name], media_type=STATIC[name])

    @app.post("/api/login", tags=["session"], summary="set the token cookie for the page")
    async def login(body: LoginRequest) -> JSONResponse:
        if token is not None and not hmac.compare_digest(body.token.encode(), token.encode()):
            raise ApiError(401, "unauthorised: wrong token")
        response = JSONResponse({"ok": True})
        if token is not None:
            secure = config.tls_cert is not None  # never sent back over plain HTTP then
            response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure)
        return response

    # -- sessions, interests, objects ------------------------------------------------------------

    @app.get("/api/sessions", tags=["objects"], dependencies=[api])
    async def sessions() -> list[dict[str, Any]]:
        """The sessions and buses detected, opened or not."""
        found: dict[str, list[str]] = {}
        for bus in explorer.buses:
            found.setdefault(bus.partition(".")[0], []).append(bus)
        return [{"name": s, "buses": b} for s, b in found.items()]

    @app.get("/api/interests", tags=["interests"], dependencies=[api])
    async def interests() -> list[dict[str, Any]]:
        return [_interest(v.id, v.query, len(v.paths)) for v in explorer.interests.values()]

    @app.post("/api/interests", tags=["interests"], dependencies=[api], status_code=201)
    async def open_interest(body: InterestRequest) -> dict[str, Any]:
        """Subscribe to the objects a SELECT query matches; they arrive as they are detected."""
        view = await bridge.run(lambda: explorer.open_interest(body.query))
        return _interest(view.id, view.query, 0)

    @app.delete("/api/interests/{interest}", tags=["interests"], dependencies=[api])
    async def close_interest(interest: int) -> dict[str, Any]:
        await bridge.run(lambda: explorer.close_interest(interest))
        return {"closed": interest}

    @app.get("/api/objects", tags=["objects"], dependencies=[api])
    async def objects(
        interest: int | None = Query(default=None, description="only this interest's objects"),
        search: str = Query(default="", max_length=256, description="part of path or class"),
        limit: int = Query(default=1000, ge=1, le=100_000),
    ) -> list[dict[str, Any]]:
        view = explorer.view
        if interest is not None:
            chosen = explorer.interests.get(interest)
            if chosen is None:
                raise not_found(f"no open interest {interest}")
            paths = sorted(chosen.paths)
        else:
            paths = sorted(view)
        needle = search.lower()
        found = []
        for path in paths:
            snapshot = view.get(path)
            if snapshot is None:
                continue
            if (
                needle
                and needle not in path.lower()
                and needle not in snapshot.meta.qualified_name.lower()
            ):
                continue
            found.append(snapshot.summary())
            if len(found) >= limit:
                break
        return found

    @app.get("/api/objects/{path}", tags=["objects"], dependencies=[api])
    async def object_state(path: str) -> dict[str, Any]:
        """Class, owner, last commit time and every property's value."""
        snapshot = _find(explorer, path)
        owner: dict[str, Any] = {"kind": snapshot.kind, "component": snapshot.component}
        answer = await bridge.run(lambda: explorer.owner(path))
        if answer is not None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, answer.done.wait, 1.0)
            if answer.done.is_set() and answer.processes:
                process = answer.processes[0]
                owner.update(component=process.component, process=process.label)
        else:
            owner["process"] = "this process"
        return {
            **snapshot.summary(),
            "owner": owner,
            "time": snapshot.time,
            "values": snapshot.state(),
        }

    @app.get("/api/objects/{path}/properties/{name}", tags=["objects"], dependencies=[api])
    async def read_property(path: str, name: str) -> dict[str, Any]:
        snapshot = _find(explorer, path)
        prop = property_of(snapshot.meta, path, name)
        return {"path": path, "name": name, "time": snapshot.time, "value": snapshot.value(prop)}

    @app.put(
        "/api/objects/{path}/properties/{name}",
        tags=["objects"],
        dependencies=[api],
        status_code=202,
    )
    async def write_property(path: str, name: str, body: ValueRequest) -> dict[str, Any]:
        """Set a writable property: the owner applies it in its next cycle."""
        await bridge.run(lambda: explorer.set_property(path, name, body.value))
        return {"path": path, "name": name, "status": "sent"}

    @app.post(
        "/api/objects/{path}/methods/{name}", tags=["objects"], dependencies=[api], status_code=202
    )
    async def invoke(path: str, name: str, body: InvokeRequest) -> dict[str, Any]:
        """Invoke a method: an invocation id, whose status is polled at /api/invocations/{id}
        and pushed to the streams."""
        record: CallRecord = await bridge.run(lambda: explorer.invoke(path, name, body.args))
        return record.as_json()

    @app.get("/api/invocations/{invocation}", tags=["objects"], dependencies=[api])
    async def invocation(invocation: str) -> dict[str, Any]:
        record = explorer.calls.get(invocation)
        if record is None:
            raise not_found(f"no invocation {invocation}")
        return record.as_json()

    @app.get("/api/types/{name}", tags=["types"], dependencies=[api])
    async def type_description(name: str) -> dict[str, Any]:
        """A class (properties, methods, events) or a type, with its STL documentation."""
        return describe_name(name)

    # -- the clock and the recorders -------------------------------------------------------------

    @app.get("/api/clock", tags=["clock"], dependencies=[api])
    async def clock() -> dict[str, Any]:
        """The master clock's time under virtual time."""
        return _clock(explorer)

    @app.post("/api/clock/step", tags=["clock"], dependencies=[api])
    async def step(body: StepRequest) -> dict[str, Any]:
        method, args = ("step", ()) if body.count == 1 else ("steps", (body.count,))
        await _on_master(explorer, bridge, hub, method, args)
        return _clock(explorer)

    @app.post("/api/clock/advance", tags=["clock"], dependencies=[api])
    async def advance(body: AdvanceRequest) -> dict[str, Any]:
        try:
            span = Duration.parse(body.duration)
        except TimeValueError as error:
            raise bad_request(f"advance: {error}") from None
        await _on_master(explorer, bridge, hub, "advanceTime", (span,))
        return _clock(explorer)

    @app.get("/api/recorders", tags=["recorders"], dependencies=[api])
    async def recorders() -> list[dict[str, Any]]:
        """The recorders on the kernel's bus, with their state."""
        return [
            {
                **s.summary(),
                "values": s.state(),
                "methods": [m.stl_name for m in s.meta.all_methods],
            }
            for s in _recorders(explorer)
        ]

    @app.post("/api/recorders/{path}/{action}", tags=["recorders"], dependencies=[api])
    async def recorder(path: str, action: str, body: InvokeRequest | None = None) -> dict[str, Any]:
        """``start`` or ``stop`` a recorder; arguments left out are their type's zero value
        (an empty file name: the configured one)."""
        if action not in ("start", "stop"):
            raise not_found(f"unknown recorder action '{action}' (start or stop)")
        found = next((s for s in _recorders(explorer) if s.path == path), None)
        if found is None:
            raise not_found(f"could not find recorder {path}")
        method = found.meta.method(action)
        assert method is not None  # a recorder has both
        given = body.args if body is not None else []
        if isinstance(given, list) and not given:
            given = [json_form(a.type, values.zero(a.type)) for a in method.args]
        args = tuple(arguments(method, given))

        def call() -> CallRecord:
            return explorer.call_on(explorer.kernel_object(path), action, args)

        record: CallRecord = await bridge.run(call)
        done = await hub.result(record.id, RESULT_WAIT)
        return done.as_json()

    stream.routes(app, explorer, bridge, hub, token, config.rate_limit)
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=config.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    app.add_middleware(Limits, max_body=config.max_body_bytes, rate=config.rate_limit)
    return app


def _find(explorer: Explorer, path: str) -> Snapshot:
    snapshot = explorer.view.get(path)
    if snapshot is None:
        raise not_found(f"could not find object {path}{did_you_mean(path, tuple(explorer.view))}")
    return snapshot


def _interest(interest: int, query: str, count: int) -> dict[str, Any]:
    return {"id": interest, "query": query, "objects": count}


def _master(explorer: Explorer) -> Snapshot | None:
    return next((s for s in explorer.kernel_objects.values() if s.meta.is_a(MASTER)), None)


def _recorders(explorer: Explorer) -> list[Snapshot]:
    """Objects of the kernel's bus whose class is named Record... and has ``start`` and
    ``stop`` (the recorder's controls, found without knowing the recorder's types)."""
    return [
        s
        for s in explorer.kernel_objects.values()
        if s.meta.qualified_name.rpartition(".")[2].startswith("Record")
        and s.meta.method("start") is not None
        and s.meta.method("stop") is not None
    ]


def _clock(explorer: Explorer) -> dict[str, Any]:
    master = _master(explorer)
    if master is None:
        return {"virtual": explorer.virtual, "master": None, "time": None}
    prop = master.meta.property("time")
    assert prop is not None
    now = master.values[master.meta.all_properties.index(prop)]
    return {"virtual": True, "master": master.path, "time": now.ns, "text": str(now)}


async def _on_master(
    explorer: Explorer, bridge: Bridge, hub: Hub, method: str, args: tuple[Any, ...]
) -> None:
    record: CallRecord = await bridge.run(lambda: explorer.call_on(explorer.master(), method, args))
    done = await hub.result(record.id, RESULT_WAIT)
    if done.status == "failed":
        raise conflict(f"call error: {done.error}")
    # The master commits its time before it answers: the next drain of the web component
    # refreshes the snapshot that the answer reads.
    await hub.next_frame()


def _validation_message(error: RequestValidationError) -> str:
    first = error.errors()[0]
    if first.get("type") == "json_invalid":
        return f"malformed JSON: {first.get('ctx', {}).get('error', 'not JSON')}"
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    return f"invalid request: {where}: {first.get('msg', 'invalid')}".replace(": :", ":")
