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
