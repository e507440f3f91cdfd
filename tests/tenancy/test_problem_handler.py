"""tenancy's views answer problem JSON with a stable code under DRF's default handler too."""

from __future__ import annotations

import pytest
from rest_framework.settings import api_settings
from rest_framework.test import APIClient

from tests.mutations import mutation

pytestmark = pytest.mark.django_db


@pytest.fixture
def drf_default_handler(settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "EXCEPTION_HANDLER": "rest_framework.views.exception_handler",
    }
    api_settings.reload()
    yield
    api_settings.reload()


@mutation(
    "tenancy/problem_handler.py",
    find=(
        "        if configured is drf_exception_handler:\n"
        "            return problem_exception_handler\n"
    ),
    replace="",
)
def test_login_failures_carry_their_code_without_the_projects_handler(drf_default_handler):
    """Mutation: make ``ProblemsByDefault.get_exception_handler`` return DRF's handler → red
    (``{"detail": …}`` with no code)."""
    client = APIClient()
    refused = client.post(
        "/api/v1/auth/login/",
        {"farmCode": "nowhere", "email": "a@b.example", "password": "x"},
        format="json",
    )
    assert refused.status_code == 401
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "Auth.InvalidCredentials"
    invalid = client.post("/api/v1/auth/login/", {"email": "not an email"}, format="json")
    assert invalid.status_code == 400 and invalid.json()["code"] == "Validation.Failed"
    assert {e["field"] for e in invalid.json()["errors"]} >= {"farmCode", "email", "password"}
    anonymous = client.get("/api/v1/me/")
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "Auth.NotAuthenticated"
    assert anonymous["WWW-Authenticate"].startswith("Bearer")


def test_tenant_codes_match_whatever_their_case(member_client):
    from tests.factories import DEFAULT_PASSWORD

    _, membership = member_client()
    membership.tenant.code = "MixedCase"
    membership.tenant.save()
    response = APIClient().post(
        "/api/v1/auth/login/",
        {"farmCode": "mixedcase", "email": membership.user.email, "password": DEFAULT_PASSWORD},
        format="json",
    )
    assert response.status_code == 200, response.content
