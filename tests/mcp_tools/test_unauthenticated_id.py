"""A 401 from ``/mcp`` answers the refused request's id (issue 33: it said ``"id": null`` to
a request whose id was 1, and a client matching answers to requests by id lost it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def _refusal(response: Any) -> dict[str, Any]:
    assert response.status_code == 401, response.content
    body: dict[str, Any] = json.loads(response.content)
    assert body["error"]["code"] == -32014
    return body


@mutation(
    "mcp_tools/serving/views.py",
    find="_jsonrpc.error_bytes(_request_id(request), UNAUTHENTICATED,",
    replace="_jsonrpc.error_bytes(None, UNAUTHENTICATED,",
)
@pytest.mark.parametrize("request_id", [1, "call-7", 0])
def test_a_401_answers_the_id_of_the_refused_request(anonymous: McpClient, request_id: Any):
    """Mutation: answer every 401 with ``"id": null`` again → red."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
    assert _refusal(anonymous.post_raw(json.dumps(body)))["id"] == request_id


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',  # a notification
        '{"jsonrpc": "2.0", "id": 1, "method": ',  # not JSON
        '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',  # a batch: no one id
        '{"jsonrpc": "2.0", "id": {"no": "objects"}, "method": "ping"}',  # not a valid id
    ],
)
def test_a_401_to_no_single_request_answers_a_null_id(anonymous: McpClient, body: str):
    assert _refusal(anonymous.post_raw(body))["id"] is None


def test_a_401_to_a_get_answers_a_null_id(anonymous: McpClient):
    response = anonymous.client.get("/mcp", headers=anonymous.headers())
    assert _refusal(response)["id"] is None
