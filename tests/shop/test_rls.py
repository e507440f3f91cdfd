"""Row-level security in the shop (issue 35): a careless tool sees and changes only its store.

The shop declares its products tenant-owned (``TENANCY_RLS_MODELS`` in ``shop/settings.py``,
docs/new-project.md step 12). A copy of it, with the careless tools of ``tests/shop/careless``
added (and with them A2A and the database task worker, as a team adds them), is migrated
from zero on a fresh PostgreSQL database as the test run's user (a superuser: the role switch
is what makes the policies hold), and two stores' owners call the careless tools over ``/mcp``
served by uvicorn in both eras, as a task run by ``manage.py db_worker``, as an A2A skill,
through ``manage.py mcp_call``, through ``mcp_tools.testing.client.MCPClient``, and over
``/mcp`` served through PgBouncer in transaction mode. The project's own code (``manage.py
shell``) still sees both stores. The shop's own pytest suite passes on PostgreSQL with
row-level security on.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cluck.devpgbouncer import pgbouncer
from mcp_tools.testing.client import ERAS

from tests.careless import seen_only
from tests.deploy.server_connections import POOL, every_server_connection
from tests.mutations import mutation
from tests.project_harness import postgres_database_or_skip
from tests.shop.harness import (
    PROJECT,
    Shop,
    copy_project,
    guide_blocks,
    owners_with_tokens,
    shop_env,
)
from tests.shop.mcp_story import call_tool
from tests.shop.rls_paths import db_worker, skill_result, task_result

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

OWNERS = [("main", "owner@main.example"), ("harbour", "owner@harbour.example")]

# Two products per store (one named "victim"); the stores' ids, as the project sees them.
SEED = """
from decimal import Decimal
from catalog.models import Product, Store
for store in Store.objects.filter(code__in=["main", "harbour"]):
    Product.all_tenants.create(store=store, name="kept", price=Decimal("5"))
    Product.all_tenants.create(store=store, name="victim", price=Decimal("5"))
print("STORES=" + ",".join(str(Store.objects.get(code=c).pk) for c in ["main", "harbour"]))
"""

# What the project's own code sees: every store's products, untouched by the policies.
HOST_VIEW = """
import json
from catalog.models import Product
rows = Product.all_tenants.order_by("store_id", "name").values_list("store__code", "name", "price")
print("ROWS=" + json.dumps([[code, name, str(price)] for code, name, price in rows]))
"""

# The careless read through the in-process test client, in each era.
IN_PROCESS = """
import json
from django.contrib.auth import get_user_model
from catalog.models import Store
from mcp_tools.testing.client import ERAS, MCPClient
user = get_user_model().objects.get(email="owner@main.example")
seen = {
    era: MCPClient(user=user, tenant=Store.objects.get(code="main"), era=era)
    .call_tool("careless_read", {}).structured
    for era in ERAS
}
print("SEEN=" + json.dumps(seen))
"""


@dataclass
class CarelessShop:
    shop: Shop
    url: str
    tokens: dict[str, str]
    mine: int
    other: int

    def shell(self, script: str, prefix: str) -> Any:
        out = self.shop.manage("shell", "-c", script)
        (line,) = [line for line in out.splitlines() if line.startswith(prefix)]
        return line.removeprefix(prefix)

    def host_rows(self) -> list[list[str]]:
        rows: list[list[str]] = json.loads(self.shell(HOST_VIEW, "ROWS="))
        return rows


@pytest.fixture(scope="module")
def careless(tmp_path_factory: Any) -> Iterator[CarelessShop]:
    """The shop plus the careless app on a fresh PostgreSQL database, migrated (which installs
    the role and the policies), two stores with products, and uvicorn serving it."""
    with postgres_database_or_skip("shop_rls") as url:
        path = copy_project(Path(tmp_path_factory.mktemp("rls")))
        shutil.copytree(
            PROJECT / "careless", path / "careless", ignore=shutil.ignore_patterns("__pycache__")
        )
        env = shop_env(database_url=url, DJANGO_SETTINGS_MODULE="careless.settings")
        shop = Shop(path, env)
        shop.manage("migrate")
        # Errors (tenancy_rls.E001–E005) would fail the command: the install is complete.
        shop.manage("check", "--database", "default")
        tokens = owners_with_tokens(shop, OWNERS)
        placeholder = CarelessShop(shop, "", tokens, 0, 0)
        mine, other = map(int, placeholder.shell(SEED, "STORES=").split(","))
        with shop.serve("uvicorn") as served:
            yield CarelessShop(shop, served, tokens, mine, other)


def call(careless: CarelessShop, era: str, tool: str, **arguments: Any) -> Any:
    return call_tool(careless.url, careless.tokens["owner@main.example"], era, tool, **arguments)


@pytest.mark.parametrize("era", ["handshake", "modern"])
@mutation(
    "tests/shop/shop/settings.py",
    find='TENANCY_RLS_MODELS = {"catalog.Product": "store"}',
    replace="TENANCY_RLS_MODELS: dict[str, str] = {}",
)
@mutation(
    "tenancy/rls/install.py",
    find="AS PERMISSIVE FOR ALL TO {quote(role)} ",
    replace="AS PERMISSIVE FOR ALL TO CURRENT_USER ",
)
@mutation(
    "tenancy/rls/scope.py",
    find='[conf.get("RLS_ROLE"), conf.get("RLS_SETTING"), str(tenant_id)],',
    replace='[conf.get("RLS_ROLE"), conf.get("RLS_SETTING"), ""],',
)
def test_a_careless_read_over_mcp_sees_only_its_store(careless: CarelessShop, era: str) -> None:
    """Mutation: the shop's declaration of Product removed, the tenant policy bound to the
    connecting user instead of the tools' role, or the tenant left out of the statement that
    takes the role → the careless queries reach the other store's products (or none) → red."""
    reply = call(careless, era, "careless_read")
    assert reply.is_error is False, reply
    seen_only(reply.structured_content, careless.mine)
    # The project's own code, which never takes the role, sees both stores.
    assert {code for code, _, _ in careless.host_rows()} == {"main", "harbour"}


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_through_mcp_call_and_mcp_client_sees_only_its_store(
    careless: CarelessShop,
) -> None:
    """``manage.py mcp_call`` and ``MCPClient`` run the tool in-process, in both eras.

    Mutation: the read's role and tenant left out → the in-process call runs as the connecting
    user and sees both stores → red."""
    for era in ERAS:
        out = careless.shop.manage(
            "mcp_call",
            "careless_read",
            "--tenant",
            "main",
            "--email",
            "owner@main.example",
            "--era",
            era,
        )
        seen_only(json.loads(out[: out.rindex("}") + 1]), careless.mine)
    by_era = json.loads(careless.shell(IN_PROCESS, "SEEN="))
    assert len(by_era) == 2
    for seen in by_era.values():
        seen_only(seen, careless.mine)


