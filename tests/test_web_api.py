"""The web component's API against a live kernel running examples/plant under virtual time
(docs/guide/web.md): list, read, set, invoke, the clock, events over the WebSocket, the token,
and bad input, which is always a 4xx with a JSON error and never an effect on the system."""

from __future__ import annotations

import gc
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from web_support import Running, plant_config, plant_package, running
from websockets.sync.client import connect

TOKEN = "a-secret-token-for-tests"

ROOT = "webplant_api"  # the generated plant's root package, this module's own


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from plant_package(tmp_path_factory.mktemp("webplant"), ROOT)


@pytest.fixture(scope="module")
def system(plant: Path) -> Iterator[Running]:
    yield from running(plant_config(ROOT, {"open": ["local.plant", "local.kernel"]}, virtual=True))


@pytest.fixture
def http(system: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=system.url, trust_env=False, timeout=10) as client:
        yield client


def _ws(system: Running) -> Any:
    return connect(system.url.replace("http", "ws") + "/api/stream", open_timeout=5)


def _wait_objects(http: httpx.Client, count: int) -> list[dict[str, Any]]:
    for _ in range(500):
        found: list[dict[str, Any]] = http.get("/api/objects", params={"interest": 1}).json()
        if len(found) >= count:
            return found
        http.post("/api/clock/step", json={"count": 1})
    raise AssertionError("the plant's objects never arrived")


def _invocation(http: httpx.Client, record: dict[str, Any]) -> dict[str, Any]:
    for _ in range(500):
        found: dict[str, Any] = http.get(f"/api/invocations/{record['id']}").json()
        if found["status"] != "pending":
            return found
        http.post("/api/clock/step", json={"count": 1})
    raise AssertionError(f"{record} never finished")


def test_list_read_set_and_invoke(http: httpx.Client) -> None:
    objects = _wait_objects(http, 3)
    assert {o["path"] for o in objects} == {
        "local.plant.feed",
        "local.plant.level",
        "local.plant.tank",
    }
    assert {o["class"] for o in objects} == {"plant.Pump", "plant.Controller", "plant.Tank"}
    tank = http.get("/api/objects/local.plant.tank").json()
    assert tank["owner"] == {"kind": "local", "component": "physics", "process": "this process"}
    assert tank["values"]["area"] == 1.0 and tank["values"]["drain"] == 0.2
    level = http.get("/api/objects/local.plant.tank/properties/level").json()
    assert level["value"] == tank["values"]["level"] or level["time"] > tank["time"]
    # A write reaches the pump in its next cycle; it clamps to maxFlow (1.0).
    sent = http.put("/api/objects/local.plant.feed/properties/flowRate", json={"value": 7.5})
    assert sent.status_code == 202
    invoked = http.post("/api/objects/local.kernel.master/methods/steps", json={"args": [3]})
    assert invoked.status_code == 202
    assert _invocation(http, invoked.json())["status"] == "done"
    # Named arguments work too.
    invoked = http.post(
        "/api/objects/local.kernel.master/methods/advanceTime", json={"args": {"duration": "1 ms"}}
    )
    assert _invocation(http, invoked.json())["status"] == "done"


def test_the_clock_steps_under_virtual_time(http: httpx.Client) -> None:
    before = http.get("/api/clock").json()
    assert before["virtual"] and before["master"] == "local.kernel.master"
    stepped = http.post("/api/clock/step", json={"count": 4}).json()
    assert stepped["time"] > before["time"]
    advanced = http.post("/api/clock/advance", json={"duration": "250 ms"}).json()
    assert advanced["time"] >= stepped["time"] + 250_000_000


