"""The same operation through two doors, REST and MCP, from one run (a benchmark, not a test).

    .venv/bin/python bench/doors_bench.py [--requests 150] [--rounds 5] [--concurrency 8]
                                          [--smoke]

Starts a throwaway embedded PostgreSQL and two uvicorn workers (1 each, ``--lifespan off``):

- the farm (``cluck.settings``, the demo farms seeded): a read, the flocks, as
  ``GET /api/v1/flocks/`` and as ``tools/call cluck_list_flocks``; a write, a day recorded, as
  ``POST /api/v1/daily-entries/`` with an ``Idempotency-Key`` and as
  ``cluck_record_daily_entry`` with its ``idempotencyKey`` (a fresh key each call, so each
  executes);
- the shop with its REST API (``tests/shop``, ``storefront``: a DRF ``ModelViewSet`` whose
  ``list`` and ``create`` are published with ``drf_tool``): ``GET /api/v1/shop/products/`` and
  ``shop_search_products``; ``POST /api/v1/shop/products/`` with an ``Idempotency-Key`` and
  ``shop_create_product`` (a new product name each call).

Each side uses the same bearer token and the same rate count (both budgets raised out of the
way: ``RATES``, ``bench/shop_bench_settings.py``) with the same payload. Each round measures,
per workload: p50 latency, the eight workloads interleaved request by request (so the
machine's drift hits both doors alike); the server's CPU per call, a sequential burst of one
workload read from its threads' scheduler statistics after the server has settled (so work it
defers, the call audit, counts for the workload that caused it); throughput, a burst with
``--concurrency`` requests in flight. The bursts' order rotates per round. Each MCP/REST ratio
is the median of the rounds' own ratios. ``bench/instr_bench.py`` counts the same pairs in
instructions, without the noise.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.farm_bench import FARM_TIME_ZONE, MCP_HEADERS, RATES  # noqa: E402
from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    median_ratio,
    seed_demo,
    smoke_done,
    uvicorn_process,
)
from bench.mcp_bench import cpu_seconds  # noqa: E402
from cluck.devdb import _ensure_database, _with_database  # noqa: E402

SETTLE_SECONDS = 0.5  # longer than the call audit's linger (0.2 s) plus its batch's write
SHOP = ROOT / "tests" / "shop"
PRODUCTS = "/api/v1/shop/products/"
SHOP_SETUP = """
import io
import django
django.setup()
from django.core.management import call_command
from catalog.models import Product, Store
call_command("migrate", verbosity=0)
store = Store.objects.create(code="main", name="Main")
call_command("add_member", tenant="main", email="owner@main.example", role="Admin",
             stdout=io.StringIO())
for name in ("Tea", "Teapot", "Coffee"):
    Product.all_tenants.create(store=store, name=name, price="2.00")
