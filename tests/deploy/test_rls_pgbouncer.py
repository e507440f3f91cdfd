"""Row-level security behind PgBouncer in transaction mode (issue 35): a real uvicorn server
with ``CLUCK_RLS=1`` whose ``DATABASE_URL`` is Debian's ``pgbouncer`` with a pool of two server
connections. The careless tools see and change only their farm, and nothing they set outlives
their transaction: the next client of each pooled server connection is the host again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.conf import settings as django_settings
from django.db import connection

from cluck.devpgbouncer import pgbouncer
from cluck.models import Customer
from tenancy.rls.install import install
from tests.careless import seen_only
from tests.cluck.test_rls import two_farms
from tests.deploy.farm import Farm
from tests.deploy.server_connections import POOL, every_server_connection
from tests.mcp_tools.servers import serve
from tests.mutations import mutation

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

SERVER_ENV = {"CLUCK_RLS": "1", "MCP_TOOLS_RATE": "100000/m", "LOG_LEVEL": "ERROR"}


@pytest.fixture
def pooled_url(transactional_db: None, settings: Any) -> Iterator[str]:
    """This test's database through a fresh PgBouncer of ``POOL`` server connections, with
    row-level security on in this process too (its role and policies installed)."""
    settings.TENANCY_RLS = True
    install()
    with pgbouncer(os.environ["DATABASE_URL"], pool_size=POOL) as server:
        name = connection.settings_dict["NAME"]
        yield urlsplit(server)._replace(path=f"/{name}").geturl()


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
@mutation(
    "tenancy/rls/scope.py",
    find="_TAKE = \"SELECT set_config('role', %s, true), set_config(%s, %s, true)\"",
    replace="_TAKE = \"SELECT set_config('role', %s, false), set_config(%s, %s, false)\"",
)
def test_careless_tools_behind_pgbouncer_stay_in_their_farm_and_leave_nothing_set(
    pooled_url: str,
) -> None:
    """Mutation: the set_config left out of a read → the careless read reaches the other
    farm → red. Mutation: the role and tenant set for the session (``set_config(..., false)``)
    instead of the transaction → the pooled server connection keeps the tools' role and the
    farm for its next client (which then sees one farm) → red."""
    mine, other, member = two_farms()
    assert member.bearer is not None
    with serve(env={**SERVER_ENV, "DATABASE_URL": pooled_url}) as url:
        farm = Farm(url, member.bearer)
        try:
            # Several calls, so that both server connections have served the tools.
            for _ in range(2 * POOL):
                seen_only(farm.call("rls_careless_read", {})["structuredContent"], mine.pk)
            updated = farm.call("rls_careless_write", {"mode": "update", "idempotencyKey": "u"})
            planted = farm.call(
                "rls_careless_write",
                {"mode": "bulk_create", "farmId": other.pk, "idempotencyKey": "p"},
            )
        finally:
            farm.close()
        setting = django_settings.TENANCY_RLS_SETTING
        after = every_server_connection(pooled_url, "cluck_customer", "farm_id", setting)
    assert updated["structuredContent"]["rows"] == 2
    assert planted["isError"] is True
    assert not Customer.all_tenants.filter(farm=other, note="careless").exists()
    assert not Customer.all_tenants.filter(name="rls-planted").exists()
    # The host's next transaction on each server connection: no role, no farm, every row.
    assert after == [("none", "", "off", 2)] * POOL, after
