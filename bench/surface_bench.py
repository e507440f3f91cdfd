"""Surface benchmark (not a test): what a streamed response and an identity factory cost.

    .venv/bin/python bench/surface_bench.py [--requests 300] [--concurrency 8] [--rounds 7]

Starts an embedded PostgreSQL, migrates, seeds one farm with an owner and a bearer, then two
real ``uvicorn`` processes (1 worker each, ``--lifespan off``) with
``bench.surface_bench_settings``: one where ``bench_echo`` is a prepared ``@tool``, one where the
same definition is an identity factory (``SURFACE_BENCH_FACTORY=1``, built for every request).
It prints, against a baseline measured in the same round:

1. ``tools/call`` with and without a streamed response: ``bench_progress`` (three progress
   notifications) asked with a ``progressToken`` and ``Accept: text/event-stream`` (SSE) vs the
   same call without a token (JSON; the notifications are dropped), both vs ``bench_echo``;
2. the identity-factory surface vs the prepared one: ``tools/call`` of ``bench_echo`` and the
   ``tools/list`` page holding it, factory server vs prepared server.

Sequential figures are median latencies; throughput is requests/second with ``--concurrency``
in-flight requests; ratios are medians of each round's own ratio (``bench.harness``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
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

JSON_ONLY = "application/json"
BOTH = "application/json, text/event-stream"
KINDS = ("echo", "progress-json", "progress-stream", "list")


def _request(kind: str, i: int) -> tuple[dict[str, Any], dict[str, str]]:
    headers = {"Accept": BOTH, "MCP-Protocol-Version": "2025-11-25"}
    if kind == "list":
        return {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {}}, headers
    if kind == "echo":
        params: dict[str, Any] = {"name": "bench_echo", "arguments": {"grade": "Large"}}
    else:
        params = {"name": "bench_progress", "arguments": {"steps": 3}}
        if kind == "progress-stream":
            params["_meta"] = {"progressToken": f"p{i}"}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}, headers


def _check(kind: str, response: httpx.Response) -> None:
    assert response.status_code == 200, (kind, response.status_code, response.text[:300])
    if kind == "progress-stream":
        assert response.headers["content-type"] == "text/event-stream", response.headers
        events = [
            json.loads(line[len("data: ") :])
            for line in response.text.splitlines()
            if line.startswith("data: ")
        ]
        assert sum(e.get("method") == "notifications/progress" for e in events) == 3, events
        assert events[-1]["result"]["structuredContent"]["grade"] == "Large"
        return
    assert response.headers["content-type"] == "application/json", (kind, response.headers)
    result = response.json()["result"]
    if kind == "list":
        assert any(t["name"] == "bench_echo" for t in result["tools"])
    else:
        assert result["structuredContent"]["grade"] == "Large", result


async def _run(url: str, bearer: str, kind: str, n: int, concurrency: int) -> tuple[float, float]:
    """(median latency ms of sequential requests, throughput rps at ``concurrency``)."""
    auth = {"Authorization": f"Bearer {bearer}"}
    limits = httpx.Limits(max_keepalive_connections=concurrency, max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, headers=auth, limits=limits, timeout=30) as http:

        async def one(i: int) -> float:
            body, headers = _request(kind, i)
            started = time.perf_counter()
            response = await http.post("/mcp", json=body, headers=headers)
            elapsed = time.perf_counter() - started
            _check(kind, response)
            return elapsed

        return await measure(one, n, concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=7)
    add_smoke_option(parser)
    options = parser.parse_args()
    if options.smoke:
        options.requests, options.rounds = 3, 1
    n, conc = options.requests, options.concurrency
    env = {"DJANGO_SETTINGS_MODULE": "bench.surface_bench_settings"}
    prepared: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
    factory: dict[str, list[tuple[float, float]]] = {"echo": [], "list": []}
    with tempfile.TemporaryDirectory(prefix="surface-bench-") as tmp:
        with embedded_database(Path(tmp)) as database_url:
            bearer = migrate_and_seed(database_url, "bench.surface_bench_settings")
            with (
                uvicorn_server({**env, "DATABASE_URL": database_url}) as plain,
                uvicorn_server(
                    {**env, "DATABASE_URL": database_url, "SURFACE_BENCH_FACTORY": "1"}
                ) as built,
            ):
                for _ in range(options.rounds):
                    for kind in KINDS:
                        prepared[kind].append(asyncio.run(_run(plain, bearer, kind, n, conc)))
                    for kind in factory:
                        factory[kind].append(asyncio.run(_run(built, bearer, kind, n, conc)))

    def med(runs: list[tuple[float, float]], index: int) -> float:
        return statistics.median(run[index] for run in runs)

    def ratio(ours: list[tuple[float, float]], base: list[tuple[float, float]], i: int) -> float:
        return median_ratio([run[i] for run in ours], [run[i] for run in base])

    print(
        f"{n} requests per figure, 1 uvicorn worker per server, {options.rounds} interleaved "
        "rounds (medians; ratios are medians of each round's ratio)"
    )
    print(f"{'request':<44}{'seq p50 ms':>12}{f'{conc}-way rps':>14}")
    rows = [
        ("tools/call bench_echo (prepared, JSON)", prepared["echo"]),
        ("tools/call bench_progress, no token (JSON)", prepared["progress-json"]),
        ("tools/call bench_progress, token (SSE)", prepared["progress-stream"]),
        ("tools/list page (prepared)", prepared["list"]),
        ("tools/call bench_echo (identity factory)", factory["echo"]),
        ("tools/list page (identity factory)", factory["list"]),
    ]
    for label, runs in rows:
        print(f"{label:<44}{med(runs, 0):>12.2f}{med(runs, 1):>14.0f}")
    stream, json_call = prepared["progress-stream"], prepared["progress-json"]
    print(
        f"streamed vs JSON (same tool): p50 {ratio(stream, json_call, 0):.2f}x, throughput "
        f"{ratio(stream, json_call, 1):.2f}x; streamed vs bench_echo: p50 "
        f"{ratio(stream, prepared['echo'], 0):.2f}x, throughput "
        f"{ratio(stream, prepared['echo'], 1):.2f}x"
    )
    print(
        f"identity factory vs prepared: tools/call p50 "
        f"{ratio(factory['echo'], prepared['echo'], 0):.2f}x, throughput "
        f"{ratio(factory['echo'], prepared['echo'], 1):.2f}x; tools/list p50 "
        f"{ratio(factory['list'], prepared['list'], 0):.2f}x, throughput "
        f"{ratio(factory['list'], prepared['list'], 1):.2f}x"
    )
    if options.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
