"""A2A benchmark (not a test): a read skill via ``/a2a`` vs the same tool via ``/mcp``.

    .venv/bin/python bench/a2a_bench.py [--requests 300] [--concurrency 8] [--rounds 7]

Starts an embedded PostgreSQL in a temporary directory, migrates, seeds one farm with an owner
and a bearer token, then one real ``uvicorn`` process (1 worker, ``--lifespan off``) with
``bench.a2a_bench_settings``. In interleaved rounds it calls each read tool of ``--tools`` as
``tools/call`` on ``/mcp`` (2025-11-25) and as the skill of the same name with ``SendMessage``
on ``/a2a`` (A2A 1.0; each call also stores its finished task), and prints the median latency
of sequential calls, the throughput at ``--concurrency`` and the paired ratios (target: A2A
within 10 % of MCP). The tools: ``bench_add`` (no database work: the protocol's own cost at
its largest share) and ``cluck_list_flocks`` (the farm's read, its queries included). Figures
are medians over rounds; ratios are medians of each round's own ratio, like bench/mcp_bench.py.
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
    add_smoke_option,
    embedded_database,
    measure,
    median_ratio,
    migrate_and_seed,
    smoke_done,
    uvicorn_server,
)

KINDS = ("mcp", "a2a")


TOOLS = ("bench_add", "cluck_list_flocks")


def _arguments(tool: str, i: int) -> dict[str, Any]:
    return {"a": i, "b": 2} if tool == "bench_add" else {}


def _call(kind: str, tool: str, i: int) -> tuple[str, dict[str, Any], dict[str, str]]:
    args = _arguments(tool, i)
    if kind == "mcp":
        body = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        }
        headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
        return "/mcp", body, headers
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": tool, "arguments": args}}],
    }
    body = {"jsonrpc": "2.0", "id": i, "method": "SendMessage", "params": {"message": message}}
    return "/a2a", body, {"A2A-Version": "1.0"}


def _check(kind: str, tool: str, i: int, response: httpx.Response) -> None:
    assert response.status_code == 200, (kind, response.status_code, response.text[:300])
    result = response.json()["result"]
    if kind == "mcp":
        data = result["structuredContent"]
    else:
        task = result["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        data = task["artifacts"][0]["parts"][0]["data"]
    if tool == "bench_add":
        assert data["sum"] == i + 2, data
    else:
        assert "flocks" in data, data


async def _run(
    url: str, bearer: str, kind: str, tool: str, n: int, concurrency: int
) -> tuple[float, float]:
    """(median latency ms of sequential calls, throughput rps at ``concurrency``)."""
    auth = {"Authorization": f"Bearer {bearer}"}
    limits = httpx.Limits(max_keepalive_connections=concurrency, max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=auth, limits=limits, timeout=30) as http:

        async def one(i: int) -> float:
            path, body, headers = _call(kind, tool, i)
            started = time.perf_counter()
            response = await http.post(path, json=body, headers=headers)
            elapsed = time.perf_counter() - started
            _check(kind, tool, i, response)
            return elapsed

        return await measure(one, n, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated read tools")
    add_smoke_option(parser)
    options = parser.parse_args()
    if options.smoke:
        options.requests, options.rounds = 3, 1
    n, conc, tools = options.requests, options.concurrency, options.tools.split(",")
    figures: dict[tuple[str, str], list[tuple[float, float]]] = {
        (tool, kind): [] for tool in tools for kind in KINDS
    }
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
                    for tool in tools:
                        for kind in order:
                            figures[tool, kind].append(
                                asyncio.run(_run(url, bearer, kind, tool, n, conc))
                            )

    def med(tool: str, kind: str, index: int) -> float:
        return statistics.median(value[index] for value in figures[tool, kind])

    def paired(tool: str, index: int) -> float:
        return median_ratio(
            [value[index] for value in figures[tool, "a2a"]],
            [value[index] for value in figures[tool, "mcp"]],
        )

    print(
        f"{n} requests, 1 uvicorn worker, {options.rounds} interleaved rounds "
        "(medians; ratios are medians of each round's ratio)"
    )
    print(f"{'tool':<20}{'endpoint':<28}{'seq p50 ms':>12}{f'{conc}-way rps':>14}")
    labels = {"mcp": "/mcp tools/call (2025)", "a2a": "/a2a SendMessage (1.0)"}
    for tool in tools:
        for kind in KINDS:
            print(
                f"{tool:<20}{labels[kind]:<28}{med(tool, kind, 0):>12.2f}"
                f"{med(tool, kind, 1):>14.0f}"
            )
    for tool in tools:
        print(
            f"{tool}: A2A vs MCP p50 {paired(tool, 0) - 1:+.1%}, throughput "
            f"{paired(tool, 1) - 1:+.1%} (target: within 10 %)"
        )
    if options.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
