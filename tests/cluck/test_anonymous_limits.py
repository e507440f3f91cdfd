"""What an anonymous request may cost on the farm's own pages: the API schema is built once per
process, and admin sign-in attempts are budgeted per client address before any password hash."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from django.contrib.auth import forms as auth_forms
from django.test import Client

from cluck.api.schema import CluckSchemaGenerator
from cluck.schema_view import CachedSchemaView
from tests.mutations import mutation


@mutation(
    "cluck/schema_view.py",
    find="cached = self._rendered.get(type(renderer))",
    replace="cached = None",
)
def test_the_api_schema_is_generated_once_per_process_whatever_the_query_string() -> None:
    """Mutation: look nothing up in the rendered cache → red (generated per request)."""
    CachedSchemaView._rendered.clear()
    client = Client()
    real = CluckSchemaGenerator.get_schema
    with mock.patch.object(
        CluckSchemaGenerator, "get_schema", autospec=True, side_effect=real
    ) as generated:
        first = client.get("/api/schema/", {"format": "json"})
        for query in ({"format": "json"}, {"format": "json", "lang": "zz", "version": "EVIL"}):
            again = client.get("/api/schema/", query)
            assert again.status_code == 200
            assert again.content == first.content
            assert again["Content-Type"] == first["Content-Type"]
        yaml = client.get("/api/schema/")
        assert client.get("/api/schema/", {"version": "EVIL"}).content == yaml.content
    assert first.json()["openapi"].startswith("3.")
    assert yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert b"EVIL" not in yaml.content
    assert generated.call_count == 2  # JSON once, YAML once


@mutation(
    "cluck/admin_site.py",
    find='            if usage is not None and usage["should_limit"]:',
    replace="            if False:",
)
@mutation(
    "cluck/settings.py",
    find='    "cluck.apps.CluckAdminConfig",',
    replace='    "django.contrib.admin",',
)
@pytest.mark.django_db
def test_admin_sign_in_attempts_over_the_address_budget_are_429_before_any_password_check(
    settings: Any,
) -> None:
    """Mutations: never refuse → red; Django's own admin site → red (15 wrong passwords in a
    row were each checked)."""
    settings.CLUCK_ADMIN_LOGIN_RATE = "3/m"
    client = Client(REMOTE_ADDR="198.51.100.20")
    attempt = {"username": "root@example.com", "password": "wrong", "next": "/admin/"}
    real = auth_forms.authenticate  # type: ignore[attr-defined]
    with mock.patch.object(auth_forms, "authenticate", side_effect=real) as checked:
        answers = [client.post("/admin/login/", attempt) for _ in range(5)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
        assert 1 <= int(answers[3]["Retry-After"]) <= 60
        assert checked.call_count == 3
        assert client.get("/admin/login/").status_code == 200  # the page itself still shows
        other = Client(REMOTE_ADDR="203.0.113.20").post("/admin/login/", attempt)
        assert other.status_code == 200
