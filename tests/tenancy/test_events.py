"""tenancy's signals for observers: every refused bearer, every request refused for its rate."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from tenancy import AuthenticationFailedError, bearer_refused, rate_limited
from tenancy.api import LOGIN_RATE_GROUP
from tenancy.rates.throttling import RATE_GROUP, rate_refusal
from tenancy.services import user_credentials_changed
from tests.mutations import mutation

pytestmark = pytest.mark.django_db


@pytest.fixture
def received() -> Iterator[list[dict[str, Any]]]:
    heard: list[dict[str, Any]] = []

    def listen(signal: Any, sender: Any, **kwargs: Any) -> None:
        heard.append({"signal": signal, "sender": sender, **kwargs})

    bearer_refused.connect(listen, dispatch_uid="test-events-bearer")
    rate_limited.connect(listen, dispatch_uid="test-events-rate")
    yield heard
    bearer_refused.disconnect(dispatch_uid="test-events-bearer")
    rate_limited.disconnect(dispatch_uid="test-events-rate")


def _me(bearer: str | None) -> int:
    client = APIClient()
    if bearer is not None:
        client.credentials(HTTP_AUTHORIZATION=bearer)
    return client.get("/api/v1/me/").status_code


@mutation(
    "tenancy/middleware.py",
    find=(
        "    bearer_refused.send("
        "sender=type(error), request=request, reason=str(error.default_code))\n"
    ),
    replace="",
)
def test_every_refused_bearer_is_signalled_with_its_reason(member_client, received):
    """Mutation: drop the ``bearer_refused.send`` from ``tenancy.middleware.refuse`` → red."""
    client, membership = member_client()
    token = client._credentials["HTTP_AUTHORIZATION"]
    assert _me("Bearer ck_pat_" + "x" * 43) == 401
    assert _me("Bearer") == 401
    user_credentials_changed(user=membership.user)
    assert _me(token) == 401
    reasons = [event["reason"] for event in received]
    assert reasons == ["Auth.InvalidToken", "Auth.InvalidToken", "Auth.CredentialsSuperseded"]
    assert all(issubclass(event["sender"], AuthenticationFailedError) for event in received)
    assert all(event["signal"] is bearer_refused for event in received)


@mutation(
    "tenancy/middleware.py",
    find="        if header is None:\n            return None\n",
    replace=(
        "        if header is None:\n"
        "            bearer_refused.send("
        'sender=AuthenticationFailedError, request=request, reason="")\n'
        "            return None\n"
    ),
)
def test_a_valid_or_missing_bearer_is_not_signalled(member_client, received):
    """Mutation: send ``bearer_refused`` from ``TenancyMiddleware.process_view`` when no
    ``Authorization`` header came → red."""
    client, _ = member_client()
    assert client.get("/api/v1/me/").status_code == 200
    assert _me(None) == 401  # not authenticated: no bearer was refused
    assert received == []


@mutation(
    "tenancy/api.py",
    find=(
        "            rate_limited.send("
        "sender=LoginApi, request=request._request, group=LOGIN_RATE_GROUP)\n"
    ),
    replace="",
)
def test_a_login_over_its_rate_is_signalled_with_its_group(received):
    """Mutation: drop the ``rate_limited.send`` from ``LoginApi.post`` → red."""
    client = APIClient(REMOTE_ADDR="203.0.113.77")
    body = {"farmCode": "nowhere", "email": "nobody@example.test", "password": "wrong"}
    with override_settings(TENANCY_LOGIN_RATE="1/h"):
        assert client.post("/api/v1/auth/login/", body, format="json").status_code == 401
        assert client.post("/api/v1/auth/login/", body, format="json").status_code == 429
    (event,) = received
    assert event["signal"] is rate_limited
    assert event["group"] == LOGIN_RATE_GROUP
    assert event["request"].META["REMOTE_ADDR"] == "203.0.113.77"


@mutation(
    "tenancy/rates/throttling.py",
    find="    rate_limited.send(sender=rate_refusal, request=request, group=usage.group)",
    replace="    pass",
)
def test_a_member_over_the_api_rate_is_signalled_with_its_group(member_client, received):
    """Mutation: drop the ``rate_limited.send`` from ``tenancy.rates.throttling.rate_refusal``
    → red."""
    client, membership = member_client()
    with override_settings(TENANCY_API_RATE="1/m"):
        assert client.get("/api/v1/me/").status_code == 200
        assert client.get("/api/v1/me/").status_code == 429
    (event,) = received
    assert (event["signal"], event["sender"], event["group"]) == (
        rate_limited,
        rate_refusal,
        RATE_GROUP,
    )
    assert event["request"].actor.membership_id == membership.pk
