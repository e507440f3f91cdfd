"""A2A benchmark (not a test): a read skill via ``/a2a`` vs the same tool via ``/mcp``.

    .venv/bin/python bench/a2a_bench.py [--requests 300] [--concurrency 8] [--rounds 7]

Starts an embedded PostgreSQL in a temporary directory, migrates, seeds one farm with an owner
and a bearer token, then one real ``uvicorn`` process (1 worker, ``--lifespan off``) with
``bench.a2a_bench_settings``. In interleaved rounds it calls the trivial read tool
``bench_add`` as ``tools/call`` on ``/mcp`` (2025-11-25) and as the skill ``bench_add`` with
``SendMessage`` on ``/a2a`` (A2A 1.0; each call also stores its finished task), and prints the
median latency of sequential calls, the throughput at ``--concurrency`` and the paired ratios
(target: A2A within 10 % of MCP). Figures are medians over rounds; ratios are medians of each
round's own ratio, like bench/mcp_bench.py.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    embedded_database,
    measure,
    median_ratio,
    migrate_and_seed,
    uvicorn_server,
)

KINDS = ("mcp", "a2a")


def _call(kind: str, i: int) -> tuple[str, dict[str, Any], dict[str, str]]:
    args = {"a": i, "b": 2}
    if kind == "mcp":
        body = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "bench_add", "arguments": args},
        }
        headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
        return "/mcp", body, headers
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": "bench_add", "arguments": args}}],
    }
    body = {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}
    return "/a2a", body, {"A2A-Version": "1.0"}


def _check(kind: str, i: int, response: httpx.Response) -> None:
    assert response.status_code == 200, (kind, response.status_code, response.text[:300])
    result = response.json()["result"]
    if kind == "mcp":
        assert result["structuredContent"]["sum"] == i + 2, result
    else:
        task = result["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        assert task["artifacts"][0]["parts"][0]["data"]["sum"] == i + 2, task


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

        return await measure(one, n, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    n, conc = options.requests, options.concurrency
    figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="a2a-bench-") as tmp:
        with embedded_database(Path(tmp)) as database_url:
            bearer = migrate_and_seed(database_url, "bench.a2a_bench_settings")
            env = {
                "DATABASE_URL": database_url,
                "DJANGO_SETTINGS_MODULE": "bench.a2a_bench_settings",
            }
            with uvicorn_server(env) as url:
                for round_ in range(options.rounds):
                    # Alternate which protocol goes first: no systematic warm-cache advantage.
                    order = KINDS if round_ % 2 == 0 else KINDS[::-1]
                    for kind in order:
                        figures[kind].append(asyncio.run(_run(url, bearer, kind, n, conc)))

    def med(kind: str, index: int) -> float:
        return statistics.median(value[index] for value in figures[kind])

    def paired(index: int) -> float:
        return median_ratio(
            [value[index] for value in figures["a2a"]], [value[index] for value in figures["mcp"]]
        )

    print(
        f"bench_add, {n} requests, 1 uvicorn worker, {options.rounds} interleaved rounds "
        "(medians; ratios are medians of each round's ratio)"
    )
    print(f"{'endpoint':<28}{'seq p50 ms':>12}{f'{conc}-way rps':>14}")
    labels = {"mcp": "/mcp tools/call (2025)", "a2a": "/a2a SendMessage (1.0)"}
    for kind in KINDS:
        print(f"{labels[kind]:<28}{med(kind, 0):>12.2f}{med(kind, 1):>14.0f}")
    print(
        f"A2A vs MCP: p50 {paired(0) - 1:+.1%}, throughput {paired(1) - 1:+.1%} "
        "(target: within 10 %)"
    )


if __name__ == "__main__":
    main()
