"""The web component's guards and its other doors, against a live kernel running
examples/plant (docs/guide/web.md): TLS, the token made up beyond the loopback, CORS, request
rates, server-sent events, and recorder control found by class on the kernel's bus."""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import signal
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from web_support import plant_config, plant_package, running
from websockets.sync.client import connect

from sengen.runtime.components.web import Web
from sengen.runtime.components.web.config import WebConfig

ROOT = "webplant_more"  # the generated plant's root package, this module's own


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from plant_package(tmp_path_factory.mktemp("webplant"), ROOT)


def _client(url: str, **options: Any) -> httpx.Client:
    return httpx.Client(base_url=url, trust_env=False, timeout=10, **options)


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_tls_serves_https(plant: Path, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    for system in running(plant_config(ROOT, {"tlsCert": str(cert), "tlsKey": str(key)})):
        assert system.url.startswith("https://")
        with _client(system.url, verify=ssl.create_default_context(cafile=str(cert))) as http:
            assert http.get("/api/sessions").status_code == 200


def test_beyond_the_loopback_a_token_is_made_up() -> None:
    web = Web(WebConfig.model_validate({"host": "0.0.0.0"}))
    assert web.token is not None and len(web.token) >= 16
    assert Web(WebConfig()).token is None
    with pytest.raises(ValueError, match="tlsCert and tlsKey go together"):
        WebConfig.model_validate({"tlsCert": __file__})
    with pytest.raises(ValueError, match=r"no such file 'nothing\.pem'"):
        WebConfig.model_validate({"tlsCert": "nothing.pem", "tlsKey": __file__})


def test_cors_is_off_unless_configured_and_rates_are_bounded(plant: Path) -> None:
    """Requests per address, and requests over one WebSocket, beyond the rate: 429."""
    origin = {"origin": "http://elsewhere.example"}
    web = {"corsOrigins": ["http://elsewhere.example"], "rateLimit": 20.0}
    for system in running(plant_config(ROOT, web)):
        url = system.url.replace("http", "ws") + "/api/stream"
        with connect(url, open_timeout=5) as socket:  # its requests have a bucket of their own
            for ref in range(60):
                socket.send(json.dumps({"op": "rate", "hz": 10, "ref": ref}))
            answers = [json.loads(socket.recv(timeout=5)) for _ in range(60)]
        slowed = [a for a in answers if a["type"] == "error"]
        assert answers[0]["type"] == "ok" and slowed, answers
        assert slowed[0]["status"] == 429 and slowed[0]["ref"] > 0
        with _client(system.url) as http:
            allowed = http.get("/api/sessions", headers=origin)
            assert allowed.headers["access-control-allow-origin"] == "http://elsewhere.example"
            statuses = [http.get("/api/sessions").status_code for _ in range(60)]
            assert 429 in statuses and statuses[0] == 200
            refused = next(r for r in (http.get("/api/sessions") for _ in range(5)) if r.is_error)
            assert refused.json() == {"error": "too many requests: slow down"}
    for system in running(plant_config(ROOT, {})):
        with _client(system.url) as http:
            plain = http.get("/api/sessions", headers=origin)
            assert "access-control-allow-origin" not in plain.headers


def test_server_sent_events_stream_the_changes_of_an_interest(plant: Path) -> None:
    for system in running(plant_config(ROOT, {"open": ["local.plant"]})):
        with (
            _client(system.url) as http,
            http.stream("GET", "/api/events", params={"interest": 1, "hz": 20}) as stream,
        ):
            assert stream.headers["content-type"].startswith("text/event-stream")
            kinds: set[str] = set()
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    kinds.add(json.loads(line[6:])["type"])
                if {"added", "changes"} <= kinds:
                    break
        assert system.web.hub is not None


def test_recorders_are_found_by_class_and_started_and_stopped(plant: Path, tmp_path: Path) -> None:
    config = plant_config(ROOT, {}).replace(
        "load:\n",
        "load:\n- name: recorder\n  recordings:\n  - name: tank\n"
        f"    file: {tmp_path / 'tank.mcap'}\n"
        "    selections: ['SELECT * FROM local.plant']\n    autoStart: false\n",
    )
    for system in running(config):
        with _client(system.url) as http:
            for _ in range(500):
                found = http.get("/api/recorders").json()
                if found:
                    break
                http.get("/api/clock")
            assert [r["path"] for r in found] == ["local.kernel.tank"]
            assert found[0]["values"]["state"] == "idle"
            started = http.post("/api/recorders/local.kernel.tank/start")
            assert started.json()["status"] == "done", started.text
            stopped = http.post("/api/recorders/local.kernel.tank/stop")
            assert stopped.json()["status"] == "done", stopped.text
            missing = http.post("/api/recorders/local.kernel.nothing/start")
            assert missing.status_code == 404
    assert (tmp_path / "tank.mcap").stat().st_size > 0


def test_sengen_web_serves_a_system_and_stops_on_ctrl_c(plant: Path) -> None:
    tree = yaml.safe_load(plant_config(ROOT, {}))
    del tree["load"]
    (plant / "system.yaml").write_text(yaml.safe_dump(tree))
    process = subprocess.Popen(
        [sys.executable, "-m", "sengen", "web", "system.yaml", "--port", "0"],
        cwd=plant,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        lines: list[str] = []
        while (url := re.search(r"web explorer at (\S+)", lines[-1] if lines else "")) is None:
            lines.append(process.stderr.readline())
            assert lines[-1], lines  # the process ended without serving
        with _client(url.group(1)) as http:
            sessions = http.get("/api/sessions").json()
            assert any(s["name"] == "local" for s in sessions)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) in (0, 130)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_sengen_web_refuses_a_bad_configuration_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("load:\n  - {name: web, port: -1}\n")
    result = subprocess.run(
        [sys.executable, "-m", "sengen", "web", "bad.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "port" in result.stderr and "Traceback" not in result.stderr
