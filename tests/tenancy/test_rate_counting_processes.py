"""One exact rate count across two server processes: on PostgreSQL's counter table (counted in
the token check's own statement) and on a real Redis (Django's RedisCache).

Two uvicorn processes on the test database share one member's ``/mcp`` budget; calls go to
both at once, eight in flight. Exactly ``RATE`` are admitted, every other one is a 429.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from cluck.devredis import redis_server
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import serve
from tests.mutations import Edit, mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

RATE = 30
CALLS = 44
# Per hour, so the burst never straddles two counting windows.
ENV = {"MCP_TOOLS_RATE": f"{RATE}/h", "TENANCY_API_RATE": "100000/m"}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    """A real Redis for this module (Debian's redis-server; ``./scripts/ensure-redis``)."""
    with redis_server() as url:
        yield url


def _ping(url: str, bearer: str, call_id: int) -> int:
    response = httpx.post(
        f"{url}/mcp",
        content=json.dumps({"jsonrpc": "2.0", "id": call_id, "method": "ping"}),
        headers={
            "Authorization": f"Bearer {bearer}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        },
        timeout=60,
    )
    return response.status_code


def _burst(env: dict[str, str]) -> Counter[int]:
    bearer = bearer_for(MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"]))
    with serve(env={**ENV, **env}) as first, serve(env={**ENV, **env}) as second:
        urls = (first, second)
        # Both processes know the token before the burst (their first sight counts apart).
        statuses = [_ping(url, bearer, 0) for url in urls]
        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses += pool.map(lambda n: _ping(urls[n % 2], bearer, n), range(CALLS - 2))
    return Counter(statuses)


@mutation(
    Edit("tenancy/rates/throttling.py", find="import math\n", replace="import math\nimport os\n"),
    Edit(
        "tenancy/rates/throttling.py",
        find='f"membership:{membership_id}", self.cache',
        replace='f"membership:{membership_id}:{os.getpid()}", self.cache',
    ),
)
def test_two_processes_count_one_exact_budget_on_postgresql() -> None:
    """Mutation: key the counter per process in ``tenancy.rates.throttling.PendingCount.prepare``
    (``f"membership:{membership_id}:{os.getpid()}"``) → red (each process admits
    up to ``RATE`` of its own)."""
    assert _burst({}) == {200: RATE, 429: CALLS - RATE}


@mutation(
    "cluck/settings.py",
    find=(
        '            "OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},\n'
        "        }\n"
        "    }\n"
        '    RATELIMIT_USE_CACHE = "default"\n'
    ),
    replace=(
        '            "OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},\n'
        "        },\n"
        '        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},\n'
        "    }\n"
        '    RATELIMIT_USE_CACHE = "local"\n'
    ),
)
def test_two_processes_count_one_exact_budget_on_redis(redis_url: str) -> None:
    """``CACHE_URL=redis://…`` (cluck/settings.py) moves the counts to Redis.

    Mutation: in cluck/settings.py's Redis branch, count on a ``LocMemCache`` alias
    (``RATELIMIT_USE_CACHE = "local"``) → red (each process admits ``RATE``).
    """
    assert _burst({"CACHE_URL": redis_url}) == {200: RATE, 429: CALLS - RATE}
