from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings

from idempotency.checks import check_middleware, check_settings


def ids(messages: list[Any]) -> set[str]:
    return {m.id for m in messages}


def test_the_shipped_settings_pass() -> None:
    assert check_settings() == []
    assert check_middleware() == []


@pytest.mark.parametrize(
    ("setting", "value", "check_id"),
    [
        ("IDEMPOTENCY_LEASE_SECONDS", 0, "idempotency.E001"),
        ("IDEMPOTENCY_LEASE_SECONDS", "30", "idempotency.E001"),
        ("IDEMPOTENCY_MAX_WAIT_SECONDS", -1, "idempotency.E002"),
        ("IDEMPOTENCY_POLL_INTERVAL_SECONDS", 0, "idempotency.E003"),
        ("IDEMPOTENCY_RETENTION_HOURS", float("inf"), "idempotency.E004"),
        ("IDEMPOTENCY_TENANT_ID_FUNCTION", "nowhere.to.be.found", "idempotency.E005"),
        ("IDEMPOTENCY_USER_ID_FUNCTION", 42, "idempotency.E006"),
        ("IDEMPOTENCY_MAX_KEY_LENGTH", 0, "idempotency.E007"),
        ("IDEMPOTENCY_USER_SCOPED_PATH_PREFIXES", "/api/v1/me", "idempotency.E008"),
        ("IDEMPOTENCY_AUTHORIZE_FUNCTION", "nowhere.to.be.found", "idempotency.E009"),
    ],
)
def test_bad_settings_are_reported(setting: str, value: Any, check_id: str) -> None:
    with override_settings(**{setting: value}):
        assert ids(check_settings()) == {check_id}


def test_max_wait_may_be_zero() -> None:
    with override_settings(IDEMPOTENCY_MAX_WAIT_SECONDS=0):
        assert check_settings() == []


def test_a_middleware_after_idempotency_is_reported(settings: Any) -> None:
    # CsrfViewMiddleware has a process_view, which never runs for a keyed request.
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "django.middleware.csrf.CsrfViewMiddleware"]
    assert ids(check_middleware()) == {"idempotency.W001"}
