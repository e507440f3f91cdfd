"""Helpers for driving ``/a2a`` in-process (Django test client)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from django.test import Client

from a2a_tools.skills import projectable
from mcp_tools.authoring.registry import default_registry
from tests.factories import FarmFactory, MembershipFactory, bearer_for

ROLE_NAMES = {
    "Owner": ["Admin"],
    "Manager": ["Manager"],
    "Sales": ["Sales"],
    "Worker": [],
    "ReadOnly": ["ReadOnly"],
}


def skill_message(
    skill: str,
    arguments: dict[str, Any] | None = None,
    *,
    key: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``SendMessage`` params object invoking ``skill`` (the documented shape)."""
    data: dict[str, Any] = {"skill": skill}
    if arguments is not None:
        data["arguments"] = arguments
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": data, "mediaType": "application/json"}],
    }
    if key is not None:
        message["metadata"] = {"idempotencyKey": key}
    message.update(extra)
    return {"message": message}


class A2AClient:
    """A bearer-carrying Django test client speaking A2A JSON-RPC to ``/a2a``."""

    def __init__(self, bearer: str | None, membership: Any = None) -> None:
        self.client = Client()
        self.bearer = bearer
        self.membership = membership
        self._next_id = 0

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"A2A-Version": "1.0"}
        if self.bearer:
            headers["Authorization"] = f"Bearer {self.bearer}"
        headers.update(extra)
        return {k: v for k, v in headers.items() if v is not None}

    def post_raw(
        self, body: bytes | str, *, content_type: str = "application/json", **headers: str
    ) -> Any:
        return self.client.generic(
            "POST", "/a2a", body, content_type=content_type, headers=self.headers(**headers)
        )

    def message(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        self._next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            body["params"] = params
        return self.post_raw(json.dumps(body), **headers)

    def rpc(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict:
        response = self.message(method, params, **headers)
        assert response.status_code == 200, response.content
        return json.loads(response.content)

    def send(
        self, skill: str, arguments: dict[str, Any] | None = None, *, key: str | None = None
    ) -> dict:
        return self.rpc("SendMessage", skill_message(skill, arguments, key=key))

    def task(self, skill: str, arguments: dict[str, Any] | None = None, **kw: Any) -> dict:
        reply = self.send(skill, arguments, **kw)
        assert "result" in reply, reply
        return reply["result"]["task"]

    def skills(self) -> list[str]:
        card = self.rpc("GetExtendedAgentCard")["result"]
        return [skill["id"] for skill in card["skills"]]


def projected(listed: Iterable[str]) -> set[str]:
    """The names among ``listed`` (a ``tools/list``) that A2A projects: registered tools that
    did not opt out and need no MCP client capability. Identity-factory and raw tools are not
    registered tools (built per request / unprotected), so they stay MCP-only."""
    specs = {spec.name: spec for spec in default_registry.specs()}
    return {name for name in listed if name in specs and projectable(specs[name])}


def artifact_data(task: dict[str, Any]) -> Any:
    (artifact,) = task["artifacts"]
    (part,) = artifact["parts"]
    return part["data"]


def task_error(task: dict[str, Any]) -> dict[str, Any]:
    assert task["status"]["state"] == "TASK_STATE_FAILED", task
    return task["status"]["message"]["parts"][0]["data"]["error"]


def error_reason(reply: dict[str, Any]) -> str:
    return reply["error"]["data"][0]["reason"]


@pytest.fixture
def a2a_client(db: Any) -> Callable[..., A2AClient]:
    """``a2a_client(role="Owner", farm=None)`` → a client with a fresh member's bearer."""

    def make(role: str = "Owner", farm: Any = None) -> A2AClient:
        farm = farm or FarmFactory()
        membership = MembershipFactory(tenant=farm, roles=ROLE_NAMES[role])
        return A2AClient(bearer_for(membership), membership)  # type: ignore[arg-type]

    return make


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
