"""Per-member budgets: REST rate, /mcp rate shared by a member's tokens, live tokens, lifetimes."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db


def _member() -> Any:
    return MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])


def _client(membership: Any) -> Client:
    return Client(headers={"Authorization": f"Bearer {bearer_for(membership)}"})


@mutation(
    "tenancy/middleware.py", find="return rate_refusal(request, usage)", replace="return None"
)
@override_settings(TENANCY_API_RATE="5/m")
def test_rest_is_rate_limited_per_member_with_a_problem_429() -> None:
    """Mutation: drop the ``rate_refusal`` call from ``TenancyMiddleware.process_view`` → red
    (every request succeeds, as 400 in 1.4 s did)."""
    membership = _member()
    first, second = _client(membership), _client(membership)  # two tokens, one budget
    statuses = [first.get("/api/v1/me/").status_code for _ in range(3)]
    statuses += [second.get("/api/v1/me/").status_code for _ in range(2)]
    refused = second.get("/api/v1/me/")
    assert statuses == [200] * 5
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert json.loads(refused.content)["code"] == "Http.RateLimited"
    assert int(refused["Retry-After"]) >= 1
    assert _client(_member()).get("/api/v1/me/").status_code == 200  # another member


@mutation(
    "tenancy/rates/throttling.py",
    find='return f"membership:{actor.membership_id}"',
    replace='return f"token:{actor.token_id}"',
)
@override_settings(MCP_TOOLS_RATE="3/m")
def test_the_mcp_budget_is_per_member_not_per_token() -> None:
    """Mutation: key ``tenancy.rates.throttling.membership_rate_key`` by ``actor.token_id`` → red
    (a fresh token brings a fresh budget)."""
    membership = _member()
    body = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    headers = {"Accept": "application/json"}
    for _ in range(3):
        assert (
            _client(membership)
            .post("/mcp", body, content_type="application/json", headers=headers)
            .status_code
            == 200
        )
    fresh = _client(membership).post("/mcp", body, content_type="application/json", headers=headers)
    assert fresh.status_code == 429


@mutation(
    "tenancy/api.py",
    find='if live.count() >= conf.get("MAX_PERSONAL_TOKENS"):',
    replace="if False:",
)
@override_settings(TENANCY_MAX_PERSONAL_TOKENS=3)
def test_live_personal_tokens_are_capped_per_member() -> None:
    """Mutation: drop the ``live.count()`` check in ``TokenListCreateApi.post`` → red."""
    membership = _member()  # bearer_for already made one live token
    client = _client(membership)
    created = [
        client.post("/api/v1/me/tokens/", {"name": f"t{n}"}, content_type="application/json")
        for n in range(2)
    ]
    assert [r.status_code for r in created] == [201, 201]
    refused = client.post(
        "/api/v1/me/tokens/", {"name": "one more"}, content_type="application/json"
    )
    assert refused.status_code == 409
    assert json.loads(refused.content)["code"] == "Token.LimitReached"
    client.delete(
        f"/api/v1/me/tokens/{created[0].json()['id']}/", headers={"Idempotency-Key": "revoke"}
    )
    again = client.post("/api/v1/me/tokens/", {"name": "again"}, content_type="application/json")
    assert again.status_code == 201


@mutation(
    Edit(
        "tenancy/api.py",
        find='days = data.validated_data.get("expiresInDays") or conf.get(',
        replace='days = data.validated_data.get("expiresInDays") or None and conf.get(',
    ),
    Edit(
        "tenancy/api.py",
        find="expires_at=now + timedelta(days=days),",
        replace="expires_at=now + timedelta(days=days) if days else None,",
    ),
)
def test_personal_tokens_get_a_default_lifetime_and_never_outlive_the_maximum() -> None:
    """A login token could mint a token that never expired.

    Mutation: keep ``expires_at=None`` when ``expiresInDays`` is omitted → red.
    """
    client = _client(_member())
    made = client.post("/api/v1/me/tokens/", {"name": "d"}, content_type="application/json")
    assert made.status_code == 201
    expires = datetime.fromisoformat(made.json()["expiresAt"])
    assert abs(expires - (timezone.now() + timedelta(days=90))) < timedelta(minutes=5)
    too_long = client.post(
        "/api/v1/me/tokens/", {"name": "l", "expiresInDays": 367}, content_type="application/json"
    )
    assert too_long.status_code == 400
