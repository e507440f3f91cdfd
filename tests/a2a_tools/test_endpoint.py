"""``POST /a2a`` and the public card: HTTP refusals before the message is read, JSON-RPC errors
with HTTP 200 after (the A2A JSON-RPC binding), and the method, params and version ladder."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client, override_settings

from tests.a2a_tools.conftest import A2AClient, error_reason, skill_message
from tests.factories import FarmFactory, MembershipFactory
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


def test_the_public_card_is_served_without_authentication(client: Client) -> None:
    response = client.get("/.well-known/agent-card.json")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    card = json.loads(response.content)
    assert card["supportedInterfaces"][0]["url"] == "http://testserver/a2a"
    assert card["capabilities"]["extendedAgentCard"] is True
    assert client.post("/.well-known/agent-card.json").status_code == 405


@override_settings(A2A_TOOLS_PUBLIC_URL="https://farm.example/a2a")
def test_the_interface_url_can_be_pinned_behind_a_proxy(client: Client) -> None:
    card = json.loads(client.get("/.well-known/agent-card.json").content)
    assert card["supportedInterfaces"][0]["url"] == "https://farm.example/a2a"


def test_only_post_is_served(a2a_client: Any) -> None:
    response = a2a_client().client.get("/a2a")
    assert response.status_code == 405 and response["Allow"] == "POST"


def _auth_code(response: Any) -> str:
    info = json.loads(response.content)["error"]["data"][0]
    assert info["reason"] == "UNAUTHENTICATED"
    return str(info["metadata"]["code"])


def test_no_bearer_is_a_401_challenge_and_a_bad_one_too(client: Client) -> None:
    anonymous = A2AClient(None)
    response = anonymous.message("GetExtendedAgentCard")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="a2a"'
    assert _auth_code(response) == "Auth.NotAuthenticated"
    forged = A2AClient("ck_not_a_real_token_at_all")
    response = forged.message("GetExtendedAgentCard")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert _auth_code(response) == "Auth.InvalidToken"


@mutation(
    "tenancy/oauth/bearer.py",
    find="if request.path != conf.resource_path() or conf.resource_url(request) not in (",
    replace="if conf.resource_url(request) not in (",
)
def test_an_oauth_token_issued_for_mcp_is_refused_on_a2a() -> None:
    """OAuth access tokens are bound to the MCP endpoint (RFC 8707): on /a2a the token is
    ``Auth.InvalidAudience``, a JSON-RPC 401 — never a call under its scopes.

    Mutation: in ``tenancy.oauth.bearer.verify`` drop the request-path check → red (200)."""
    from tests.tenancy.oauth.flow import grant_tokens

    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    token = grant_tokens(membership)["access_token"]
    response = A2AClient(token).message("GetExtendedAgentCard")
    assert response.status_code == 401
    assert _auth_code(response) == "Auth.InvalidAudience"
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert "resource_metadata" not in response["WWW-Authenticate"]


def test_a_foreign_origin_is_refused(a2a_client: Any) -> None:
    response = a2a_client().message("GetExtendedAgentCard", Origin="https://evil.example")
    assert response.status_code == 403


def test_a_non_json_body_type_is_refused(a2a_client: Any) -> None:
    response = a2a_client().post_raw("{}", content_type="text/plain")
    assert response.status_code == 415


@override_settings(MCP_TOOLS_MAX_BODY_BYTES=256)
def test_an_oversized_body_is_refused_before_authentication() -> None:
    response = A2AClient(None).post_raw(json.dumps({"padding": "x" * 400}))
    assert response.status_code == 413


@override_settings(MCP_TOOLS_RATE="2/m")
def test_the_rate_limit_is_the_tokens_budget_shared_with_mcp(a2a_client: Any) -> None:
    client = a2a_client()
    from tests.mcp_tools.conftest import McpClient

    assert McpClient(client.bearer).list_tools()["result"]
    assert client.message("GetExtendedAgentCard").status_code == 200
    limited = client.message("GetExtendedAgentCard")
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert error_reason(json.loads(limited.content)) == "RATE_LIMITED"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"[]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "GetTask"}', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', -32600),
        (b'{"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "x"}}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}', -32602),
    ],
)
def test_protocol_errors_are_json_rpc_errors_with_http_200(
    a2a_client: Any, body: bytes, code: int
) -> None:
    response = a2a_client().post_raw(body)
    assert response.status_code == 200
    assert json.loads(response.content)["error"]["code"] == code


@pytest.mark.parametrize("version", [None, "", "0.3", "2.0", "1.1", "one"])
def test_a2a_version_other_than_1_0_is_not_supported(a2a_client: Any, version: Any) -> None:
    """An absent A2A-Version means 0.3 (spec §3.6.2), which is not served: -32009."""
    reply = a2a_client().rpc("GetExtendedAgentCard", **{"A2A-Version": version})
    assert reply["error"]["code"] == -32009
    assert error_reason(reply) == "VERSION_NOT_SUPPORTED"


def test_a2a_version_ignores_the_patch_and_may_come_as_a_query_parameter(
    a2a_client: Any,
) -> None:
    client = a2a_client()
    assert "result" in client.rpc("GetExtendedAgentCard", **{"A2A-Version": "1.0.2"})
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard"})
    response = client.client.generic(
        "POST",
        "/a2a?A2A-Version=1.0",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {client.bearer}"},
    )
    assert "result" in json.loads(response.content)


@pytest.mark.parametrize("method", ["SendStreamingMessage", "SubscribeToTask"])
def test_streaming_is_not_supported(a2a_client: Any, method: str) -> None:
    params = (
        skill_message("mcptest_whoami", {}) if method == "SendStreamingMessage" else {"id": "x"}
    )
    assert a2a_client().rpc(method, params)["error"]["code"] == -32004


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("CreateTaskPushNotificationConfig", {"taskId": "x", "url": "https://hook.example/"}),
        ("GetTaskPushNotificationConfig", {"taskId": "x", "id": "y"}),
        ("ListTaskPushNotificationConfigs", {"taskId": "x"}),
        ("DeleteTaskPushNotificationConfig", {"taskId": "x", "id": "y"}),
    ],
)
def test_push_notifications_are_not_supported(
    a2a_client: Any, method: str, params: dict[str, Any]
) -> None:
    assert a2a_client().rpc(method, params)["error"]["code"] == -32003


def test_a_push_config_on_send_message_is_not_supported(a2a_client: Any) -> None:
    params = {
        **skill_message("mcptest_whoami", {}),
        "configuration": {"taskPushNotificationConfig": {"url": "https://hook.example/"}},
    }
    assert a2a_client().rpc("SendMessage", params)["error"]["code"] == -32003


def test_the_extended_card_is_the_callers_roles(a2a_client: Any) -> None:
    owner, readonly = a2a_client("Owner"), a2a_client("ReadOnly")
    assert "mcptest_owner_report" in owner.skills()
    assert "mcptest_owner_report" not in readonly.skills()
    assert "mcptest_record_note" not in readonly.skills()


def _message(**fields: Any) -> dict[str, Any]:
    return {"message": {"messageId": "m", "role": "ROLE_USER", **fields}}


def _invoke(data: Any, **fields: Any) -> dict[str, Any]:
    return _message(parts=[{"data": data}], **fields)


NUL = "a\x00b"


@mutation("a2a_tools/params.py", find="where = _unstorable(params)", replace="where = None")
@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("SendMessage", [1, 2], -32600),
        ("GetExtendedAgentCard", "x", -32600),
        ("SendMessage", {"message": []}, -32602),
        ("SendMessage", _message(parts=["x"]), -32602),
        ("SendMessage", _message(parts=[{"raw": "!!not base64"}]), -32602),
        ("SendMessage", _invoke({"skill": "mcptest_whoami"}, metadata=[1]), -32602),
        ("SendMessage", _invoke({"skill": "mcptest_whoami"}, taskId=5), -32602),
        ("SendMessage", _invoke({"skill": "mcptest_whoami"}, taskId="t" * 5000), -32001),
        ("SendMessage", _invoke({"skill": "x" * 10000}), -32602),
        ("SendMessage", _invoke(5), -32602),
        ("SendMessage", _invoke(None), -32602),
        (
            "SendMessage",
            _invoke({"skill": "mcptest_record_note", "arguments": {"text": NUL}}),
            -32602,
        ),
        ("SendMessage", _message(parts=[{"text": "a\ud800"}]), -32602),
        ("SendMessage", _message(parts=[{"text": "hi"}], metadata={NUL: 1}), -32602),
        (
            "SendMessage",
            {**_message(parts=[{"text": "hi"}]), "configuration": {"historyLength": "x"}},
            -32602,
        ),
        ("GetTask", {"id": NUL}, -32602),
        ("GetTask", {"id": "t", "historyLength": 2**40}, -32602),
        ("GetTask", {"id": "t" * 5000}, -32001),
        ("ListTasks", {"pageSize": "x"}, -32602),
        ("ListTasks", {"statusTimestampAfter": "yesterday"}, -32602),
        ("ListTasks", {"pageToken": "eyJ4Ijp9"}, -32602),
        ("ListTasks", {"pageToken": "WyJub3QgYSBkYXRlIiwgIngiXQ"}, -32602),
        ("ListTasks", {"contextId": NUL}, -32602),
        ("CancelTask", {"id": NUL}, -32602),
        ("CancelTask", None, -32602),
    ],
)
def test_malformed_params_are_a_stable_json_rpc_error_never_a_500(
    a2a_client: Any, method: str, params: Any, code: int
) -> None:
    """Mutation: drop the ``_unstorable`` check from ``parse_params`` → red (the NUL and lone
    surrogate rows reach PostgreSQL: a 500, or a task that cannot be stored)."""
    response = a2a_client().message(method, params)
    assert response.status_code == 200
    assert json.loads(response.content)["error"]["code"] == code
