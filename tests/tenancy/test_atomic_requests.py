"""tenancy in a project with ``ATOMIC_REQUESTS = True``: the marker, its check, and every
tenancy and tenancy.oauth view served under it on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.handlers.base import BaseHandler
from django.db import connections, transaction
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path
from django.views import View
from rest_framework.test import APIClient
from rest_framework.views import APIView

from tenancy import handles_own_transactions
from tenancy.checks import check_atomic_requests
from tests.atomic_requests import atomic_requests
from tests.factories import DEFAULT_PASSWORD, FarmFactory, MembershipFactory
from tests.mutations import mutation
from tests.tenancy.oauth.flow import grant_tokens, mcp, refresh

LOGIN = "/api/v1/auth/login/"


@pytest.fixture
def _atomic() -> Iterator[None]:
    with atomic_requests():
        yield


# --- the marker ---------------------------------------------------------------------------------


@handles_own_transactions
async def marked_async(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


async def unmarked_async(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


@handles_own_transactions
class MarkedView(View):
    pass


@handles_own_transactions
class MarkedApi(APIView):
    pass


@pytest.mark.parametrize(
    "view",
    [marked_async, MarkedView.as_view(), MarkedApi.as_view()],
    ids=["function", "django class-based view", "DRF view"],
)
def test_a_marked_view_is_left_unwrapped_on_an_alias_added_later(view: Any) -> None:
    """Django wraps the view per alias with ATOMIC_REQUESTS; the marker covers every alias,
    also one the project adds after the view was decorated."""
    connections.settings["added_later"] = {"ATOMIC_REQUESTS": True}
    try:
        assert BaseHandler().make_view_atomic(view) is view
    finally:
        del connections.settings["added_later"]


def test_djangos_own_opt_out_still_stacks_on_the_marker() -> None:
    view = transaction.non_atomic_requests(using="reports")(marked_async)
    assert "reports" in view._non_atomic_requests
    assert "anything" in view._non_atomic_requests


def test_an_unmarked_view_is_still_djangos_to_wrap() -> None:
    connections.settings["added_later"] = {"ATOMIC_REQUESTS": True}
    try:
        with pytest.raises(RuntimeError, match="ATOMIC_REQUESTS"):
            BaseHandler().make_view_atomic(unmarked_async)
    finally:
        del connections.settings["added_later"]


# --- the system check ----------------------------------------------------------------------------

urlpatterns = [
    path("marked/", marked_async),
    path("unmarked/", unmarked_async),
    path("sync/", MarkedView.as_view()),
]


def test_the_farm_with_atomic_requests_reports_only_the_test_apps_async_probes(
    _atomic: None,
) -> None:
    """Every toolkit view opts out: a correct setup gets no message at all. The two async
    views of the test apps (routed for this run only) are the project's own, unmarked."""
    reported = {(error.id, error.obj) for error in check_atomic_requests()}
    assert reported == {
        ("tenancy.E007", "asgi-probe/async/"),
        ("tenancy.E007", "idem-test/async/"),
    }


@override_settings(ROOT_URLCONF=__name__)
def test_an_async_view_left_to_atomic_requests_is_an_error(_atomic: None) -> None:
    (error,) = check_atomic_requests()
    assert error.id == "tenancy.E007"
    assert error.obj == "unmarked/"


@override_settings(ROOT_URLCONF=__name__)
def test_without_atomic_requests_nothing_is_checked() -> None:
    assert check_atomic_requests() == []


# --- tenancy's REST views ------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_login_me_tokens_and_logout_serve_under_atomic_requests(_atomic: None) -> None:
    membership: Any = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    client = APIClient()
    body = {
        "farmCode": membership.tenant.code,
        "email": membership.user.email,
        "password": DEFAULT_PASSWORD,
    }
    login = client.post(LOGIN, body, format="json")
    assert login.status_code == 200, login.content
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {login.json()['accessToken']}")
    assert client.get("/api/v1/me/").status_code == 200
    created = client.post(
        "/api/v1/me/tokens/", {"name": "x"}, format="json", HTTP_IDEMPOTENCY_KEY="atomic-c"
    )
    assert created.status_code == 201, created.content
    revoked = client.delete(
        f"/api/v1/me/tokens/{created.json()['id']}/", HTTP_IDEMPOTENCY_KEY="atomic-r"
    )
    assert revoked.status_code == 204
    assert client.post("/api/v1/auth/logout/").status_code == 204
    assert client.get("/api/v1/me/").status_code == 401


@mutation(
    "tenancy/api.py",
    find="counter table.\n@handles_own_transactions\n",
    replace="counter table.\n",
)
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # no test transaction for DRF's set_rollback to mark
def test_refused_logins_still_count_toward_the_login_rate_under_atomic_requests(
    _atomic: None,
) -> None:
    """A refused login raises; DRF's handler then rolls the request transaction back.

    Mutation: drop ``handles_own_transactions`` from ``LoginApi`` → each refused attempt's
    count in tenancy's counter table is rolled back with it, the third attempt is another 401
    instead of 429: unlimited password guessing → red.
    """
    client = APIClient(REMOTE_ADDR="203.0.113.21")
    body = {"farmCode": "nowhere", "email": "nobody@example.test", "password": "wrong"}
    with override_settings(TENANCY_LOGIN_RATE="2/h"):
        answers = [client.post(LOGIN, body, format="json").status_code for _ in range(3)]
    assert answers == [401, 401, 429]


# --- tenancy.oauth -------------------------------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_oauth_flow_serves_under_atomic_requests(_atomic: None) -> None:
    """Metadata, registration, consent, token, refresh, revocation and the clients page."""
    membership: Any = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    client = Client()
    for document in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/mcp",
    ):
        assert client.get(document).status_code == 200, document
    tokens = grant_tokens(membership)
    listed = mcp(client, tokens["access_token"], "tools/list")
    assert listed.status_code == 200, listed.content
    rotated = refresh(client, tokens["client_id"], tokens["refresh_token"])
    assert rotated.status_code == 200, rotated.content
    revoked = client.post(
        "/oauth/revoke/",
        {"token": rotated.json()["access_token"], "client_id": tokens["client_id"]},
    )
    assert revoked.status_code == 200, revoked.content
    browser = Client()
    browser.force_login(membership.user)
    assert browser.get("/oauth/clients/").status_code == 200
