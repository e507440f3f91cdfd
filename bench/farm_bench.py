"""Farm tools vs their REST routes, side by side from one run (a benchmark, not a test).

    .venv/bin/python bench/farm_bench.py [--requests 150] [--rounds 5] [--smoke]

Starts a throwaway embedded PostgreSQL, migrates, seeds the demo farms, starts one uvicorn
worker and measures, interleaved so drift hits both sides alike:

1. ``cluck_list_flocks`` via ``/mcp`` vs ``GET /api/v1/flocks/`` (target ≤ 1.15×);
2. ``cluck_record_daily_entry`` (idempotent) vs ``POST /api/v1/daily-entries/`` with an
   ``Idempotency-Key`` (target ≤ 1.15×). Every write uses a fresh key, so each one executes.

Prints medians (ms) and ratios. Each ratio is the median of the rounds' own ratios: the VM's
speed drifts between rounds, so only same-round comparisons are fair.

The server runs with both rate budgets out of the way (``RATES``: a run sends thousands of
requests a minute from one token), and the day recorded is a month before the farm's today
(inside its late-entry grace, before the demo's submitted fortnight). ``--smoke`` measures one
round of a few requests, after sending one request more than the default budgets on each
side, so a bench whose limits are no longer raised fails in the smoke run too.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    median_ratio,
    seed_demo,
    smoke_done,
    uvicorn_server,
)

# Both budgets out of the way: REST (TenancyMiddleware) and /mcp, each "300/m" by default.
RATES = {"TENANCY_API_RATE": "100000000/m", "MCP_TOOLS_RATE": "100000000/m"}
DEFAULT_BUDGET = 300  # per minute, cluck/settings.py's default for both
FARM_TIME_ZONE = "Asia/Manila"  # the demo farm's (cluck seed_demo)


MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def mcp_call(client: httpx.Client, name: str, arguments: dict[str, object]) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = client.post(
        "/mcp",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", **MCP_HEADERS},
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
    add_smoke_option(parser)
    args = parser.parse_args()
    warmup = 20
    if args.smoke:
        args.requests, args.rounds, warmup = 3, 1, 2

    with tempfile.TemporaryDirectory(prefix="cluck-bench-") as workdir:
        with embedded_database(Path(workdir)) as url:
            env, token = seed_demo(url, "bench")
            served = uvicorn_server({**env, **RATES})
            with (
                served as base,
                httpx.Client(
                    base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
                ) as client,
            ):
                if args.smoke:
                    _beyond_default_budgets(client)
                rounds = _measure(client, args.requests, args.rounds, warmup)
    _report(rounds, args.requests)
    if args.smoke:
        smoke_done()


def _beyond_default_budgets(client: httpx.Client) -> None:
    """Twice the default budget and one more on each side, the cheapest requests there are: a
    full run sends many times that within a minute, so a 429 here is the run's 429. Twice,
    because the counters are fixed one-minute windows: requests that straddle a window's end
    split between two counters, and only 2 x budget + 1 (sent well within a minute) puts more
    than the budget into one of them whatever the split (CI of stop 38: 301 straddled it)."""
    for n in range(2 * DEFAULT_BUDGET + 1):
        rest = client.get("/api/v1/me/")
        assert rest.status_code == 200, f"REST request {n + 1}: {rest.status_code} {rest.text}"
        body = {"jsonrpc": "2.0", "id": n, "method": "ping", "params": {}}
        mcp = client.post("/mcp", json=body, headers=MCP_HEADERS)
        assert mcp.status_code == 200, f"/mcp request {n + 1}: {mcp.status_code} {mcp.text}"


WORKLOADS = ("rest_list", "mcp_list", "rest_rec", "mcp_rec")


def _measure(
    client: httpx.Client, requests: int, rounds_count: int, warmup: int
) -> list[dict[str, list[float]]]:
    flocks = client.get("/api/v1/flocks/?status=Active").json()["items"]
    flock_id = next(f for f in flocks if f["name"] == "House 1 White")["id"]
    # A month back: inside the farm's late-entry grace, outside the demo's submitted days.
    day = (dt.datetime.now(ZoneInfo(FARM_TIME_ZONE)).date() - dt.timedelta(days=30)).isoformat()
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
        mcp_call(client, "cluck_list_flocks", {})

    def rest_record() -> None:
        response = client.post(
            "/api/v1/daily-entries/",
            json={"flockId": flock_id, **record},
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
        assert response.status_code in (200, 201), response.text

    def mcp_record() -> None:
        mcp_call(
            client,
            "cluck_record_daily_entry",
            {"idempotencyKey": uuid.uuid4().hex, "flock": flock_id, **record},
        )

    for fn in (rest_list, mcp_list, rest_record, mcp_record):
        for _ in range(warmup):
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
