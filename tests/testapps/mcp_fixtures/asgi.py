"""ASGI wrapper for the conformance run only: the suite's client sends no Authorization
header, so a bearer from ``MCP_FIXTURES_BEARER`` is added when a request carries none.
Everything else (middleware, auth, the view) is the real application."""

from __future__ import annotations

import os
from typing import Any

from cluck.asgi import application as cluck_application


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        headers = list(scope.get("headers", []))
        if not any(name.lower() == b"authorization" for name, _ in headers):
            bearer = os.environ["MCP_FIXTURES_BEARER"]
            headers.append((b"authorization", f"Bearer {bearer}".encode()))
            scope = {**scope, "headers": headers}
    await cluck_application(scope, receive, send)
