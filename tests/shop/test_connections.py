"""Database connections per call in a project without a pool (``mcp_tools.call.handover``).

The shop uses Django's default database settings: no pool, and ``CONN_MAX_AGE`` 0 (a
connection per request) or, as many teams set it, persistent connections. A tool call checks
the token in the request's thread and runs the tool in a worker thread; the worker takes the
request thread's connection instead of opening a second one. Counted on the PostgreSQL server
itself (``pg_stat_database.sessions``: every session established to the shop's database),
with the shop served by uvicorn as the guide serves it.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.existing.harness import rpc
from tests.mutations import mutation
from tests.project_harness import postgres_database_or_skip
from tests.shop.harness import Shop, copy_project, owners_with_tokens, shop_env

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]

OWNER = "owner@main.example"
CALLS = 6
# Persistent connections, set the way a team sets them: in its settings module.
PERSISTENT_SETTINGS = """
from shop.settings import *  # noqa: F403

DATABASES["default"]["CONN_MAX_AGE"] = 600  # noqa: F405
"""


@dataclass
class ServedShop:
    shop: Shop
    token: str
    # One connection for reading the count, open throughout (its own session is counted once,
    # before the first read).
    stats: psycopg.Connection[Any]

    def sessions(self) -> int:
        """Sessions established to the shop's database so far, once the count stops moving
        (a backend reports its session when it exits, just after its client has gone)."""
        last, steady_since = -1, time.monotonic()
        while time.monotonic() - steady_since < 0.6:
            self.stats.execute("SELECT pg_stat_clear_snapshot()")
            row = self.stats.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            assert row is not None
            if row[0] != last:
                last, steady_since = row[0], time.monotonic()
            time.sleep(0.1)
        return int(last)

    def call(self, url: str, tool: str, arguments: dict[str, Any]) -> None:
        reply = rpc(url, self.token, "tools/call", {"name": tool, "arguments": arguments})
        assert reply.status_code == 200, reply.text
        result = reply.json()["result"]
        assert result["isError"] is False, json.dumps(result)

    def rest(self, url: str) -> None:
        reply = httpx.get(
            f"{url}/api/v1/me/", headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )
        assert reply.status_code == 200, reply.text


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[ServedShop]:
    """The shop on a fresh PostgreSQL database, migrated, with a store and its owner's token."""
    with postgres_database_or_skip("shop_conns") as url:
        path = copy_project(Path(tmp_path_factory.mktemp("conns")))
        (path / "shop" / "settings_persistent.py").write_text(PERSISTENT_SETTINGS)
        shop = Shop(path, shop_env(database_url=url))
        shop.manage("migrate")
        (token,) = owners_with_tokens(shop, [("main", OWNER)]).values()
        with psycopg.connect(url, autocommit=True) as stats:
            stats.execute("SELECT 1")
            time.sleep(1.1)  # a backend reports its statistics when idle, at most once a second
            stats.execute("SELECT 1")
            yield ServedShop(shop, token, stats)


def opened_per_call(served: ServedShop, url: str, call: Any) -> float:
    call()  # warm: imports, the first connection of each thread
    before = served.sessions()
    for _ in range(CALLS):
        call()
    return (served.sessions() - before) / CALLS


@mutation(
    "mcp_tools/execution/bounds.py",
    find="                    handover.adopt(lent, close_if_open=False)\n",
    replace="                    pass\n",
)
def test_a_tool_call_opens_one_connection_as_the_rest_view_does(served: ServedShop) -> None:
    """Under ``CONN_MAX_AGE = 0`` each request opens one connection, the REST view's and the
    tool call's alike, a read and a write (with its idempotency record) alike.

    Mutation: the worker does not take the request's connection → it opens its own, two a
    call → red."""
    names = iter(f"Tea-{n}" for n in itertools.count())
    with served.shop.serve("uvicorn") as url:
        rest = opened_per_call(served, url, lambda: served.rest(url))
        read = opened_per_call(served, url, lambda: served.call(url, "shop_list_products", {}))
        write = opened_per_call(
            served,
            url,
            lambda: served.call(
                url,
                "shop_add_product",
                {"name": (name := next(names)), "price": "4.50", "idempotencyKey": name},
            ),
        )
    assert (rest, read, write) == (1, 1, 1)


@mutation(
    "mcp_tools/call/handover.py",
    find="        adopt(lent, close_if_open=True)",
    replace="        [connection.close() for connection in lent.values()]",
)
@mutation(
    "mcp_tools/call/handover.py",
    find="        if _lendable(connection):",
    replace="        if False:",
)
def test_persistent_connections_stay_open_across_tool_calls(served: ServedShop) -> None:
    """With ``CONN_MAX_AGE`` set, the request thread and the worker each keep their own
    connection from call to call: a warm server opens none.

    Mutations: the request thread's connection closed before the view (the handover's old
    rule), or not taken back when the worker had its own → every call opens one → red."""
    with served.shop.serve("uvicorn", DJANGO_SETTINGS_MODULE="shop.settings_persistent") as url:
        served.call(url, "shop_list_products", {})
        read = opened_per_call(served, url, lambda: served.call(url, "shop_list_products", {}))
    assert read == 0
