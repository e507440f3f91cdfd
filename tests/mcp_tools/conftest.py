"""Helpers for driving ``/mcp`` in-process (Django test client) and over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from tests.factories import FarmFactory, MembershipFactory, bearer_for

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
ROLE_NAMES = {
    "Owner": ["Admin"],
    "Manager": ["Manager"],
    "Sales": ["Sales"],
    "Worker": [],
    "ReadOnly": ["ReadOnly"],
}


def modern_meta(capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
    }


# The header that names the target of a request (SEP-2243; SEP-2663 for tasks/*).
NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


class McpClient:
    """A bearer-carrying Django test client speaking JSON-RPC to ``/mcp``."""

    def __init__(self, bearer: str | None, membership: Any = None) -> None:
        self.client = Client()
        self.bearer = bearer
        self.membership = membership
        self._next_id = 0

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream"}
        if self.bearer:
            headers["Authorization"] = f"Bearer {self.bearer}"
        headers.update(extra)
        return headers

    def post_raw(
        self, body: bytes | str, *, content_type: str = "application/json", **headers: str
    ) -> Any:
        return self.client.generic(
            "POST", "/mcp", body, content_type=content_type, headers=self.headers(**headers)
        )

    def message(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        self._next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            body["params"] = params
        return self.post_raw(json.dumps(body), **headers)

    def rpc(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict:
        response = self.message(method, params, **headers)
        return json.loads(response.content)

    # handshake era (2025-11-25 header, no initialize needed)
    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return self.rpc("tools/call", params, **{"MCP-Protocol-Version": HANDSHAKE})

    def list_tools(self, cursor: str | None = None) -> dict:
        params = {"cursor": cursor} if cursor else {}
        return self.rpc("tools/list", params, **{"MCP-Protocol-Version": HANDSHAKE})

    # 2026-07-28
    def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        capabilities: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        **headers: str,
    ) -> Any:
        params = {**(params or {}), "_meta": {**modern_meta(capabilities), **(meta or {})}}
        base = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method in NAME_PARAM and isinstance(params.get(NAME_PARAM[method]), str):
            base["Mcp-Name"] = params[NAME_PARAM[method]]
        base.update(headers)
        return self.message(method, params, **base)


@pytest.fixture
def mcp_client(db: Any) -> Callable[..., McpClient]:
    """``mcp_client(role="Owner", farm=None)`` → a client with a fresh member's bearer."""

    def make(role: str = "Owner", farm: Any = None) -> McpClient:
        farm = farm or FarmFactory()
        membership = MembershipFactory(tenant=farm, roles=ROLE_NAMES[role])
        return McpClient(bearer_for(membership), membership)  # type: ignore[arg-type]

    return make


@pytest.fixture
def anonymous() -> McpClient:
    return McpClient(None)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # Factories set real passwords; PBKDF2 would dominate these tests' run time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
