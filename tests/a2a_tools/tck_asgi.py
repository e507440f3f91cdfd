"""ASGI wrapper for the A2A TCK run only.

The kit (snapshot 410ba92) reads the Agent Card under the URL it posts JSON-RPC to, so
``…/a2a/.well-known/agent-card.json`` is served as the card. And many of its checks post
without the credentials the card declares and without the ``A2A-Version`` header §3.6.1
requires of every client: under the ``/tck-injected`` prefix (mounted as the ASGI root path,
so the card names that URL), a request lacking them gets the bearer of ``A2A_TCK_BEARER`` and
``A2A-Version: 1.0``. The authentication and security checks run against the plain ``/a2a``,
where nothing is added. Everything else — middleware, authentication, the views — is the real
application, and a request carrying its own headers is never changed.
"""

from __future__ import annotations

import os
from typing import Any

from cluck.asgi import application as cluck_application

INJECTED = "/tck-injected"
CARD_UNDER_ENDPOINT = "/a2a/.well-known/agent-card.json"


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        path: str = scope["path"]
        root = ""
        if path.startswith(INJECTED + "/"):
            root = INJECTED
            headers = list(scope.get("headers", []))
            names = {name.lower() for name, _ in headers}
            if b"authorization" not in names:
                bearer = os.environ["A2A_TCK_BEARER"]
                headers.append((b"authorization", f"Bearer {bearer}".encode()))
            if b"a2a-version" not in names:
                headers.append((b"a2a-version", b"1.0"))
            scope = {**scope, "headers": headers, "root_path": INJECTED}
        if path[len(root) :] == CARD_UNDER_ENDPOINT:
            scope = {**scope, "path": root + "/.well-known/agent-card.json", "raw_path": None}
    await cluck_application(scope, receive, send)
