"""Every error under /mcp and /api/ is JSON in the endpoint's shape; the admin keeps HTML."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client, RequestFactory

from cluck.api.errors import server_error_view
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db

MCP = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}


def _jsonrpc(response: Any, status: int) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    # A server failure is -32603 (Internal error); -32600 (Invalid Request) blames the client.
    assert body["error"]["code"] == (-32603 if status >= 500 else -32600)


def _problem(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = json.loads(response.content)
    assert body["status"] == status
    return body


@mutation("cluck/urls.py", find='handler400 = "cluck.api.errors.bad_request_view"\n', replace="")
def test_a_spoofed_host_is_a_json_400_on_mcp_and_the_api() -> None:
    """``DisallowedHost`` used to render Django's HTML "Bad Request (400)".

    Mutation: drop ``handler400`` from ``cluck/urls.py`` → red (HTML).
    """
    client = Client(HTTP_HOST="evil.example")
    _jsonrpc(client.post("/mcp", "{}", content_type="application/json", headers=MCP), 400)
    assert _problem(client.get("/api/v1/me/"), 400)["code"] == "Http.BadRequest"


@mutation(
    Edit(
        "mcp_tools/serving/error_pages.py",
        find="endpoint = reverse(MCP_ROUTE_NAME).lower()",
        replace="endpoint = reverse(MCP_ROUTE_NAME)",
    ),
    Edit(
        "mcp_tools/serving/error_pages.py",
        find="path = request.path_info.lower()",
        replace="path = request.path_info",
    ),
)
@pytest.mark.parametrize("path", ["/MCP", "/Mcp", "/mcp/", "/mcp/tools", "/MCP/x"])
def test_paths_under_mcp_in_any_case_are_json_rpc_404s(path: str) -> None:
    """Mutation: compare ``is_mcp_request``'s path case-sensitively → red for ``/MCP``."""
    _jsonrpc(Client().post(path, "{}", content_type="application/json", headers=MCP), 404)


def test_unknown_api_paths_are_problem_404s_and_the_admin_keeps_html() -> None:
    assert _problem(Client().get("/api/v1/no-such-thing/"), 404)["code"] == "Cluck.NotFound"
    assert Client().get("/admin/no-such-thing/").status_code in (302, 404)
    assert "json" not in Client().get("/no-such-page/")["Content-Type"]


def test_methods_not_allowed_are_json_on_mcp_and_the_api() -> None:
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client = Client(headers={"Authorization": f"Bearer {bearer_for(membership)}"})
    _jsonrpc(client.get("/mcp", headers=MCP), 405)
    assert _problem(client.put("/api/v1/me/", headers={"Idempotency-Key": "k"}), 405)


def test_an_uncaught_error_under_the_api_is_a_problem_500() -> None:
    membership = MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
    client = Client(
        raise_request_exception=False,
        headers={"Authorization": f"Bearer {bearer_for(membership)}", "Idempotency-Key": "k"},
    )
    response = client.post(
        "/api/v1/me/idem-test-notes/", {"raise": True}, content_type="application/json"
    )
    assert _problem(response, 500)["code"] == "Http.InternalError"


@mutation(
    "mcp_tools/serving/error_pages.py",
    find="code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST",
    replace="code = INVALID_REQUEST",
)
@mutation(
    "mcp_tools/serving/error_pages.py",
    find=(
        "    if status == 500 and database_unavailable(exc if exc is not None else "
        "current_exception()):\n"
        "        return 503\n"
    ),
    replace="",
)
@pytest.mark.parametrize(
    ("path", "error", "status"),
    [
        ("/mcp", RuntimeError("bug"), 500),
        ("/mcp", OperationalError("connection refused"), 503),
        ("/api/v1/me/", OperationalError("connection refused"), 503),
        ("/api/v1/me/", RuntimeError("bug"), 500),
    ],
)
def test_handler500_answers_an_unreachable_database_with_503_and_retry_after(
    path: str, error: Exception, status: int
) -> None:
    """Mutation: return ``status`` unchanged from ``outage_status`` → red (500, no
    Retry-After, while the database is down). Mutation: answer every status with -32600
    (*Invalid Request*) in ``jsonrpc_error_page`` → red (an internal error blames the client;
    issue 22 saw it behind PgBouncer)."""
    request = RequestFactory().get(path)
    try:
        raise error
    except Exception:
        response = server_error_view(request)
    if path == "/mcp":
        _jsonrpc(response, status)
    else:
        _problem(response, status)
    assert ("Retry-After" in response) is (status == 503)
