"""``TENANCY_TENANT_NOUN`` reaches the messages people read, not only the field names."""

from __future__ import annotations

import pytest
from django.core.management import load_command_class
from django.test import override_settings

import tenancy.urls  # noqa: F401  (loaded now: its REST field names are fixed at import)
from tests.factories import DEFAULT_PASSWORD
from tests.mutations import mutation

SCHOOL = override_settings(TENANCY_TENANT_NOUN="school")


@mutation(
    "tenancy/exceptions.py",
    find="    default_detail = lazy(_invalid_credentials, str)()",
    replace='    default_detail = "The tenant code, email or password is incorrect."',
)
@pytest.mark.django_db
def test_the_login_failure_names_the_tenant_by_the_projects_noun(member_client, api_client):
    """Mutation: a fixed "tenant" in the login failure → red."""
    _, membership = member_client()
    with SCHOOL:
        response = api_client.post(
            "/api/v1/auth/login/",
            {
                "farmCode": membership.tenant.code,  # the field names are fixed at import
                "email": membership.user.email,
                "password": "wrong " + DEFAULT_PASSWORD,
            },
            format="json",
        )
    assert response.status_code == 401, response.content
    body = response.json()
    assert body["code"] == "Auth.InvalidCredentials"
    assert body["detail"] == "The school code, email or password is incorrect."


@pytest.mark.parametrize("command", ["add_member", "issue_token"])
def test_the_commands_help_uses_the_noun(command: str) -> None:
    with SCHOOL:
        help_text = load_command_class("tenancy", command).help
    assert "school" in help_text and "tenant" not in help_text
