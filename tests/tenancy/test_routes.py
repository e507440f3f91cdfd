"""Role matrix and cross-farm behaviour of tenancy's own routes (me, tokens)."""

from __future__ import annotations

import pytest

from tenancy.models import AccessToken
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db

ROLES = {
    "Owner": ["Admin"],
    "Manager": ["Manager"],
    "Sales": ["Sales"],
    "Worker": [],
    "ReadOnly": ["ReadOnly"],
}


@mutation(
    Edit(
        "tenancy/api.py",
        find="from tenancy.permissions import IsTenantMember, request_actor",
        replace=(
            "from tenancy.permissions import IsTenantMember, policy_permission, request_actor\n"
            "from tenancy.roles import Policy"
        ),
    ),
    Edit(
        "tenancy/api.py",
        find=(
            "class TokenListCreateApi(ProblemsByDefault, APIView):\n"
            "    authentication_classes = [TenancyAuthentication]\n"
            "    permission_classes = [IsTenantMember]"
        ),
        replace=(
            "class TokenListCreateApi(ProblemsByDefault, APIView):\n"
            "    authentication_classes = [TenancyAuthentication]\n"
            '    permission_classes = [policy_permission(Policy("Admins", {"Owner", "Manager"}))]'
        ),
    ),
)
@pytest.mark.parametrize("role", sorted(ROLES))
def test_every_role_may_see_itself_and_manage_its_own_tokens(member_client, role):
    """Policy AUTHENTICATED admits all five roles on me, me-token-list and me-token-revoke.

    Mutation: give ``TokenListCreateApi`` ``permission_classes = [AdminOnly]`` → red for
    Sales, Worker and ReadOnly."""
    client, membership = member_client(roles=ROLES[role])
    assert client.get("/api/v1/me/").json()["role"] == role
    created = client.post(
        "/api/v1/me/tokens/", {"name": "x"}, format="json", HTTP_IDEMPOTENCY_KEY=f"c-{role}"
    )
    assert created.status_code == 201, created.content
    assert client.get("/api/v1/me/tokens/").status_code == 200
    revoked = client.delete(
        f"/api/v1/me/tokens/{created.json()['id']}/", HTTP_IDEMPOTENCY_KEY=f"r-{role}"
    )
    assert revoked.status_code == 204


def test_a_denied_role_is_refused(member_client):
    client, _ = member_client(roles=["SomethingUnknown"])
    response = client.get("/api/v1/me/")
    assert response.status_code == 403 and response.json()["code"] == "Auth.Forbidden"


def test_another_farms_token_id_is_not_found_with_the_same_body_as_a_missing_one(member_client):
    sunrise_client, sunrise_member = member_client()
    hillside_client, _ = member_client()
    sunrise_token = AccessToken.objects.get(membership=sunrise_member)
    foreign = hillside_client.delete(
        f"/api/v1/me/tokens/{sunrise_token.pk}/", HTTP_IDEMPOTENCY_KEY="x-1"
    )
    missing = hillside_client.delete("/api/v1/me/tokens/999999999/", HTTP_IDEMPOTENCY_KEY="x-2")
    assert foreign.status_code == missing.status_code == 404
    assert foreign.json() == missing.json()
    assert sunrise_client.get("/api/v1/me/").status_code == 200
    listed = hillside_client.get("/api/v1/me/tokens/").json()["items"]
    assert sunrise_token.pk not in {item["id"] for item in listed}
