"""A real uvicorn server on the seeded demo farms, shared by the client tests of one module.

The fixture owns its data: it seeds and commits the demo once per module and flushes it after.
Tests that use it carry a plain ``django_db`` mark (so the test database is set up), never
``transaction=True`` (that flush would pull the rows out from under the running server), and
take what they need from ``DemoServer`` rather than from the ORM.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.management import call_command

from cluck.models import Farm, Flock
from tests.cluck.mcp_helpers import demo_bearer
from tests.mcp_tools.servers import serve

ROLES = ("owner", "manager", "sales", "worker", "readonly")


@dataclass(frozen=True)
class DemoServer:
    url: str
    """The ``/mcp`` endpoint."""
    bearers: dict[str, str]
    """A bearer per role, for ``<role>@sunrise.example``."""
    today: dt.date
    """The farm's local date: a client writes on ``days_ago(n)`` with its own n (15..34 are
    free of seeded entries and after the active "House 2 Brown" was placed)."""
    house_2_brown: dict[str, int]
    """The two flocks called "House 2 Brown", by status: ``{"Active": id, "Depleted": id}``."""

    def days_ago(self, days: int) -> str:
        return (self.today - dt.timedelta(days=days)).isoformat()


@pytest.fixture(scope="module")
def demo_server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[DemoServer]:
    with django_db_blocker.unblock():
        call_command("seed_demo", verbosity=0)
        farm = Farm.objects.get(code="sunrise")
        bearers = {role: demo_bearer(f"{role}@sunrise.example") for role in ROLES}
        house_2_brown = dict(
            Flock.objects.for_tenant(farm).filter(name="House 2 Brown").values_list("status", "id")
        )
        today = farm.today()
    try:
        with serve("uvicorn") as url:
            yield DemoServer(f"{url}/mcp", bearers, today, house_2_brown)
    finally:
        with django_db_blocker.unblock():
            call_command("flush", verbosity=0, interactive=False)
