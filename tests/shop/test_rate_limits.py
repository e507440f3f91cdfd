"""Rate limits with the guide's settings (no CACHES, no RATELIMIT_*): one count, every process."""

from __future__ import annotations

import httpx
import pytest

from tests.mutations import mutation
from tests.shop.harness import GuidedShop

RATE = 20
# The guide's settings with a low /mcp rate; only the processes of this test use it. Per hour,
# so a burst of requests never straddles two counting windows.
OVERLAY = f'from shop.settings import *  # noqa: F403\n\nMCP_TOOLS_RATE = "{RATE}/h"\n'


def _list_tools(url: str, bearer: str) -> int:
    response = httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {bearer}", "Accept": "application/json"},
        timeout=30,
    )
    return response.status_code


@mutation(
    "tenancy/conf.py",
    find='    if hasattr(settings, "RATELIMIT_USE_CACHE"):\n        return\n',
    replace="    return\n",
)
@pytest.mark.e2e
def test_two_server_processes_count_one_rate_limit(guided_sqlite_shop: GuidedShop) -> None:
    """uvicorn and runserver on one database, alternating calls with one token: together they
    admit ``RATE`` calls, then both answer 429.

    Mutation: make ``tenancy.conf.install_counter_cache_default`` return at once (rate counts
    on Django's default per-process memory cache) → red twice over: with ``django_ratelimit``
    installed as the guide says, its check E003 stops ``makemigrations``, ``migrate`` and
    ``runserver``; without it, each process admits ``RATE`` calls of its own and call
    ``RATE + 1`` passes (seen with the mutation on in the servers only).
    """
    shop = guided_sqlite_shop.shop
    (shop.path / "rate_limited.py").write_text(OVERLAY)
    token = guided_sqlite_shop.tokens["owner@rates.example"]
    settings = {"DJANGO_SETTINGS_MODULE": "rate_limited"}
    with shop.servers(["uvicorn", "runserver"], **settings) as urls:
        statuses = [_list_tools(urls[n % 2], token) for n in range(RATE + 2)]
    assert statuses == [200] * RATE + [429, 429]
