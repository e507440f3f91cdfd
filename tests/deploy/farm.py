"""The farm over real HTTP for the deployment tests: MCP (2025-11-25 era), A2A and REST with one
bearer, through ``httpx`` against a base URL (a server, or the proxy in front of several)."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import Any

import httpx

HANDSHAKE = "2025-11-25"
TERMINAL_TASK = ("completed", "failed", "cancelled")
OVERLOADED = -32010
OVERLOADED_RETRIES = 30


def record_args(day: dt.date, flock: str) -> dict[str, Any]:
    """A valid ``cluck_record_daily_entry`` for ``flock`` (name or id) on ``day``."""
    return {
        "flock": flock,
        "date": day.isoformat(),
        "totalEggs": 950,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 2,
        "grades": [{"grade": "Large", "quantity": 900}, {"grade": "Medium", "quantity": 35}],
    }


def tool_error(result: dict[str, Any]) -> dict[str, Any]:
    """The ``{"code", "message", "data"?}`` of an ``isError`` tool result."""
    assert result.get("isError") is True, result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


class Farm:
    """One member's HTTP client; every JSON-RPC reply is checked for an internal error first."""

    def __init__(self, base: str, bearer: str, *, timeout: float = 30) -> None:
        self.base = base.rstrip("/")
        self.http = httpx.Client(
            base_url=self.base, headers={"Authorization": f"Bearer {bearer}"}, timeout=timeout
        )
        self.internal_errors: list[str] = []

    def close(self) -> None:
        self.http.close()

    def _jsonrpc(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        """POST one JSON-RPC request; retried, as a client should, while the server answers
        -32010 (every tool slot busy: the 2-core machine under a burst) after ``retryAfterMs``."""
        for _ in range(OVERLOADED_RETRIES):
            response = self.http.post(path, json=body, headers=headers)
            error = response.json().get("error") if response.status_code < 500 else None
            if not (isinstance(error, dict) and error.get("code") == OVERLOADED):
                break
            time.sleep(error.get("data", {}).get("retryAfterMs", 500) / 1000)
        if response.status_code >= 500:
            self.internal_errors.append(f"{path} {body.get('method')}: {response.text[:300]}")
        reply = response.json()
        error = reply.get("error") if isinstance(reply, dict) else None
        if error and error.get("code") == -32603:
            self.internal_errors.append(f"{path} {body.get('method')}: {error}")
        return reply

    def mcp(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One ``/mcp`` request in the 2025-11-25 era (stateless, no initialize); the reply."""
        body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
        headers = {"Accept": "application/json", "MCP-Protocol-Version": HANDSHAKE}
        reply: dict[str, Any] = self._jsonrpc("/mcp", body, headers)
        return reply

    def call(self, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """``tools/call``; its ``CallToolResult`` (a JSON-RPC error fails the test)."""
        reply = self.mcp("tools/call", {"name": name, "arguments": arguments, **extra})
        assert "result" in reply, reply
        result: dict[str, Any] = reply["result"]
        return result

    def task_outcome(self, task_id: str, *, within: float = 60) -> tuple[str, dict[str, Any]]:
        """Poll ``tasks/get`` until the task is terminal; ``(status, tasks/result reply)``."""
        deadline = time.monotonic() + within
        while True:
            task = self.mcp("tasks/get", {"taskId": task_id})["result"]
            if task["status"] in TERMINAL_TASK or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        return task["status"], self.mcp("tasks/result", {"taskId": task_id})

    def a2a(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}
        reply: dict[str, Any] = self._jsonrpc("/a2a", body, {"A2A-Version": "1.0"})
        return reply

    def skill(
        self, skill: str, arguments: dict[str, Any], *, key: str | None = None, **config: Any
    ) -> dict[str, Any]:
        """``SendMessage`` invoking ``skill``; the JSON-RPC reply."""
        message: dict[str, Any] = {
            "messageId": uuid.uuid4().hex,
            "role": "ROLE_USER",
            "parts": [{"data": {"skill": skill, "arguments": arguments}}],
        }
        if key is not None:
            message["metadata"] = {"idempotencyKey": key}
        params: dict[str, Any] = {"message": message}
        if config:
            params["configuration"] = config
        return self.a2a("SendMessage", params)

    def rest(
        self, method: str, path: str, *, key: str | None = None, **kwargs: Any
    ) -> httpx.Response:
        headers = {"Idempotency-Key": key} if key else {}
        response = self.http.request(method, path, headers=headers, **kwargs)
        if response.status_code >= 500:
            self.internal_errors.append(f"{method} {path}: {response.text[:300]}")
        return response