def test_changes_and_events_arrive_over_the_websocket(system: Running, http: httpx.Client) -> None:
    _wait_objects(http, 3)
    with _ws(system) as socket:
        socket.send(json.dumps({"op": "open", "query": "SELECT * FROM local.plant", "ref": 7}))
        socket.send(json.dumps({"op": "watch", "paths": ["local.plant.tank", "local.plant.level"]}))
        seen: dict[str, list[dict[str, Any]]] = {}
        levels: list[float] = []
        for _ in range(400):
            http.post("/api/clock/advance", json={"duration": "100 ms"})
            while True:
                try:
                    message = json.loads(socket.recv(timeout=0.05))
                except TimeoutError:
                    break
                seen.setdefault(message["type"], []).append(message)
                for change in message.get("objects", []):
                    if message["type"] == "changes" and change["path"] == "local.plant.tank":
                        levels.append(change["values"]["level"])
            if "event" in seen and len(levels) > 5:
                break
    assert seen["ok"][0]["ref"] == 7 and isinstance(seen["ok"][0]["interest"], int)
    added = {o["path"] for m in seen["added"] for o in m["objects"]}
    assert added == {"local.plant.feed", "local.plant.level", "local.plant.tank"}
    assert len(set(levels)) > 1  # the level moved as the clock advanced
    event = seen["event"][0]
    assert event["path"] == "local.plant.level" and event["event"] == "levelCrossed"
    assert event["args"]["level"] > 0.5 and event["args"]["crossing"] >= 1


@pytest.mark.parametrize(
    ("method", "url", "body", "status", "message"),
    [
        ("POST", "/api/interests", b"{not json", 400, "malformed JSON"),
        ("POST", "/api/interests", {"query": "SELECT * FROM"}, 400, "expected"),
        ("POST", "/api/interests", {"query": "SELECT *"}, 400, ""),
        (
            "GET",
            "/api/objects/local.plant.tnak",
            None,
            404,
            "could not find object local.plant.tnak",
        ),
        (
            "GET",
            "/api/objects/local.plant.tank/properties/levle",
            None,
            404,
            "did you mean 'level'",
        ),
        (
            "PUT",
            "/api/objects/local.plant.tank/properties/level",
            {"value": 1},
            400,
            "not writable",
        ),
        (
            "PUT",
            "/api/objects/local.plant.feed/properties/flowRate",
            {"value": "x"},
            400,
            "invalid value for property 'flowRate'",
        ),
        ("POST", "/api/objects/local.kernel.master/methods/stepz", {}, 404, "did you mean 'step'"),
        (
            "POST",
            "/api/objects/local.kernel.master/methods/steps",
            {"args": ["many"]},
            400,
            "error parsing the arguments: argument 'count'",
        ),
        (
            "POST",
            "/api/objects/local.kernel.master/methods/steps",
            {"args": [1, 2]},
            400,
            "too many arguments for method steps",
        ),
        (
            "POST",
            "/api/objects/local.kernel.master/methods/steps",
            {"args": []},
            400,
            "not enough arguments for method steps",
        ),
        ("POST", "/api/clock/advance", {"duration": "soon"}, 400, "advance:"),
        ("POST", "/api/clock/step", {"count": 0}, 400, "invalid request"),
        ("GET", "/api/objects?limit=x", None, 400, "invalid request"),
        ("GET", "/api/types/plant.Tnak", None, 404, "could not find type plant.Tnak"),
        ("GET", "/api/invocations/c999999", None, 404, "no invocation"),
        ("DELETE", "/api/interests/999", None, 404, "no open interest 999"),
        ("POST", "/api/interests", {"query": "x" * 70000}, 413, "too large"),
        ("GET", "/api/nothing", None, 404, "not found"),
    ],
)
def test_bad_input_is_a_4xx_with_a_json_error(
    http: httpx.Client, method: str, url: str, body: Any, status: int, message: str
) -> None:
    _wait_objects(http, 3)
    before = http.get("/api/interests").json()
    if isinstance(body, bytes):
        response = http.request(
            method, url, content=body, headers={"content-type": "application/json"}
        )
    else:
        response = http.request(method, url, json=body)
    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert http.get("/api/interests").json() == before  # no effect on the system


def test_writes_and_invocations_over_the_websocket_push_their_results(
    system: Running, http: httpx.Client
) -> None:
    _wait_objects(http, 3)
    with _ws(system) as socket:
        path = "local.plant.feed"
        socket.send(json.dumps({"op": "set", "path": path, "name": "flowRate", "value": "x"}))
        refused = json.loads(socket.recv(timeout=5))
        assert refused["status"] == 400 and "invalid value for property" in refused["error"]
        socket.send(json.dumps({"op": "set", "path": path, "name": "flowRate", "value": 0.25}))
        assert json.loads(socket.recv(timeout=5))["type"] == "ok"
        call = {"op": "invoke", "path": "local.kernel.master", "method": "steps", "args": [2]}
        socket.send(json.dumps({**call, "ref": 9}))
        accepted = json.loads(socket.recv(timeout=5))
        assert accepted["type"] == "ok" and accepted["ref"] == 9
        results: list[dict[str, Any]] = []
        for _ in range(200):
            http.post("/api/clock/step", json={"count": 1})
            try:
                message = json.loads(socket.recv(timeout=0.05))
            except TimeoutError:
                continue
            if message["type"] == "result" and message["id"] == accepted["id"]:
                results.append(message)
                break
    assert results and results[0]["status"] == "done", results