@mutation(
    "docs/new-project.md",
    find='MCP_TOOLS_TASK_QUEUE = "mcp_tools"\n```',
    replace='MCP_TOOLS_TASK_QUEUE = "default"\n```',
)
def test_the_guides_a2a_and_worker_block_is_what_the_careless_shop_runs() -> None:
    """The settings that add A2A and the database worker in ``careless/settings.py`` are step
    12's block of docs/new-project.md, verbatim: the paths above run what the guide says.

    Mutation: the guide's block changed → it is no longer the tested settings → red."""
    (block,) = [text for _, text in guide_blocks() if text.startswith("# toolkit: A2A skills")]
    assert block in (PROJECT / "careless" / "settings.py").read_text()


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_as_a_task_on_the_database_worker_sees_only_its_store(
    careless: CarelessShop,
) -> None:
    """The task is accepted over /mcp by uvicorn and run by the shop's own ``manage.py
    db_worker``, another process with its own connection.

    Mutation: the set_config left out of a read → the worker's run of the tool reaches the
    other store → red."""
    with db_worker(careless.shop):
        seen = task_result(careless.url, careless.tokens["owner@main.example"], "careless_read")
    seen_only(seen, careless.mine)


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
def test_a_careless_read_as_an_a2a_skill_sees_only_its_store(careless: CarelessShop) -> None:
    """``a2a_tools`` serves the careless read as a skill on ``POST /a2a``.

    Mutation: the set_config left out of a read → the skill reaches the other store → red."""
    seen = skill_result(careless.url, careless.tokens["owner@main.example"], "careless_read")
    seen_only(seen, careless.mine)


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
def test_careless_tools_behind_pgbouncer_stay_in_their_store_and_leave_nothing_set(
    careless: CarelessShop,
) -> None:
    """uvicorn serves the shop with its ``DATABASE_URL`` on a PgBouncer in transaction mode of
    ``POOL`` server connections: the careless read sees only its store, the careless update
    changes only its products, the product planted in the other store is refused, and the next
    client of each server connection is the host again.

    Mutation: the set_config left out of a read → the read reaches the other store → red.
    Mutation: the role and tenant set for the session (``set_config(..., false)``) instead of
    the transaction → a pooled server connection keeps the tools' role and the store for its
    next client → red."""
    before = careless.host_rows()
    token = careless.tokens["owner@main.example"]
    with (
        pgbouncer(careless.shop.env["DATABASE_URL"], pool_size=POOL) as url,
        careless.shop.serve("uvicorn", DATABASE_URL=url) as served,
    ):
        for _ in range(2 * POOL):  # so that every server connection serves the tools
            read = call_tool(served, token, "modern", "careless_read")
            seen_only(read.structured_content, careless.mine)
        updated = call_tool(served, token, "modern", "careless_write", mode="update",
                            idempotencyKey="pgbouncer-update")  # fmt: skip
        planted = call_tool(served, token, "modern", "careless_write", mode="bulk_create",
                            storeId=careless.other, idempotencyKey="pgbouncer-plant")  # fmt: skip
        after = every_server_connection(url, "catalog_product", "store_id")
    assert updated.structured_content["rows"] == 2, updated
    assert planted.is_error is True, planted
    theirs = [row for row in before if row[0] == "harbour"]
    assert [row for row in careless.host_rows() if row[0] == "harbour"] == theirs
    # The host's next transaction on each server connection: no role, no store, every row.
    assert after == [("none", "", "off", 2)] * POOL, after


