from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.factories import FarmFactory, MembershipFactory, bearer_for


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def member_client(db: Any) -> Callable[..., tuple[APIClient, Any]]:
    """``member_client(roles=[...], farm=...)`` → (client with bearer, membership)."""

    def make(roles: list[str] | None = None, farm: Any = None) -> tuple[APIClient, Any]:
        farm = farm or FarmFactory.create()
        membership = MembershipFactory.create(
            tenant=farm, roles=["Admin"] if roles is None else roles
        )
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(membership)}")
        return client, membership

    return make


@pytest.fixture
def rls_off(settings: Any) -> None:
    """Row-level security off for this test, whatever ``CLUCK_RLS`` says. For the guards of a
    tool's own tenant scoping (the first layer): with it on, the database hides the leak their
    mutation makes, and the mutation survives. The second layer has guards of its own
    (tests/cluck/test_rls.py and its siblings)."""
    settings.TENANCY_RLS = False
