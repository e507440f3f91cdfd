"""Row-level security on vs off under ``/mcp``, from one run (a benchmark, not a test).

    .venv/bin/python bench/rls_bench.py [--requests 150] [--rounds 5] [--smoke]

Starts a throwaway embedded PostgreSQL, migrates with ``CLUCK_RLS=1`` (so the tools' role and
the policies are installed), seeds the demo farms, then two uvicorn workers on that database
that differ only by ``CLUCK_RLS`` (``1``: every tool call takes the role and sets the farm in
its transaction, ``tenancy.rls``; ``0``: it does not). For a read tool
(``cluck_list_flocks``) and a write tool (``cluck_record_daily_entry``, a fresh idempotency
key each call, so each one executes), each round measures:

- p50 latency, the four workloads interleaved request by request (so the machine's drift hits
  on and off alike);
- the server's CPU per call: a burst of sequential calls of one workload, the server's threads'
  CPU (``/proc/<pid>/task/*/schedstat``) read after it has settled, so work it defers (the call
  audit) counts for the workload that caused it; the workloads' order rotates per round.

Each ratio (on / off) is the median of the rounds' own ratios; the target is ≤ 1.05× (issue
35). The embedded PostgreSQL connects as a superuser, as ``./scripts/serve``'s does: the
role switch is what makes the policies hold there.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.farm_bench import FARM_TIME_ZONE, RATES, mcp_call  # noqa: E402
from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    median_ratio,
    seed_demo,
    smoke_done,
    uvicorn_process,
)
from bench.mcp_bench import cpu_seconds  # noqa: E402

SETTLE_SECONDS = 0.5  # longer than the call audit's linger (0.2 s) plus its batch's write
WORKLOADS = ("read off", "read on", "write off", "write on")
TARGET = 1.05


class Server:
    """One uvicorn worker: its client and pid."""

    def __init__(self, client: httpx.Client, pid: int) -> None:
        self.client, self.pid = client, pid


def _workloads(servers: dict[str, Server], flock_id: int) -> dict[str, Callable[[], None]]:
    # A month back: inside the farm's late-entry grace, outside the demo's submitted days.
    day = (dt.datetime.now(ZoneInfo(FARM_TIME_ZONE)).date() - dt.timedelta(days=30)).isoformat()
    record = {"flock": flock_id, "date": day, "totalEggs": 900, "crackedEggs": 10}
    record |= {"dirtyEggs": 5, "mortalityCount": 0}

    def read(client: httpx.Client) -> Callable[[], None]:
        return lambda: mcp_call(client, "cluck_list_flocks", {})

    def write(client: httpx.Client) -> Callable[[], None]:
        return lambda: mcp_call(
            client, "cluck_record_daily_entry", {"idempotencyKey": uuid.uuid4().hex, **record}
        )

    return {
        f"{kind} {switch}": make(servers[switch].client)
        for kind, make in (("read", read), ("write", write))
        for switch in ("off", "on")
    }


def _timed(fn: Callable[[], None]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _round(
    servers: dict[str, Server], calls: dict[str, Callable[[], None]], n: int, shift: int
) -> dict[str, tuple[float, float]]:
    """``{workload: (p50 ms, server CPU µs per call)}`` for one round."""
    latencies: dict[str, list[float]] = {name: [] for name in WORKLOADS}
    for _ in range(n):
        for name in WORKLOADS:
            latencies[name].append(_timed(calls[name]))
    cpu: dict[str, float] = {}
    order = WORKLOADS[shift % len(WORKLOADS) :] + WORKLOADS[: shift % len(WORKLOADS)]
    for name in order:
        pid = servers[name.split()[1]].pid
        time.sleep(SETTLE_SECONDS)
        before = cpu_seconds(pid)
        for _ in range(n):
            calls[name]()
        time.sleep(SETTLE_SECONDS)
        cpu[name] = (cpu_seconds(pid) - before) / n * 1e6
    return {name: (statistics.median(latencies[name]), cpu[name]) for name in WORKLOADS}


def _report(rounds: list[dict[str, tuple[float, float]]], requests: int) -> None:
    print(
        f"/mcp with row-level security on vs off — {len(rounds)} rounds of {requests} "
        "interleaved requests per workload, 1 uvicorn worker each (medians over rounds)"
    )
    print(f"{'workload':<12}{'p50 ms':>10}{'CPU µs/call':>14}")
    for name in WORKLOADS:
        p50 = statistics.median(r[name][0] for r in rounds)
        cpu = statistics.median(r[name][1] for r in rounds)
        print(f"{name:<12}{p50:>10.2f}{cpu:>14.0f}")
    for kind in ("read", "write"):
        for index, figure in ((0, "p50"), (1, "CPU")):
            on = [r[f"{kind} on"][index] for r in rounds]
            off = [r[f"{kind} off"][index] for r in rounds]
            ratio = median_ratio(on, off)
            per_round = " ".join(f"{a / b:.3f}" for a, b in zip(on, off, strict=True))
            verdict = "met" if ratio <= TARGET else "NOT MET"
            print(
                f"{kind} {figure} on/off = {ratio:.3f}x (target ≤ {TARGET}: {verdict}; "
                f"rounds: {per_round})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=150, help="per workload and round")
    parser.add_argument("--rounds", type=int, default=5)
    add_smoke_option(parser)
    args = parser.parse_args()
    warmup = 20
    if args.smoke:
        args.requests, args.rounds, warmup = 3, 1, 2

    with tempfile.TemporaryDirectory(prefix="cluck-rls-bench-") as workdir:
        with embedded_database(Path(workdir)) as url, ExitStack() as stack:
            # Migrated with it on: the role and the policies installed (the "on" server's
            # start-up checks refuse to serve without them).
            os.environ["CLUCK_RLS"] = "1"
            env, token = seed_demo(url, "bench")
            env = {**env, **RATES}
            servers: dict[str, Server] = {}
            for switch, value in (("off", "0"), ("on", "1")):
                base, process = stack.enter_context(uvicorn_process({**env, "CLUCK_RLS": value}))
                client = stack.enter_context(
                    httpx.Client(
                        base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=30
                    )
                )
                servers[switch] = Server(client, process.pid)
            flocks = servers["off"].client.get("/api/v1/flocks/?status=Active").json()["items"]
            flock_id = next(f for f in flocks if f["name"] == "House 1 White")["id"]
            calls = _workloads(servers, flock_id)
            for fn in calls.values():
                for _ in range(warmup):
                    fn()
            rounds = [_round(servers, calls, args.requests, shift) for shift in range(args.rounds)]
    _report(rounds, args.requests)
    if args.smoke:
        smoke_done()


if __name__ == "__main__":
    main()
