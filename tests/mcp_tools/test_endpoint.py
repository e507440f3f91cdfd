"""``/mcp`` HTTP behaviour in both eras, driven in-process through the full middleware stack."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory, override_settings
from django.utils import timezone

from mcp_tools.serving.middleware import BodyCapMiddleware
from tenancy import AuthenticationFailedError, bearer_challenge
from tenancy.models import AccessToken
from tenancy.services import user_credentials_changed
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, McpClient, modern_meta
from tests.mutations import mutation
from tests.tool_errors import tool_error

pytestmark = pytest.mark.django_db

# What the server advertises in both eras: nothing that needs a session (no list-change
# notifications, no subscriptions). Tasks differ by era (core in 2025-11-25, an extension in
# 2026-07-28).
SERVED = {
    "tools": {"listChanged": False},
    "logging": {},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
    "completions": {},
}


def _json(response):
    return json.loads(response.content)


def _no_session(response):
    assert "Mcp-Session-Id" not in response
    assert "mcp-session-id" not in {k.lower() for k in response.headers}


# --- HTTP layer ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_non_post_methods_are_405_with_allow_post(mcp_client, method):
    client = mcp_client()
    response = client.client.generic(method, "/mcp", headers=client.headers())
    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_foreign_origin_is_403_and_allowed_or_absent_origins_pass(mcp_client):
    client = mcp_client()
    assert client.message("ping", Origin="http://evil.example").status_code == 403
    assert client.message("ping", Origin="http://localhost:5173").status_code == 200
    assert client.message("ping").status_code == 200


def _assert_jsonrpc_401(response, code: str, request_id: object = None) -> dict:
    """The one 401 shape of /mcp: JSON-RPC error -32014, tenancy's stable code in data; the
    id of the refused request (``None`` for a GET)."""
    assert response.status_code == 401, response.content
    assert response["Content-Type"] == "application/json"
    body = _json(response)
    assert body["jsonrpc"] == "2.0" and body["id"] == request_id
    assert body["error"]["code"] == -32014
    assert body["error"]["data"] == {"code": code}
    return body


def test_missing_bearer_is_401_with_a_bearer_challenge(anonymous):
    response = anonymous.message("ping")
    _assert_jsonrpc_401(response, "Auth.NotAuthenticated", request_id=1)
    # With an OAuth server installed (the farm's tenancy.oauth) the challenge also names the
    # RFC 9728 metadata and the scopes: composed by tenancy for the request's path.
    expected = bearer_challenge(realm="mcp", request=RequestFactory().post("/mcp"))
    assert response["WWW-Authenticate"] == expected


def _garbage(membership) -> str:
    return "ck_not-a-real-token"


def _revoke(membership) -> None:
    AccessToken.objects.filter(membership=membership).update(revoked_at=timezone.now())


def _expire(membership) -> None:
    AccessToken.objects.filter(membership=membership).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )


@mutation(
    "mcp_tools/serving/views.py",
    find="@handles_own_idempotency\n@renders_authentication_failure\n",
    replace="@handles_own_idempotency\n",
)
@mutation(
    "mcp_tools/serving/views.py",
    find='failure, request=request, realm=None if failure else "mcp"',
    replace='None, request=request, realm=None if failure else "mcp"',
)
@pytest.mark.parametrize(
    ("spoil", "code"),
    [
        ("garbage", "Auth.InvalidToken"),
        ("revoked", "Auth.InvalidToken"),
        ("expired", "Auth.InvalidToken"),
        ("superseded", "Auth.CredentialsSuperseded"),
        ("disabled", "Auth.AccountDisabled"),
    ],
)
def test_a_refused_bearer_gets_the_same_jsonrpc_401_as_a_missing_one(mcp_client, spoil, code):
    """One endpoint, one 401 shape: tenancy records the refusal and /mcp renders it.

    Mutation: drop ``@renders_authentication_failure`` from ``mcp_view`` → red (the
    middleware answers ``application/problem+json``). Mutation: render the missing-bearer
    challenge for a refused one (``bearer_challenge(None, ...)``) → red.
    """
    client = mcp_client()
    membership = client.membership
    if spoil == "garbage":
        client.bearer = _garbage(membership)
    elif spoil == "revoked":
        _revoke(membership)
    elif spoil == "expired":
        _expire(membership)
    elif spoil == "superseded":
        user_credentials_changed(user=membership.user)
    else:
        type(membership.user).objects.filter(pk=membership.user_id).update(is_active=False)
    response = client.message("ping")
    body = _assert_jsonrpc_401(response, code, request_id=1)
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="')
    assert body["error"]["message"] in challenge


@mutation(
    "mcp_tools/serving/views.py",
    find=(
        '"WWW-Authenticate": bearer_challenge(\n'
        '                failure, request=request, realm=None if failure else "mcp"\n'
        "            )"
    ),
    replace='"WWW-Authenticate": \'Bearer error="invalid_token"\'',
)
def test_mcp_and_rest_send_the_same_challenge_for_the_same_refused_bearer(mcp_client):
    """The challenge is built in one place (``tenancy.bearer_challenge``).

    Mutation: hand-write the header in the /mcp view or in the middleware → red.
    """
    client = mcp_client()
    _revoke(client.membership)
    mcp = client.message("ping")
    rest = client.client.get("/api/v1/flocks/", headers=client.headers())
    assert rest.status_code == 401 and rest["Content-Type"] == "application/problem+json"
    assert rest.json()["code"] == "Auth.InvalidToken"
    error = AuthenticationFailedError()
    assert rest["WWW-Authenticate"] == bearer_challenge(error)
    # /mcp's adds what only the protected resource has: resource_metadata and scope.
    on_mcp = bearer_challenge(error, request=RequestFactory().post("/mcp"))
    assert mcp["WWW-Authenticate"] == on_mcp
    assert on_mcp.startswith(bearer_challenge(error) + ", resource_metadata=")


@mutation(
    "mcp_tools/serving/views.py",
    find=(
        '    tenant = getattr(request, "tenant", None)\n'
        "    if not isinstance(tenant, TenantContext)"
    ),
    replace=(
        '    if request.method != "POST":\n'
        "        return _error(405, -32600, "
        '"Method not allowed: this endpoint serves POST only")\n'
        '    tenant = getattr(request, "tenant", None)\n'
        "    if not isinstance(tenant, TenantContext)"
    ),
)
@pytest.mark.parametrize("bearer", ["refused", "missing"])
def test_origin_comes_before_authentication_and_authentication_before_the_method(
    mcp_client, bearer
):
    """A GET without valid credentials is a 401, as mcp-remote's SSE fallback needs (it would
    report a 405 instead of the 401). Mutation: check the method before authentication → red.
    """
    client = mcp_client()
    if bearer == "refused":
        _revoke(client.membership)
        code = "Auth.InvalidToken"
    else:
        client.bearer = None
        code = "Auth.NotAuthenticated"
    _assert_jsonrpc_401(client.client.get("/mcp", headers=client.headers()), code)
    assert client.message("ping", Origin="http://evil.example").status_code == 403


def test_non_json_content_type_is_400(mcp_client):
    response = mcp_client().post_raw(
        '{"jsonrpc":"2.0","id":1,"method":"ping"}', content_type="text/plain"
    )
    assert response.status_code == 400


def test_accept_without_json_is_406(mcp_client):
    assert mcp_client().message("ping", Accept="text/event-stream").status_code == 406


@mutation(
    "cluck/settings.py", find='    "mcp_tools.serving.middleware.BodyCapMiddleware",\n', replace=""
)
@mutation(
    "mcp_tools/serving/middleware.py",
    find=(
        "        refused = check_body(request)\n"
        "        return refused if refused is not None else self.get_response(request)"
    ),
    replace=(
        "        response = self.get_response(request)\n"
        "        refused = check_body(request)\n"
        "        return refused if refused is not None else response"
    ),
)
def test_oversized_body_is_413_before_authentication(db, django_assert_num_queries):
    """Guard 29: the cap runs before auth — a well-formed but unknown bearer with a big body
    gets 413, not 401, and the token is never looked up (no query at all).

    Mutations (each seen red): remove ``BodyCapMiddleware`` from MIDDLEWARE → 401 after a
    token lookup; in ``BodyCapMiddleware.__call__`` call ``get_response`` before
    ``check_body`` → the lookup runs (one query). The old mutation, "move BodyCapMiddleware
    after TenancyMiddleware", changes nothing at run time: tenancy authenticates in
    ``process_view``, which runs after every middleware's ``__call__``; the ordering check
    ``mcp_tools.E003`` is configuration hygiene, not this guard.
    """
    big = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "a" * 40000}})
    client = McpClient("ck_pat_" + "x" * 43)
    with django_assert_num_queries(0):
        response = client.post_raw(big)
    assert response.status_code == 413
    assert _json(response)["error"]["code"] == -32600


@mutation(
    "mcp_tools/serving/middleware.py",
    find='    declared = request.META.get("CONTENT_LENGTH")\n',
    replace=(
        '    declared = request.META.get("CONTENT_LENGTH")\n'
        "    if not declared:\n"
        "        return None\n"
    ),
)
@override_settings(MCP_TOOLS_MAX_BODY_BYTES=100)
def test_body_cap_counts_bytes_actually_read_not_only_content_length():
    """A body longer than its (absent) Content-Length is still refused.

    Mutation: return early when CONTENT_LENGTH is absent → red.
    """
    request = RequestFactory().post("/mcp", data=b"x" * 500, content_type="application/json")
    del request.META["CONTENT_LENGTH"]
    request._stream = io.BytesIO(b"x" * 500)
    response = BodyCapMiddleware(lambda r: HttpResponse("through"))(request)
    assert response.status_code == 413
    small = RequestFactory().post("/mcp", data=b"y" * 50, content_type="application/json")
    assert BodyCapMiddleware(lambda r: HttpResponse(r.body))(small).content == b"y" * 50


# --- strict envelope -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("{not json", -32700),
        ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":NaN}}', -32700),
        ('{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}', -32600),
        ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', -32600),
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + '{"a":' * 40 + "1" + "}" * 41,
            -32600,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":['
            + ",".join(["0"] * 5000)
            + "]}}",
            -32600,
        ),
        ('{"jsonrpc":"2.0","id":"' + "x" * 200 + '","method":"ping"}', -32600),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600),
        ('{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600),
        ('"just a string"', -32600),
    ],
    ids=[
        "malformed",
        "nan",
        "duplicate-key",
        "batch",
        "depth",
        "nodes",
        "id-length",
        "bool-id",
        "version",
        "scalar",
    ],
)
def test_malformed_envelopes_are_refused_with_400(mcp_client, body, code):
    response = mcp_client().post_raw(body)
    assert response.status_code == 400
    assert _json(response)["error"]["code"] == code


@pytest.mark.parametrize("headers", [{}, {"MCP-Protocol-Version": MODERN}])
def test_notifications_and_posted_responses_get_202_and_no_body(mcp_client, headers):
    client = mcp_client()
    response = client.post_raw('{"jsonrpc":"2.0","method":"notifications/initialized"}', **headers)
    assert (response.status_code, response.content) == (202, b"")
    legacy = client.post_raw('{"jsonrpc":"2.0","id":9,"result":{}}')
    assert (legacy.status_code, legacy.content) == (202, b"")


# --- handshake era ---------------------------------------------------------------------------


def test_initialize_negotiates_and_creates_no_session(mcp_client):
    client = mcp_client()
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    response = client.message("initialize", params)
    _no_session(response)
    result = _json(response)["result"]
    assert result["protocolVersion"] == HANDSHAKE
    assert result["capabilities"] == {
        **SERVED,
        "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}},
    }
    offered = client.rpc("initialize", {**params, "protocolVersion": "1999-01-01"})
    assert offered["result"]["protocolVersion"] == HANDSHAKE
    old = client.rpc("initialize", {**params, "protocolVersion": "2025-03-26"})
    assert old["result"]["protocolVersion"] == "2025-03-26"


@mutation(
    "mcp_tools/serving/views.py",
    find="@csrf_exempt\n@handles_own_idempotency\n",
    replace="@csrf_exempt\n",
)
def test_initialize_and_tools_list_need_no_idempotency_key(mcp_client):
    """Guard 18: the view is exempt from the HTTP adapter (it carries the marker).

    Mutation: drop ``@handles_own_idempotency`` from ``mcp_view`` → red (400 for a POST
    without an Idempotency-Key).
    """
    client = mcp_client()
    params = {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    assert client.message("initialize", params).status_code == 200
    response = client.message("tools/list", {}, **{"MCP-Protocol-Version": HANDSHAKE})
    assert response.status_code == 200
    assert "tools" in _json(response)["result"]


def test_ping_and_unknown_methods_in_the_handshake_era(mcp_client):
    client = mcp_client()
    assert client.rpc("ping")["result"] == {}
    # Subscriptions need a session: not served (capabilities say subscribe: false).
    response = client.message("resources/subscribe", {"uri": "test://static-text"})
    assert response.status_code == 200
    assert _json(response)["error"]["code"] == -32601


@mutation(
    "mcp_tools/serving/views.py",
    find='era = era_for(headers.get("MCP-Protocol-Version"), message)',
    replace=(
        "era = mcp_view.__dict__.setdefault(\n"
        '        "era", era_for(headers.get("MCP-Protocol-Version'
        '"), message)\n'
        "    )"
    ),
)
def test_no_session_state_survives_between_requests(mcp_client):
    """Guard 8: a second request never sees anything of the first.

    Mutation: cache the negotiated version (or the CallContext) in a module global keyed by
    nothing → red (the second caller would see the first's version or identity).
    """
    owner = mcp_client("Owner")
    worker = mcp_client("Worker")
    init = owner.message(
        "initialize",
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    _no_session(init)
    first = owner.call("mcptest_whoami")["result"]["structuredContent"]
    second = worker.rpc("tools/call", {"name": "mcptest_whoami"})["result"]["structuredContent"]
    assert first["role"] == "Owner" and second["role"] == "Worker"
    assert first["user_id"] != second["user_id"]
    assert second["protocol_version"] == "2025-03-26"  # header-less: the spec default
    assert first["protocol_version"] == HANDSHAKE


# --- 2026-07-28 ------------------------------------------------------------------------------


def test_discover_and_modern_results_carry_the_envelope(mcp_client):
    client = mcp_client()
    response = client.modern("server/discover")
    _no_session(response)
    result = _json(response)["result"]
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {
        **SERVED,
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
    assert result["resultType"] == "complete"
    assert "io.modelcontextprotocol/serverInfo" in result["_meta"]
    listed = _json(client.modern("tools/list"))["result"]
    assert (listed["resultType"], listed["cacheScope"], listed["ttlMs"]) == (
        "complete",
        "private",
        0,
    )
    called = _json(client.modern("tools/call", {"name": "mcptest_whoami", "arguments": {}}))
    assert called["result"]["resultType"] == "complete"
    assert called["result"]["structuredContent"]["protocol_version"] == MODERN


def test_modern_unknown_method_is_404_and_initialize_is_not_served(mcp_client):
    client = mcp_client()
    for method in ("resources/subscribe", "initialize", "ping", "logging/setLevel"):
        response = client.modern(method)
        assert response.status_code == 404, method
        assert _json(response)["error"]["code"] == -32601


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Method": "tools/list"},
        {"Mcp-Name": "mcptest_crash"},
        {"MCP-Protocol-Version": "2025-11-25"},
    ],
    ids=["method-mismatch", "name-mismatch", "version-mismatch"],
)
def test_modern_header_mismatches_are_400_header_mismatch(mcp_client, headers):
    client = mcp_client()
    params = {"name": "mcptest_whoami", "arguments": {}, "_meta": modern_meta()}
    base = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "mcptest_whoami",
        **headers,
    }
    response = client.message("tools/call", params, **base)
    assert response.status_code == 400
    assert _json(response)["error"]["code"] == -32020


def test_modern_missing_headers_are_400(mcp_client):
    client = mcp_client()
    params = {"_meta": modern_meta()}
    missing_method = client.message("tools/list", params, **{"MCP-Protocol-Version": MODERN})
    assert (missing_method.status_code, _json(missing_method)["error"]["code"]) == (400, -32020)
    missing_version = client.message("tools/list", params, **{"Mcp-Method": "tools/list"})
    assert (missing_version.status_code, _json(missing_version)["error"]["code"]) == (400, -32020)


def test_unsupported_protocol_version_is_400_with_the_supported_list(mcp_client):
    client = mcp_client()
    meta = {**modern_meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    response = client.message(
        "tools/list",
        {"_meta": meta},
        **{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"},
    )
    assert response.status_code == 400
    error = _json(response)["error"]
    assert error["code"] == -32022
    assert error["data"]["supported"] == [MODERN]


# --- tools/call outcomes ---------------------------------------------------------------------


def test_unknown_and_hidden_tools_are_the_same_invalid_params_error(mcp_client):
    worker = mcp_client("Worker")
    unknown = worker.call("no_such_tool")
    hidden = worker.call("mcptest_owner_report")
    assert unknown["error"]["code"] == hidden["error"]["code"] == -32602
    assert "result" not in hidden
    owner = mcp_client("Owner")
    assert owner.call("mcptest_owner_report")["result"]["isError"] is False
    modern = worker.modern("tools/call", {"name": "mcptest_owner_report", "arguments": {}})
    assert (modern.status_code, _json(modern)["error"]["code"]) == (400, -32602)


def test_arguments_are_camel_case_validated_and_unknown_ones_refused(mcp_client):
    client = mcp_client()
    ok = client.call("mcptest_whoami", {"asOfDate": "2026-03-04"})["result"]
    assert ok["structuredContent"]["as_of_date"] == "2026-03-04"
    assert json.loads(ok["content"][0]["text"]) == ok["structuredContent"]
    for arguments in ({"as_of_date": "2026-03-04"}, {"asOfDate": "not a date"}, {"bogus": 1}):
        result = client.call("mcptest_whoami", arguments)["result"]
        assert result["isError"] is True
        assert tool_error(result)["code"] == "Tool.InvalidArguments"


def test_domain_errors_and_unexpected_exceptions_become_is_error(mcp_client, caplog):
    client = mcp_client()
    domain = client.call("test_error_handling")["result"]
    assert domain["isError"] is True
    assert tool_error(domain)["code"] == "Conformance.Intentional"
    crash = client.call("mcptest_crash")["result"]
    assert crash["isError"] is True
    error = tool_error(crash)
    assert error["code"] == "Tool.InternalError"
    assert "secret internal detail" not in json.dumps(crash)
    assert error["data"]["requestId"] in caplog.text and "secret internal detail" in caplog.text


def test_content_block_tools_return_their_blocks(mcp_client):
    result = mcp_client().call("test_multiple_content_types")["result"]
    assert [block["type"] for block in result["content"]] == ["text", "image", "resource"]
    assert "structuredContent" not in result


@mutation(
    "mcp_tools/serving/views.py",
    find="if usage is not None and usage.should_limit:",
    replace="if False:",
)
@override_settings(MCP_TOOLS_RATE="2/m")
def test_rate_limit_per_token_is_429_with_retry_after(mcp_client):
    """The budget is the member's, counted by ``TenancyMiddleware`` with the token check
    (``tenancy.rates.throttling``); ``mcp_view`` answers it.

    Mutation: skip the ``usage.should_limit`` check in ``mcp_view`` → red."""
    client = mcp_client()
    other = mcp_client()
    assert client.message("ping").status_code == 200
    assert client.message("ping").status_code == 200
    limited = client.message("ping")
    assert limited.status_code == 429
    assert int(limited["Retry-After"]) >= 1
    body = _json(limited)
    assert body["id"] is None and body["error"]["code"] == -32012
    assert other.message("ping").status_code == 200  # per member, not global


OAUTH_PROBES = [
    # What mcp-remote 0.15 and Claude Code try, in order, when /mcp answers 401, less what the
    # farm's OAuth server (tenancy.oauth) serves: the RFC 9728 documents and the root RFC 8414
    # one (tests/tenancy/oauth/test_discovery.py).
    ("get", "/.well-known/oauth-authorization-server/mcp"),
    ("get", "/.well-known/openid-configuration/mcp"),
    ("get", "/mcp/.well-known/openid-configuration"),
    ("get", "/.well-known/openid-configuration"),
    ("post", "/register"),
]


@mutation(
    "mcp_tools/serving/views.py",
    find="@csrf_exempt\n@ignores_ambient_credentials\ndef oauth_not_offered",
    replace="@csrf_exempt\ndef oauth_not_offered",
)
@mutation(
    "mcp_tools/serving/views.py",
    find="@csrf_exempt\n@ignores_ambient_credentials\ndef oauth_not_offered",
    replace="@ignores_ambient_credentials\ndef oauth_not_offered",
)
@mutation(
    "mcp_tools/urls.py",
    find='    path("register", oauth_not_offered, name="mcp-oauth-register"),\n',
    replace="",
)
@pytest.mark.parametrize(("method", "path"), OAUTH_PROBES)
def test_oauth_probes_get_a_json_404_that_says_what_to_do(mcp_client, method, path):
    """mcp-remote quotes the /register body as its fatal error: it must be JSON and say why.

    A revoked bearer sent along is not read. Mutation: drop ``@ignores_ambient_credentials``
    from ``oauth_not_offered`` → red (401). Mutation: drop ``@csrf_exempt`` → red (403 on
    POST). Mutation: remove the ``register`` route → red (HTML 404).
    """
    client = mcp_client()
    _revoke(client.membership)
    http = Client(enforce_csrf_checks=True)
    headers = {"Authorization": f"Bearer {client.bearer}"}
    if method == "post":
        response = http.post(path, '{"client_name":"x"}', "application/json", headers=headers)
    else:
        response = http.get(path, headers=headers)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["error"] == "not_found"
    assert "personal access token" in body["error_description"]


def test_mcp_path_is_served_exactly_without_a_redirect(mcp_client):
    client = mcp_client()
    response = client.client.generic(
        "POST",
        "/mcp/",
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        content_type="application/json",
        headers=client.headers(),
    )
    assert response.status_code == 404  # never a 301 that turns the POST into a GET
