"""Farm tools vs their REST routes, side by side from one run (a benchmark, not a test).

    .venv/bin/python bench/farm_bench.py [--requests 150] [--rounds 5]

Starts a throwaway embedded PostgreSQL, migrates, seeds the demo farms, starts one uvicorn
worker and measures, interleaved so drift hits both sides alike:

1. ``cluck_list_flocks`` via ``/mcp`` vs ``GET /api/v1/flocks/`` (target ≤ 1.15×);
2. ``cluck_record_daily_entry`` (idempotent) vs ``POST /api/v1/daily-entries/`` with an
   ``Idempotency-Key`` (target ≤ 1.15×). Every write uses a fresh key, so each one executes.

Prints medians (ms) and ratios. Each ratio is the median of the rounds' own ratios: the VM's
speed drifts between rounds, so only same-round comparisons are fair.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    embedded_database,
    median_ratio,
    seed_demo,
    uvicorn_server,
)


def _mcp(client: httpx.Client, name: str, arguments: dict[str, object]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = client.post(
        "/mcp",
        content=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    result = response.json()["result"]
    assert response.status_code == 200 and not result["isError"], response.text


def _timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=150, help="per workload and round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cluck-bench-") as workdir:
        with embedded_database(Path(workdir)) as url:
            env, token = seed_demo(url, "bench")
            served = uvicorn_server({**env, "MCP_TOOLS_RATE": "100000/m"})
            with (
                served as base,
                httpx.Client(
                    base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
                ) as client,
            ):
                rounds = _measure(client, args.requests, args.rounds)
    _report(rounds, args.requests)


WORKLOADS = ("rest_list", "mcp_list", "rest_rec", "mcp_rec")


def _measure(
    client: httpx.Client, requests: int, rounds_count: int
) -> list[dict[str, list[float]]]:
    flocks = client.get("/api/v1/flocks/?status=Active").json()["items"]
    flock_id = next(f for f in flocks if f["name"] == "House 1 White")["id"]
    day = "2026-06-01"
    record = {
        "date": day,
        "totalEggs": 900,
        "crackedEggs": 10,
        "dirtyEggs": 5,
        "mortalityCount": 0,
    }

    def rest_list() -> None:
        assert client.get("/api/v1/flocks/").status_code == 200

    def mcp_list() -> None:
        _mcp(client, "cluck_list_flocks", {})

    def rest_record() -> None:
        response = client.post(
            "/api/v1/daily-entries/",
            json={"flockId": flock_id, **record},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert response.status_code in (200, 201), response.text

    def mcp_record() -> None:
        _mcp(
            client,
            "cluck_record_daily_entry",
            {"idempotencyKey": uuid.uuid4().hex, "flock": flock_id, **record},
        )

    for fn in (rest_list, mcp_list, rest_record, mcp_record):
        for _ in range(20):
            fn()
    rounds: list[dict[str, list[float]]] = []
    for _ in range(rounds_count):
        samples: dict[str, list[float]] = {name: [] for name in WORKLOADS}
        for _ in range(requests):
            samples["rest_list"].append(_timed(rest_list))
            samples["mcp_list"].append(_timed(mcp_list))
            samples["rest_rec"].append(_timed(rest_record))
            samples["mcp_rec"].append(_timed(mcp_record))
        rounds.append(samples)
    return rounds


def _report(rounds: list[dict[str, list[float]]], requests: int) -> None:
    """Medians per round; each ratio is the median of the rounds' own ratios.

    The VM's speed drifts between rounds, so only same-round comparisons are fair.
    """
    per_round = [{name: statistics.median(values[name]) for name in WORKLOADS} for values in rounds]
    med = {name: statistics.median(r[name] for r in per_round) for name in WORKLOADS}

    def ratio(ours: str, base: str) -> float:
        return median_ratio((r[ours] for r in per_round), (r[base] for r in per_round))

    print(
        f"farm tools vs REST — {len(rounds)} rounds of {requests} interleaved requests each, "
        "1 uvicorn worker (medians; ratios are medians of each round's ratio)"
    )
    print(f"{'workload':<44}{'median ms':>10}")
    print(f"{'GET /api/v1/flocks/':<44}{med['rest_list']:>10.2f}")
    print(f"{'tools/call cluck_list_flocks':<44}{med['mcp_list']:>10.2f}")
    print(f"{'POST /api/v1/daily-entries/ + Idempotency-Key':<44}{med['rest_rec']:>10.2f}")
    print(f"{'tools/call cluck_record_daily_entry':<44}{med['mcp_rec']:>10.2f}")
    for label, ours, base in (("list", "mcp_list", "rest_list"), ("record", "mcp_rec", "rest_rec")):
        rounds_text = " ".join(f"{r[ours] / r[base]:.2f}" for r in per_round)
        print(
            f"{label + ' ratio':<13}MCP/REST = {ratio(ours, base):.2f}x (target ≤ 1.15; "
            f"rounds: {rounds_text})"
        )


if __name__ == "__main__":
    main()