out = io.StringIO()
call_command("issue_token", tenant="main", email="owner@main.example", stdout=out)
print(out.getvalue().strip())
"""
# (operation, door): the pairs, REST first.
PAIRS = ("farm list", "farm record", "shop list", "shop create")
WORKLOADS = tuple(f"{pair} {door}" for pair in PAIRS for door in ("rest", "mcp"))

Call = Callable[[int], Awaitable[None]]


async def _mcp(http: httpx.AsyncClient, name: str, arguments: dict[str, Any]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = await http.post(
        "/mcp",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", **MCP_HEADERS},
    )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["isError"] is False, response.text


def _workloads(farm: httpx.AsyncClient, shop: httpx.AsyncClient, flock: int) -> dict[str, Call]:
    """Each workload's call ``i``; the writes' keys and product names are new every call."""
    # A month back: inside the farm's late-entry grace, outside the demo's submitted days.
    day = (dt.datetime.now(ZoneInfo(FARM_TIME_ZONE)).date() - dt.timedelta(days=30)).isoformat()
    record = {"date": day, "totalEggs": 900, "crackedEggs": 10, "dirtyEggs": 5}
    record |= {"mortalityCount": 0}
    run = os.urandom(4).hex()

    def key(door: str, i: int) -> str:
        return f"{run}-{door}-{i:08d}"

    async def farm_list_rest(i: int) -> None:
        response = await farm.get("/api/v1/flocks/")
        assert response.status_code == 200, response.text

    async def farm_list_mcp(i: int) -> None:
        await _mcp(farm, "cluck_list_flocks", {})

    async def farm_record_rest(i: int) -> None:
        response = await farm.post(
            "/api/v1/daily-entries/",
            json={"flockId": flock, **record},
            headers={"Idempotency-Key": key("rest", i)},
        )
        assert response.status_code in (200, 201), response.text

    async def farm_record_mcp(i: int) -> None:
        arguments = {"idempotencyKey": key("mcp", i), "flock": flock, **record}
        await _mcp(farm, "cluck_record_daily_entry", arguments)

    async def shop_list_rest(i: int) -> None:
        response = await shop.get(PRODUCTS)
        assert response.status_code == 200, response.text

    async def shop_list_mcp(i: int) -> None:
        await _mcp(shop, "shop_search_products", {})

    async def shop_create_rest(i: int) -> None:
        product = {"name": f"P {key('rest', i)}", "price": "2.50"}
        response = await shop.post(
            PRODUCTS, json=product, headers={"Idempotency-Key": key("rest", i)}
        )
        assert response.status_code == 201, response.text

    async def shop_create_mcp(i: int) -> None:
        product = {"name": f"P {key('mcp', i)}", "price": "2.50"}
        await _mcp(shop, "shop_create_product", {**product, "idempotencyKey": key("mcp", i)})

    return dict(
        zip(
            WORKLOADS,
            (
                farm_list_rest,
                farm_list_mcp,
                farm_record_rest,
                farm_record_mcp,
                shop_list_rest,
                shop_list_mcp,
                shop_create_rest,
                shop_create_mcp,
            ),  # fmt: skip
            strict=True,
        )
    )


class Counter:
    """A fresh call number for every call of a workload (keys and names are never reused)."""

    def __init__(self) -> None:
        self.next = 0

    def take(self) -> int:
        self.next += 1
        return self.next


async def _round(
    calls: dict[str, Call], pids: dict[str, int], counters: dict[str, Counter], n: int,
    concurrency: int, shift: int, settle: float,
) -> dict[str, tuple[float, float, float]]:  # fmt: skip
    """``{workload: (p50 ms, server CPU µs per call, rps)}`` for one round."""
    latencies: dict[str, list[float]] = {name: [] for name in WORKLOADS}
    for _ in range(n):
        for name in WORKLOADS:
            started = time.perf_counter()
            await calls[name](counters[name].take())
            latencies[name].append(time.perf_counter() - started)
    order = WORKLOADS[shift % len(WORKLOADS) :] + WORKLOADS[: shift % len(WORKLOADS)]
    figures = {}
    for name in order:
        pid = pids[name.split()[0]]
        await asyncio.sleep(settle)
        before = cpu_seconds(pid)
        for _ in range(n):
            await calls[name](counters[name].take())
        await asyncio.sleep(settle)
        cpu = (cpu_seconds(pid) - before) / n * 1e6
        remaining = [n]

        async def worker(name: str = name, remaining: list[int] = remaining) -> None:
            while remaining[0] > 0:
                remaining[0] -= 1
                await calls[name](counters[name].take())

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        rps = n / (time.perf_counter() - started)
        figures[name] = (statistics.median(latencies[name]) * 1000, cpu, rps)
    return figures


def shop_env(database_url: str) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "bench.shop_bench_settings",
        "PYTHONPATH": f"{SHOP}{os.pathsep}{ROOT}",
    }


def seed_shop(database_url: str) -> str:
    """Migrate the shop's database, create its store, owner and products; the owner's token."""
    done = subprocess.run(
        [sys.executable, "-c", SHOP_SETUP],
        cwd=SHOP,
        env={**os.environ, **shop_env(database_url)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"seeding the shop failed:\n{done.stderr[-3000:]}")
    return done.stdout.split()[-1]


async def _run(
    urls: dict[str, str], tokens: dict[str, str], pids: dict[str, int], options: Any, warmup: int
) -> list[dict[str, tuple[float, float, float]]]:
    limits = httpx.Limits(max_connections=options.concurrency)
    clients = {
        side: httpx.AsyncClient(
            base_url=urls[side],
            headers={"Authorization": f"Bearer {tokens[side]}"},
            limits=limits,
            timeout=60,
        )
        for side in ("farm", "shop")
    }
    try:
        flocks = (await clients["farm"].get("/api/v1/flocks/?status=Active")).json()["items"]
        flock = next(f for f in flocks if f["name"] == "House 1 White")["id"]
        calls = _workloads(clients["farm"], clients["shop"], flock)
        counters = {name: Counter() for name in WORKLOADS}
        for name, call in calls.items():
            for _ in range(warmup):
                await call(counters[name].take())
        return [
            await _round(
                calls,
                pids,
                counters,
                options.requests,
                options.concurrency,
                shift,
                options.settle,
            )  # fmt: skip
            for shift in range(options.rounds)
        ]
    finally:
        for http in clients.values():
            await http.aclose()


def report(rounds: list[dict[str, tuple[float, float, float]]], n: int, concurrency: int) -> None:
    print(
        f"the same operation through two doors — {len(rounds)} rounds: {n} interleaved "
        f"sequential requests per workload, a burst of {n} for CPU and one of {n} at "
        f"{concurrency} in flight for throughput; 1 uvicorn worker per project "
        "(medians over rounds; ratios are medians of each round's ratio)"
    )
    print(f"{'workload':<20}{'p50 ms':>9}{'CPU µs/call':>13}{f'{concurrency}-way rps':>12}")
    for name in WORKLOADS:
        p50, cpu, rps = (statistics.median(r[name][i] for r in rounds) for i in range(3))
        print(f"{name:<20}{p50:>9.2f}{cpu:>13.0f}{rps:>12.0f}")
    print(f"\n{'MCP / REST':<20}{'p50':>9}{'CPU/call':>13}{'throughput':>12}")
    for pair in PAIRS:
        ratios = [
            median_ratio(
                (r[f"{pair} mcp"][i] for r in rounds), (r[f"{pair} rest"][i] for r in rounds)
            )
            for i in range(3)
        ]
        print(f"{pair:<20}{ratios[0]:>9.3f}{ratios[1]:>13.3f}{ratios[2]:>12.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=150, help="per workload and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=8)
    add_smoke_option(parser)
    options = parser.parse_args()
    options.settle, warmup = SETTLE_SECONDS, 20
    if options.smoke:
        options.requests, options.rounds, options.settle, warmup = 3, 1, 0.0, 2
    with tempfile.TemporaryDirectory(prefix="perf_doors_bench_") as tmp, ExitStack() as stack:
        database_url = stack.enter_context(embedded_database(Path(tmp)))
        env, farm_token = seed_demo(database_url, "doors")
        _ensure_database(database_url, "shop")
        shop_url = _with_database(database_url, "shop")
        shop_token = seed_shop(shop_url)
        farm, farm_process = stack.enter_context(uvicorn_process({**env, **RATES}))
        shop, shop_process = stack.enter_context(
            uvicorn_process(
                {**env, **shop_env(shop_url)}, ready_path=PRODUCTS, app="shop.asgi:application"
            )
        )
        rounds = asyncio.run(
            _run(
                {"farm": farm, "shop": shop},
                {"farm": farm_token, "shop": shop_token},
                {"farm": farm_process.pid, "shop": shop_process.pid},
                options,
                warmup,
            )
        )
    report(rounds, options.requests, options.concurrency)
    if options.smoke:
        smoke_done()


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