def test_bad_websocket_requests_are_answered_with_errors(system: Running) -> None:
    with _ws(system) as socket:
        for request in ("{oops", json.dumps({"op": "fly", "ref": 1}), json.dumps({"op": "open"})):
            socket.send(request)
            answer = json.loads(socket.recv(timeout=5))
            assert answer["type"] == "error" and 400 <= answer["status"] < 500, answer


def _come_and_go(system: Running, http: httpx.Client, count: int) -> tuple[Counter[str], int]:
    """``count`` WebSocket clients that leave mid-stream (every 100th with an interest of its
    own, whose objects are still being sent); then the tracked objects by type and the memory
    blocks allocated, once the last client is gone and the collector has run."""
    hub = system.web.hub
    assert hub is not None
    url = system.url.replace("http", "ws") + "/api/stream"
    for i in range(count):
        with connect(url, open_timeout=5) as socket:
            if i % 100 == 0:
                socket.send(json.dumps({"op": "open", "query": "SELECT * FROM local.plant"}))
                socket.recv(timeout=5)
    for _ in range(200):
        if not hub.clients:
            break
        http.get("/api/clock")
    # The parked components (virtual time) forget the closed subscriptions in their next step.
    http.post("/api/clock/step", json={"count": 3})
    gc.collect()
    return Counter(type(o).__qualname__ for o in gc.get_objects()), sys.getallocatedblocks()


def test_connections_leave_nothing_behind(system: Running, http: httpx.Client) -> None:
    hub = system.web.hub
    assert hub is not None
    _wait_objects(http, 3)
    before = http.get("/api/interests").json()
    census, blocks = _come_and_go(system, http, 100)  # caches and pools filled
    entries = len(hub.explorer.view)
    after, blocks_after = _come_and_go(system, http, 1000)
    assert not hub.clients
    assert http.get("/api/interests").json() == before
    assert len(hub.explorer.view) == entries
    # One object kept per connection would be 1,000 more of its type; the census moves by up to
    # a hundred or so (the closed interests' work still queued for parked components).
    grown = {kind: n - census[kind] for kind, n in after.items() if n - census[kind] > 500}
    assert not grown, grown
    # Whatever is kept per connection takes memory blocks: an object with a dict, a list or a
    # set of its own is two or more (the count moves by a few hundred otherwise).
    assert blocks_after - blocks < 2000, blocks_after - blocks


def test_a_token_guards_writes_and_invocations(plant: Path) -> None:
    for system in running(plant_config(ROOT, {"token": TOKEN, "open": ["local.plant"]})):
        with httpx.Client(base_url=system.url, trust_env=False, timeout=10) as http:
            write = http.put(
                "/api/objects/local.plant.feed/properties/flowRate", json={"value": 0.1}
            )
            assert write.status_code == 401 and "token" in write.json()["error"]
            invoke = http.post("/api/objects/local.kernel.master/methods/step", json={})
            assert invoke.status_code == 401
            assert http.post("/api/login", json={"token": "wrong"}).status_code == 401
            bearer = {"authorization": f"Bearer {TOKEN}"}
            for _ in range(500):
                allowed = http.put(
                    "/api/objects/local.plant.feed/properties/flowRate",
                    json={"value": 0.1},
                    headers=bearer,
                )
                if allowed.status_code != 404:  # the pump arrives in a cycle or two
                    break
            assert allowed.status_code == 202
            assert http.get("/").status_code == 200  # the page, which asks for the token
        with httpx.Client(base_url=system.url, trust_env=False, timeout=10) as page:
            assert page.post("/api/login", json={"token": TOKEN}).status_code == 200
            # The page's login: the cookie it sets carries the token from then on.
            again = page.put("/api/objects/local.plant.feed/properties/flowRate", json={"value": 0})
            assert again.status_code == 202, again.text