@mutation(
    "mcp_tools/execution/writes.py",
    find="        rls.take(ctx.tenant.id)\n",
    replace="        pass\n",
)
def test_careless_writes_over_mcp_stay_in_their_store(careless: CarelessShop) -> None:
    """A queryset update and delete change only the caller's products; a bulk_create keyed to
    the other store is refused and never stored.

    Mutation: the write's statement that takes the role left out → the update and delete reach
    the other store and the planted product is stored → red."""
    before = careless.host_rows()
    updated = call(careless, "modern", "careless_write", mode="update", idempotencyKey="w-1")
    assert updated.structured_content["rows"] == 2, updated
    deleted = call(careless, "handshake", "careless_write", mode="delete", idempotencyKey="w-2")
    assert deleted.structured_content["rows"] == 1, deleted
    planted = call(
        careless,
        "modern",
        "careless_write",
        mode="bulk_create",
        storeId=careless.other,
        idempotencyKey="w-3",
    )
    assert planted.is_error is True, planted

    after = careless.host_rows()
    theirs = [row for row in before if row[0] == "harbour"]
    assert [row for row in after if row[0] == "harbour"] == theirs  # untouched, none planted
    assert [row for row in after if row[0] == "main"] == [["main", "kept", "0.01"]]


@mutation(
    "mcp_tools/execution/results.py",
    find="with rls.scoped(ctx.tenant.id, read_only=True):",
    replace="with nullcontext():",
)
@mutation(
    "mcp_tools/execution/writes.py",
    find="        rls.take(ctx.tenant.id)\n",
    replace="        pass\n",
)
def test_a_careless_rest_view_published_with_drf_tool_stays_in_its_store(
    careless: CarelessShop,
) -> None:
    """``drf_tool`` runs the REST view itself: a view whose queryset forgets the store lists
    only the caller's products, and its create of a product for the other store is refused
    and never stored.

    Mutation: the read's role left out → the list reaches the other store; the write's left
    out → the planted product is stored → red."""
    listed = call(careless, "modern", "careless_drf_list")
    assert listed.is_error is False, listed
    products = listed.structured_content["results"]
    assert products and {product["store"] for product in products} == {careless.mine}, products
    planted = call(
        careless,
        "modern",
        "careless_drf_create",
        store=careless.other,
        name="drf-planted",
        price="1.00",
        idempotencyKey="d-1",
    )
    assert planted.is_error is True, planted
    assert "drf-planted" not in {name for _, name, _ in careless.host_rows()}


@mutation(
    "tenancy/rls/scope.py",
    find='[conf.get("RLS_ROLE"), conf.get("RLS_SETTING"), str(tenant_id)],',
    replace='[conf.get("RLS_ROLE"), conf.get("RLS_SETTING"), ""],',
)
def test_the_shops_own_suite_passes_on_postgresql_under_row_level_security(
    tmp_path: Path,
) -> None:
    """The shop's own pytest suite (``catalog/tests.py``: ``MCPClient`` through the plugin's
    fixtures, in both eras, rows committed by the test) on PostgreSQL, where its test database's
    migrations install the policies and every tool call takes the role.

    Mutation: the tool calls take the role with no tenant → the policies admit no row to the
    listing tool → the suite's listing tests fail → red."""
    with postgres_database_or_skip("shop_own") as url:
        env = shop_env(database_url=url)
        env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)  # the project's own run, its plugins
        shop = Shop(copy_project(tmp_path), env=env)
        output = shop.run(
            ["python", "-m", "pytest", "catalog/tests.py", "--ds=shop.settings",
             "-p", "mcp_tools.testing.pytest_plugin", "-p", "no:cacheprovider", "-q"],
            timeout=300,
        )  # fmt: skip
        assert " passed" in output and "failed" not in output, output
