"""MCP benchmark (not a test): what ``/mcp`` costs, and how it compares.

    .venv/bin/python bench/mcp_bench.py [--requests 300] [--concurrency 8] [--rounds 7]

Starts an embedded PostgreSQL in a temporary directory, migrates, seeds one farm with an owner
and a bearer token, then real ``uvicorn`` processes (1 worker each, ``--lifespan off``) with
``bench.mcp_bench_settings`` (the real project + bench tools + comparison views). It prints:

1. ``tools/call`` of a trivial tool (``bench_add``) via ``/mcp`` (both eras) vs a bare Django
   JSON view doing the same work behind the same middleware (target overhead <= 15 %), and vs
   that view plus the same per-token rate count ``/mcp`` makes ("bare+rate");
2. ``tools/list`` with 10 vs 500 registered tools (target: flat);
3. the same workload against ``django-stateless-mcp`` (``pip install -e .[bench]``) mounted in
   the same project (target: >= 1.3x its throughput).

Sequential figures are median latencies; throughput is requests/second with ``--concurrency``
in-flight requests. Runs are interleaved and repeated (``--rounds``); each figure is a median
over rounds, each ratio the median of the rounds' own ratios (the VM's speed drifts between
rounds, so only same-round comparisons are fair).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    embedded_database,
    median_ratio,
    migrate_and_seed,
    uvicorn_server,
)

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@contextmanager
def server(database_url: str, *, extra_tools: int = 10) -> Iterator[str]:
    with uvicorn_server(
        {
            "DATABASE_URL": database_url,
            "DJANGO_SETTINGS_MODULE": "bench.mcp_bench_settings",
            "MCP_BENCH_EXTRA_TOOLS": str(extra_tools),
        }
    ) as url:
        yield url


def call_for(kind: str, i: int) -> tuple[str, dict[str, Any], dict[str, str]]:
    args = {"a": i, "b": 2}
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "bench_add", "arguments": args},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    if kind == "mcp-2025":
        return "/mcp", body, {**headers, "MCP-Protocol-Version": "2025-11-25"}
    if kind == "mcp-2026":
        body["params"]["_meta"] = MODERN_META
        return (
            "/mcp",
            body,
            {
                **headers,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "bench_add",
            },
        )
    if kind == "dsm-2025":
        return "/bench/dsm/mcp", body, {**headers, "MCP-Protocol-Version": "2025-11-25"}
    if kind == "dsm-2026":
        body["params"]["_meta"] = MODERN_META
        return (
            "/bench/dsm/mcp",
            body,
            {
                **headers,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "bench_add",
            },
        )
    if kind == "list":
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {}}
        return "/mcp", body, {**headers, "MCP-Protocol-Version": "2025-11-25"}
    if kind == "bare+rate":
        return "/bench/bare-limited", body, headers
    return "/bench/bare", body, headers


def check(kind: str, i: int, response: httpx.Response) -> None:
    assert response.status_code == 200, (kind, response.status_code, response.text[:300])
    result = response.json()["result"]
    if kind == "list":
        assert result["tools"]
    else:
        assert result["structuredContent"]["sum"] == i + 2, (kind, result)


async def _run(url: str, bearer: str, kind: str, n: int, concurrency: int) -> tuple[float, float]:
    """(median latency ms of sequential calls, throughput rps at ``concurrency``)."""
    auth = {"Authorization": f"Bearer {bearer}"}
    limits = httpx.Limits(max_keepalive_connections=concurrency, max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=auth, limits=limits, timeout=30) as http:

        async def one(i: int) -> float:
            path, body, headers = call_for(kind, i)
            started = time.perf_counter()
            response = await http.post(path, json=body, headers=headers)
            elapsed = time.perf_counter() - started
            check(kind, i, response)
            return elapsed

        for i in range(20):  # warm-up
            await one(i)
        latencies = [await one(i) for i in range(n)]
        queue = list(range(n))

        async def worker() -> None:
            while queue:
                await one(queue.pop())

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        throughput = n / (time.perf_counter() - started)
    return statistics.median(latencies) * 1000, throughput


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--rate-cache",
        choices=["default", "locmem"],
        default="default",
        help="locmem: count the rate limit in process memory (isolates the shared counter's cost)",
    )
    options = parser.parse_args()
    n, conc = options.requests, options.concurrency
    if options.rate_cache == "locmem":
        os.environ["MCP_BENCH_RATE_CACHE"] = "locmem"
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        with embedded_database(Path(tmp)) as database_url:
            bearer = migrate_and_seed(database_url, "bench.mcp_bench_settings")
            kinds = ["bare", "bare+rate", "mcp-2025", "mcp-2026", "dsm-2025", "dsm-2026"]
            figures: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
            lists: dict[int, list[float]] = {10: [], 500: []}
            with (
                server(database_url, extra_tools=10) as small,
                server(database_url, extra_tools=500) as large,
            ):
                for _ in range(options.rounds):
                    for kind in kinds:
                        figures[kind].append(asyncio.run(_run(small, bearer, kind, n, conc)))
                    for tools, url in ((10, small), (500, large)):
                        lists[tools].append(asyncio.run(_run(url, bearer, "list", n // 2, 1))[0])

    def med(kind: str, index: int) -> float:
        return statistics.median(value[index] for value in figures[kind])

    def paired(ours: str, base: str, index: int, invert: bool = False) -> float:
        mine = [value[index] for value in figures[ours]]
        theirs = [value[index] for value in figures[base]]
        return median_ratio(theirs, mine) if invert else median_ratio(mine, theirs)

    print(
        f"tools/call bench_add, {n} requests, 1 uvicorn worker, {options.rounds} interleaved "
        f"rounds (medians; ratios are medians of each round's ratio), rate-limit cache: "
        f"{options.rate_cache}"
    )
    print(f"{'endpoint':<28}{'seq p50 ms':>12}{f'{conc}-way rps':>14}")
    for kind in kinds:
        print(f"{kind:<28}{med(kind, 0):>12.2f}{med(kind, 1):>14.0f}")
    for era in ("2025", "2026"):
        ours, dsm = f"mcp-{era}", f"dsm-{era}"
        against = [
            f"vs {base} p50 {paired(ours, base, 0) - 1:+.0%}, throughput "
            f"{paired(ours, base, 1) - 1:+.0%}"
            for base in ("bare", "bare+rate")
        ]
        print(
            f"/mcp {era} era: {'; '.join(against)}; vs django-stateless-mcp "
            f"{paired(ours, dsm, 1):.2f}x throughput, {paired(ours, dsm, 0, invert=True):.2f}x "
            "faster p50"
        )
    small_list, large_list = statistics.median(lists[10]), statistics.median(lists[500])
    list_ratio = median_ratio(lists[500], lists[10])
    print(
        f"tools/list first page p50: {small_list:.2f} ms with ~10 tools, {large_list:.2f} ms "
        f"with ~500 tools (ratio {list_ratio:.2f})"
    )


if __name__ == "__main__":
    main()
