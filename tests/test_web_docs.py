"""docs/guide/web-api.md is the web API's reference, generated from its OpenAPI description:
this test fails when the page is stale, and ``SENGEN_UPDATE_GOLDEN=1`` rewrites it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

from sengen.runtime.components.web.app import make_app
from sengen.runtime.components.web.bridge import Bridge
from sengen.runtime.components.web.config import WebConfig
from sengen.runtime.components.web.explorer import Explorer
from sengen.runtime.components.web.hub import Hub

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "web-api.md"
HEAD = """# The web API

Generated from the web component's OpenAPI description (`/api/openapi.json`, browsable at
`/api/docs` of a running server) by `tests/test_web_docs.py`; do not edit. How to use it:
[web.md](web.md).

Values are JSON in the shell's form. Errors are `{"error": message}` with a 4xx status. When a
token is set, every `/api` request but `/api/login` carries it (`Authorization: Bearer`).

"""


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rpartition("/")[2]
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_name(schema.get('items', {}))}"
    return str(schema.get("type", "any"))


def reference() -> str:
    explorer = cast(Explorer, None)  # the description needs no running system
    hub = Hub(explorer, 1)
    app = make_app(explorer, Bridge(), hub, WebConfig(), None)
    spec = app.openapi()
    lines = [HEAD.rstrip(), ""]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            lines.append(f"## `{method.upper()} {path}`")
            lines.append("")
            summary = operation.get("description") or operation.get("summary", "")
            lines += [summary.strip(), ""] if summary else []
            params = operation.get("parameters", [])
            if params:
                lines.append("| parameter | in | type | description |")
                lines.append("|---|---|---|---|")
                for p in params:
                    kind = _schema_name(p.get("schema", {}))
                    lines.append(
                        f"| `{p['name']}` | {p['in']} | {kind} | {p.get('description', '')} |"
                    )
                lines.append("")
            body = operation.get("requestBody")
            if body is not None:
                schema = body["content"]["application/json"]["schema"]
                lines += [f"Body: `{_schema_name(schema)}`.", ""]
    lines.append("## Bodies")
    lines.append("")
    for name, schema in spec["components"]["schemas"].items():
        if name in ("HTTPValidationError", "ValidationError"):
            continue
        lines.append(f"### `{name}`")
        lines.append("")
        for field, prop in schema.get("properties", {}).items():
            description = prop.get("description", "")
            lines.append(
                f"- `{field}`: {_schema_name(prop)}{'. ' + description if description else ''}"
            )
        lines.append("")
    lines.append("## Push: `/api/stream` (WebSocket) and `/api/events` (server-sent events)")
    lines.append("")
    lines.append(
        "Requests on the WebSocket are JSON objects with an `op`: `open` (`query`), `close`"
        " (`interest`), `follow` (`interests`), `watch` (`paths` or null), `rate` (`hz`), `set`"
        " (`path`, `name`, `value`), `invoke` (`path`, `method`, `args`); each may carry a `ref`,"
        " echoed in its `ok` or `error` answer. Messages pushed: `added`, `removed`, `changes`"
        " (the latest committed state of each changed object, coalesced), `event`, `result`,"
        " `dropped`."
    )
    return "\n".join(lines) + "\n"


def test_the_api_reference_is_up_to_date() -> None:
    text = reference()
    if os.environ.get("SENGEN_UPDATE_GOLDEN") == "1":
        PAGE.write_text(text)
    assert PAGE.read_text() == text, "run SENGEN_UPDATE_GOLDEN=1 pytest tests/test_web_docs.py"
