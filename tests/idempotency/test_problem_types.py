"""One problem style: ``code`` is ``Area.Code`` and ``type`` is base + code, in every app."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import RequestFactory, override_settings

from idempotency.middleware import problem_type as idempotency_type
from tenancy.problems import problem_type as tenancy_type
from tests.mutations import mutation


@mutation(
    "idempotency/middleware.py",
    find='        return f"{base}{code}"',
    replace="        return f\"{base}{code.replace('.', '-').lower()}\"",
)
@pytest.mark.django_db
def test_a_refused_key_is_typed_like_every_other_problem(member_client: Any) -> None:
    """Mutation: the old slug (``idempotency-keyrequired``) → red."""
    client, _ = member_client()
    response = client.post("/api/v1/customers/", {"name": "Ana", "phone": "1"}, format="json")
    body = response.json()
    assert (response.status_code, body["code"]) == (400, "Idempotency.KeyRequired")
    assert body["type"] == "https://cluck.dev/problems/Idempotency.KeyRequired"


@mutation(
    "idempotency/middleware.py",
    find='    path = f"/problems/{code}"',
    replace='    path = f"/problems/{code.lower()}"',
)
def test_both_apps_build_the_type_uri_the_same_way() -> None:
    """Mutation: idempotency's own default path differs from tenancy's → red."""
    request = RequestFactory().get("/")
    with override_settings(
        TENANCY_PROBLEM_TYPE_BASE_URL=None, IDEMPOTENCY_PROBLEM_TYPE_BASE_URL=None
    ):
        assert idempotency_type("Idempotency.KeyReused", request) == (
            "http://testserver/problems/Idempotency.KeyReused"
        )
        assert tenancy_type("Auth.InvalidToken", request) == (
            "http://testserver/problems/Auth.InvalidToken"
        )
        assert idempotency_type("Idempotency.KeyInUse", None) == "/problems/Idempotency.KeyInUse"
    base = "https://errors.example/p/"
    with override_settings(
        TENANCY_PROBLEM_TYPE_BASE_URL=base, IDEMPOTENCY_PROBLEM_TYPE_BASE_URL=base
    ):
        assert idempotency_type("X.Y", request) == tenancy_type("X.Y", request) == base + "X.Y"
