"""A project with Django's ``LoginRequiredMiddleware`` (5.1+) still serves bearer-token
clients: the toolkit's views authenticate by themselves (the token is the login) and are
marked ``login_not_required``; the project's own views keep redirecting anonymous users.

The farm, with the middleware appended as a project appends it, and one view of "the project"
routed beside the toolkit's (this module is the URLconf).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import include, path

from tests.a2a_tools.conftest import A2AClient
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import McpClient
from tests.mutations import mutation

MIDDLEWARE_PATH = "django.contrib.auth.middleware.LoginRequiredMiddleware"


def project_report(request: HttpRequest) -> HttpResponse:
    return HttpResponse("the project's own page")


urlpatterns = [path("reports/", project_report), path("", include("cluck.urls"))]


@pytest.fixture
def login_required(settings: Any) -> None:
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE_PATH]
    settings.ROOT_URLCONF = __name__
    settings.LOGIN_URL = "/accounts/login/"
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _not_sent_to_login(response: Any) -> None:
    location = response.headers.get("Location", "")
    assert not location.startswith("/accounts/login/"), (response.status_code, location)


@mutation(
    "mcp_tools/serving/views.py",
    find="@login_not_required\n@handles_own_transactions  # async",
    replace="@handles_own_transactions  # async",
)
@mutation(
    "a2a_tools/views.py",
    find="@login_not_required\n@handles_own_transactions\n@csrf_exempt",
    replace="@handles_own_transactions\n@csrf_exempt",
)
@mutation(
    "tenancy/oauth/pages.py",
    find='@method_decorator(login_not_required, name="dispatch")\n@handles_own_transactions\n'
    "@ignores_ambient_credentials\nclass ClientsView(",
    replace="@handles_own_transactions\n@ignores_ambient_credentials\nclass ClientsView(",
)
@mutation(
    "tenancy/oauth/pages.py",
    find='@method_decorator(login_not_required, name="dispatch")\n@handles_own_transactions\n'
    '@ignores_ambient_credentials\n@method_decorator(never_cache, name="dispatch")\n'
    "class SignInView(",
    replace="@handles_own_transactions\n@ignores_ambient_credentials\n"
    '@method_decorator(never_cache, name="dispatch")\nclass SignInView(',
)
@pytest.mark.django_db
def test_bearer_clients_are_served_and_the_projects_own_views_still_redirect(login_required):
    """Under the middleware an MCP client's ``tools/list`` and call, an A2A ``SendMessage``,
    the OAuth metadata, token endpoint and sign-in page, the operator API and health are
    answered, the OAuth clients page sends an anonymous visitor to the OAuth sign-in; an
    anonymous visit to the project's own page is sent to ``LOGIN_URL``.

    Mutation: ``login_not_required`` dropped from ``/mcp``, ``/a2a``, the OAuth clients page or
    the sign-in page (whose parent ``LoginView``'s mark does not survive the decorators
    stacked on it) → red (that endpoint answers a redirect to the project's login)."""
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    bearer = bearer_for(membership)  # type: ignore[arg-type]

    mcp = McpClient(bearer, membership)
    listed = mcp.list_tools()
    assert listed["result"]["tools"], listed
    called = mcp.call("mcptest_whoami", {})
    assert called["result"]["isError"] is False, called

    a2a = A2AClient(bearer, membership)
    sent = a2a.send("mcptest_whoami", {})
    assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", sent

    anonymous = Client()
    for document in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/agent-card.json",
        "/mcp/server-card",
        "/healthz",
    ):
        response = anonymous.get(document)
        _not_sent_to_login(response)
        assert response.status_code == 200, (document, response.status_code)
        json.loads(response.content)
    token = anonymous.post("/oauth/token/", {"grant_type": "authorization_code", "code": "x"})
    _not_sent_to_login(token)
    assert token.status_code in (400, 401), token.status_code
    sign_in = anonymous.get("/oauth/sign-in/")
    _not_sent_to_login(sign_in)
    assert sign_in.status_code == 200, sign_in.status_code
    # The signed-in user's pages send an anonymous visitor to the OAuth sign-in themselves.
    clients = anonymous.get("/oauth/clients/")
    assert clients.status_code == 302, clients.status_code
    assert clients.headers["Location"].startswith("/oauth/sign-in/"), clients.headers
    signed_out = anonymous.post("/oauth/sign-out/")
    _not_sent_to_login(signed_out)

    operator = Client().get("/api/v1/mcp/switches/", headers={"Authorization": f"Bearer {bearer}"})
    _not_sent_to_login(operator)

    own = anonymous.get("/reports/")
    assert own.status_code == 302, own.status_code
    assert own.headers["Location"].startswith("/accounts/login/?next=/reports/"), own.headers


def _forgotten_toolkit_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("a toolkit view that forgot its mark")


# As the toolkit's own module would define it: the check tells toolkit views by their module.
_forgotten_toolkit_view.__module__ = "mcp_tools.serving.views"


class RoutesAForgottenToolkitView:
    urlpatterns = [path("forgotten/", _forgotten_toolkit_view), *urlpatterns]


def _login_warnings() -> list[str]:
    from mcp_tools.checks import check_login_not_required

    return [
        str(message.obj) for message in check_login_not_required() if message.id == "mcp_tools.W004"
    ]


@mutation(
    "mcp_tools/serving/views.py",
    find="@login_not_required\n@handles_own_transactions  # async",
    replace="@handles_own_transactions  # async",
)
@mutation(
    "tenancy/oauth/pages.py",
    find='@method_decorator(login_not_required, name="dispatch")\n@handles_own_transactions\n'
    "@ignores_ambient_credentials\nclass ClientsView(",
    replace="@handles_own_transactions\n@ignores_ambient_credentials\nclass ClientsView(",
)
def test_the_check_is_quiet_for_the_toolkits_views(login_required: None) -> None:
    """Under ``LoginRequiredMiddleware`` every routed toolkit view of the farm carries its mark:
    ``mcp_tools.W004`` says nothing.

    Mutation: ``login_not_required`` dropped from ``/mcp`` or the OAuth clients page → red (the
    check names the route)."""
    assert _login_warnings() == []


@mutation(
    "mcp_tools/checks.py",
    find='getattr(view, "login_required", True)',
    replace='getattr(view, "login_required", False)',
)
@mutation(
    "mcp_tools/checks.py",
    find="    if middleware_index(LOGIN_REQUIRED_MIDDLEWARE) is None:\n        return []\n",
    replace="    if middleware_index(LOGIN_REQUIRED_MIDDLEWARE) is not None:\n        return []\n",
)
def test_the_check_names_a_toolkit_view_without_its_mark(
    login_required: None, settings: Any
) -> None:
    """A toolkit view routed without ``login_not_required`` is named by ``mcp_tools.W004``, and
    only under the middleware (a project without it loses nothing to the missing mark).

    Mutation: the view's mark read as present by default, or the middleware test inverted →
    red."""
    settings.ROOT_URLCONF = RoutesAForgottenToolkitView
    assert _login_warnings() == ["forgotten/"]
    settings.MIDDLEWARE = [entry for entry in settings.MIDDLEWARE if entry != MIDDLEWARE_PATH]
    assert _login_warnings() == []
