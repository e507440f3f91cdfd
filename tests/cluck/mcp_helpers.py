"""Driving the farm's tools in-process: a bearer for a demo user and a ``tools/call`` helper."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from cluck.models import Farm
from tenancy.models import Membership
from tenancy.tokens import issue_token
from tests.tool_errors import tool_error

HANDSHAKE = "2025-11-25"


def demo_bearer(email: str, farm_code: str | None = None) -> str:
    code = farm_code or email.split("@", 1)[1].split(".", 1)[0]
    membership = Membership.objects.get(user__email=email, tenant__code=code)
    return issue_token(membership=membership, name="test")[1]


class Tools:
    """``tools/call`` and ``tools/list`` over ``/mcp`` with one bearer."""

    def __init__(self, bearer: str) -> None:
        self.client = Client()
        self.bearer = bearer
        self._id = 0

    def rpc(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self._id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            body["params"] = params
        response = self.client.post(
            "/mcp",
            json.dumps(body),
            content_type="application/json",
            headers={
                "Authorization": f"Bearer {self.bearer}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": HANDSHAKE,
            },
        )
        assert response.status_code == 200, response.content
        return json.loads(response.content)

    def result(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``CallToolResult`` of a call (success or tool error)."""
        reply = self.rpc("tools/call", {"name": name, "arguments": arguments or {}})
        assert "result" in reply, reply
        return reply["result"]

    def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.result(name, arguments)
        assert result["isError"] is False, result
        return result["structuredContent"]

    def error(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """The structured error of a tool call that must fail: ``{code, message, ...}``."""
        result = self.result(name, arguments)
        assert result["isError"] is True, result
        return tool_error(result)

    def names(self) -> set[str]:
        names: set[str] = set()
        cursor = None
        while True:
            reply = self.rpc("tools/list", {"cursor": cursor} if cursor else {})
            names |= {tool["name"] for tool in reply["result"]["tools"]}
            cursor = reply["result"].get("nextCursor")
            if not cursor:
                return names


def sunrise() -> Farm:
    return Farm.objects.get(code="sunrise")
