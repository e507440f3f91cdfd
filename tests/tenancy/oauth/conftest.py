"""Fixtures of the OAuth end-to-end tests: the demo farms with a two-farm owner, a server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command

from cluck.models import Farm
from tenancy.models import AbstractMembership, Membership
from tenancy.services import membership_create
from tests.mcp_tools.servers import serve
from tests.tenancy.oauth.browser import EMAIL, SERVER_ENV, require_chromium


@pytest.fixture
def two_farm_owner(transactional_db: Any) -> AbstractMembership:
    """The demo's sunrise owner, also a Manager of hillside: the consent page offers both."""
    call_command("seed_demo", verbosity=0)
    owner = Membership.objects.get(user__email=EMAIL, tenant__code="sunrise")
    return membership_create(
        user=owner.user, tenant=Farm.objects.get(code="hillside"), roles=["Manager"]
    )


@pytest.fixture
def server(two_farm_owner: Membership) -> Iterator[str]:
    require_chromium()
    with serve("uvicorn", env=SERVER_ENV) as url:
        yield url
