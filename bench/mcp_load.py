"""Load test (not a test): mixed read/write tool calls at rising concurrency, 1 and 2 workers.

    .venv/bin/python bench/mcp_load.py [--seconds 6] [--clients 1 4 16 32 64] [--workers 1 2]
                                       [--slot-waits 0 0.5] [--write-share 0.2]

Starts an embedded PostgreSQL, seeds the demo farms, then for each worker count and each
``MCP_TOOLS_SLOT_WAIT_SECONDS`` one ``uvicorn --workers N`` server (``MCP_TOOLS_RATE`` out of
the way: this measures capacity, not the rate limit). At each concurrency, that many async
clients (the generator runs on the same machine) call ``/mcp`` for ``--seconds``: a write
(``cluck_record_daily_entry`` with a fresh ``idempotencyKey``) with probability
``--write-share``, else a read (``cluck_list_flocks``). A client refused as overloaded
(-32010) or rate-limited (429) waits the server's hint (``data.retryAfterMs``, else
``Retry-After``) and sends the same call again, the same key included, as an agent would.

Per level it prints: completed calls per second (goodput) and attempts per second; p50/p99
of a call from its first attempt to its answer (waits included) and of single attempts;
the attempts' outcomes (only ``ok``, ``overloaded`` and ``rate_limited`` are acceptable;
anything else fails the run); the CPU the server and PostgreSQL used (cores busy, from
``/proc``). Afterwards every write key is sent once more: each must answer
``replayed: true`` with the result its one execution stored, and no key may have been
executed twice (exactly once).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    seed_demo,
    smoke_done,
    uvicorn_process,
)

OVERLOADED, RATE_LIMITED = -32010, -32012
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
MAX_ATTEMPTS = 50


@dataclass
class Level:
    """What one concurrency level saw."""

    calls: list[float] = field(default_factory=list)  # seconds, first attempt → answer
    attempts: list[float] = field(default_factory=list)  # seconds per attempt
    outcomes: Counter[str] = field(default_factory=Counter)
    writes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # key → results
    gave_up: int = 0
    reconnects: int = 0  # requests resent after a keep-alive connection closed under them


def _ticks(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` used so far."""
    hz = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += int(fields[11]) + int(fields[12])
    return total / hz


def _family(pid: int) -> list[int]:
    """``pid`` and its descendants (uvicorn's workers, PostgreSQL's backends)."""
    parents: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(stat[1]), []).append(int(proc.name))
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        queue += parents.get(current, [])
    return found


def _postgres_pids(data_dir: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if b"postgres" in cmdline and str(data_dir).encode() in cmdline:
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _retry_seconds(response: httpx.Response, error: dict[str, Any]) -> float:
    data = error.get("data") or {}
    if isinstance(data, dict) and "retryAfterMs" in data:
        return float(data["retryAfterMs"]) / 1000
    return float(response.headers.get("Retry-After", "1"))


async def _call(
    http: httpx.AsyncClient, level: Level, name: str, arguments: dict[str, Any]
) -> dict[str, Any] | None:
    """One logical call with its retries; its result, or ``None`` if it gave up."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": arguments}
    first = time.perf_counter()
    for _ in range(MAX_ATTEMPTS):
        started = time.perf_counter()
        try:
            response = await http.post("/mcp", content=json.dumps(body), headers=HEADERS)
        except httpx.TimeoutException:
            level.outcomes["client_timeout"] += 1
            continue
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.WriteError):
            # The server closed an idle keep-alive connection (uvicorn: after 5 s) as this
            # request went out on it; nothing was answered, so send it again (same key).
            level.reconnects += 1
            continue
        level.attempts.append(time.perf_counter() - started)
        payload = response.json() if response.content else {}
        error = payload.get("error")
        if response.status_code == 429 or (error and error.get("code") == RATE_LIMITED):
            level.outcomes["rate_limited"] += 1
            await asyncio.sleep(_retry_seconds(response, error or {}))
            continue
        if error and error.get("code") == OVERLOADED:
            level.outcomes["overloaded"] += 1
            await asyncio.sleep(_retry_seconds(response, error))
            continue
        result = payload.get("result") if response.status_code == 200 else None
        if result is None or result.get("isError"):
            level.outcomes[f"failed {response.status_code}"] += 1
            print("unexpected answer:", response.status_code, response.text[:300], file=sys.stderr)
            return None
        level.outcomes["ok"] += 1
        level.calls.append(time.perf_counter() - first)
        return dict(result["structuredContent"])
    level.gave_up += 1
    return None


async def _client(
    http: httpx.AsyncClient,
    level: Level,
    until: float,
    rows: list[tuple[int, str]],
    write_share: float,
    read: tuple[str, dict[str, Any]] = ("cluck_list_flocks", {}),
) -> None:
    while time.perf_counter() < until:
        if random.random() < write_share:
            key = uuid.uuid4().hex
            flock, day = random.choice(rows)
            arguments = {
                "idempotencyKey": key,
                "flock": flock,
                "date": day,
                "totalEggs": 900,
                "crackedEggs": 10,
                "dirtyEggs": 5,
                "mortalityCount": 0,
            }
            result = await _call(http, level, "cluck_record_daily_entry", arguments)
            level.writes.setdefault(key, [])
            if result is not None:
                level.writes[key].append({"arguments": arguments, "result": result})
        else:
            await _call(http, level, *read)


async def _level(
    url: str,
    bearer: str,
    level: Level,
    clients: int,
    until: float,
    flocks: list[tuple[int, str]],
    write_share: float,
    read: tuple[str, dict[str, Any]] = ("cluck_list_flocks", {}),
) -> None:
    # One HTTP client with a connection per agent: a client each would build an SSL context
    # each (tens of ms of CPU apiece), and the generator, not the server, would be measured.
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60, limits=limits) as http:
        await asyncio.gather(
            *(_client(http, level, until, flocks, write_share, read) for _ in range(clients))
        )


async def _verify_writes(url: str, bearer: str, levels: list[Level]) -> tuple[int, list[str]]:
    """Send every write key again: each must replay its one execution's stored result."""
    problems: list[str] = []
    checked = 0
    verify = Level()
    headers = {"Authorization": f"Bearer {bearer}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        for level in levels:
            for key, results in level.writes.items():
                checked += 1
                executed = [r for r in results if not r["result"]["replayed"]]
                if len(executed) > 1:
                    problems.append(f"{key}: executed {len(executed)} times")
                if not results:
                    continue  # the client gave up: the key may or may not have executed
                again = await _call(
                    http, verify, "cluck_record_daily_entry", results[0]["arguments"]
                )
                if again is None or not again["replayed"]:
                    problems.append(f"{key}: not replayed afterwards ({again})")
                elif {**again, "replayed": False} != {**results[0]["result"], "replayed": False}:
                    problems.append(f"{key}: replay differs from the stored result")
    return checked, problems


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="per concurrency level")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16, 32, 64])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--slot-waits", type=float, nargs="+", default=[0.0, 0.5])
    parser.add_argument("--write-share", type=float, default=0.2)
    parser.add_argument(
        "--compare",
        type=int,
        metavar="ROUNDS",
        help="instead: shedding vs waiting, one server each (1 worker), levels alternated "
        "between them for ROUNDS rounds (the fair comparison on a machine whose speed drifts)",
    )
    parser.add_argument(
        "--sleep-ms",
        type=int,
        help="with --compare: reads call bench_sleep (an I/O-bound tool of this many ms, "
        "bench.mcp_bench_settings) instead of cluck_list_flocks",
    )
    add_smoke_option(parser)
    options = parser.parse_args()
    if options.smoke:
        # One short level of the main run; --compare is the same levels on more servers.
        options.seconds, options.clients, options.workers = 1.0, [2], [1]
        options.slot_waits, options.compare = [0.0], None
    with tempfile.TemporaryDirectory(prefix="perf_mcp_load_") as tmp:
        with embedded_database(Path(tmp)) as database_url:
            env, bearer = seed_demo(database_url, "load")
            postgres = _postgres_pids(Path(tmp))
            if options.compare:
                _compare(options, env, bearer)
            else:
                _run(options, env, bearer, postgres)
    if options.smoke:
        smoke_done()


def _server_env(env: dict[str, str], wait: float, *, bench: bool = False) -> dict[str, str]:
    extra = {"DJANGO_SETTINGS_MODULE": "bench.mcp_bench_settings"} if bench else {}
    return {
        **env,
        **extra,
        "MCP_TOOLS_RATE": "10000000/m",
        "TENANCY_API_RATE": "10000000/m",
        "MCP_TOOLS_SLOT_WAIT_SECONDS": str(wait),
    }


def _compare(options: Any, env: dict[str, str], bearer: str) -> None:
    """Each slot wait on its own server, the same level run on each in turn, round after
    round; per level the medians over rounds, and the median of the rounds' own ratios."""
    waits = options.slot_waits
    seen: dict[tuple[float, int], list[tuple[float, float, float, float]]] = {}
    with ExitStack() as stack:
        bench = options.sleep_ms is not None
        urls = [
            stack.enter_context(uvicorn_process(_server_env(env, w, bench=bench)))[0] for w in waits
        ]
        rows = _rows(urls[0], bearer)
        read: tuple[str, dict[str, Any]] = ("cluck_list_flocks", {})
        if bench:
            read = ("bench_sleep", {"ms": options.sleep_ms})
        for number in range(options.compare):
            for clients in options.clients:
                order = list(zip(waits, urls, strict=True))
                if number % 2:
                    order.reverse()
                for wait, url in order:
                    level = Level()
                    started = time.perf_counter()
                    until = started + options.seconds
                    asyncio.run(
                        _level(url, bearer, level, clients, until, rows, options.write_share, read)
                    )
                    wall = time.perf_counter() - started
                    tries = sum(level.outcomes.values())
                    shed = level.outcomes["overloaded"] / max(tries, 1)
                    figures = (
                        len(level.calls) / wall,
                        _pct(level.calls, 0.5),
                        _pct(level.calls, 0.99),
                        100 * shed,
                    )
                    seen.setdefault((wait, clients), []).append(figures)
            print(f"round {number + 1}/{options.compare} done", file=sys.stderr, flush=True)
    print(
        f"slot wait vs shedding: {options.compare} rounds of {options.seconds:g} s per level "
        f"and wait, alternated; 1 worker each; medians (ratios: medians of each round's own); "
        f"reads: {read[0]} {read[1]}, writes: {options.write_share:.0%}"
    )
    print(f"{'clients':>7} {'wait s':>6} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'shed %':>7}")
    for clients in options.clients:
        for wait in waits:
            values = seen[(wait, clients)]
            medians = [statistics.median(v[i] for v in values) for i in range(4)]
            print(
                f"{clients:>7} {wait:>6g} {medians[0]:>8.1f} {medians[1]:>8.1f} "
                f"{medians[2]:>8.1f} {medians[3]:>7.1f}"
            )
        base, other = seen[(waits[0], clients)], seen[(waits[-1], clients)]
        ratios = [
            statistics.median(o[i] / b[i] for o, b in zip(other, base, strict=True) if b[i])
            for i in range(3)
        ]
        print(
            f"{clients:>7} wait {waits[-1]:g} / {waits[0]:g}: goodput {ratios[0]:.2f}x, "
            f"p50 {ratios[1]:.2f}x, p99 {ratios[2]:.2f}x"
        )


def _run(options: Any, env: dict[str, str], bearer: str, postgres: list[int]) -> None:
    print(
        f"mixed load on /mcp: {1 - options.write_share:.0%} cluck_list_flocks, "
        f"{options.write_share:.0%} cluck_record_daily_entry (fresh idempotencyKey), "
        f"{options.seconds:g} s per level; clients retry overloaded/429 after the hint. "
        "cores busy = CPU seconds / wall seconds (2 cores, shared with other work)"
    )
    print(
        f"{'workers':>7} {'wait s':>6} {'clients':>7} {'calls/s':>8} {'tries/s':>8} "
        f"{'p50 ms':>8} {'p99 ms':>8} {'try p50':>8} {'try p99':>8} {'shed %':>7} "
        f"{'app cores':>9} {'db cores':>8}  outcomes"
    )
    all_levels: list[Level] = []
    failures: list[str] = []
    for workers in options.workers:
        for wait in options.slot_waits:
            with uvicorn_process(_server_env(env, wait), workers=workers) as (url, process):
                flocks = _rows(url, bearer)
                app = _family(process.pid)
                levels: list[Level] = []
                for clients in options.clients:
                    level = Level()
                    db = [pid for postmaster in postgres for pid in _family(postmaster)]
                    app_cpu, db_cpu = _ticks(app), _ticks(db)
                    started = time.perf_counter()
                    until = started + options.seconds

                    asyncio.run(
                        _level(url, bearer, level, clients, until, flocks, options.write_share)
                    )
                    wall = time.perf_counter() - started
                    app_cores = (_ticks(app) - app_cpu) / wall
                    db_cores = (_ticks(db) - db_cpu) / wall
                    tries = sum(level.outcomes.values())
                    shed = level.outcomes["overloaded"] + level.outcomes["rate_limited"]
                    bad = {
                        k: v
                        for k, v in level.outcomes.items()
                        if k not in ("ok", "overloaded", "rate_limited")
                    }
                    if bad or level.gave_up:
                        failures.append(f"{workers}w wait {wait} {clients}c: {bad} {level.gave_up}")
                    print(
                        f"{workers:>7} {wait:>6g} {clients:>7} {len(level.calls) / wall:>8.1f} "
                        f"{tries / wall:>8.1f} {_pct(level.calls, 0.5):>8.1f} "
                        f"{_pct(level.calls, 0.99):>8.1f} {_pct(level.attempts, 0.5):>8.1f} "
                        f"{_pct(level.attempts, 0.99):>8.1f} {100 * shed / max(tries, 1):>7.1f} "
                        f"{app_cores:>9.2f} {db_cores:>8.2f}  {dict(level.outcomes)}"
                        f" reconnects {level.reconnects}",
                        flush=True,
                    )
                    levels.append(level)
                checked, problems = asyncio.run(_verify_writes(url, bearer, levels))
                print(
                    f"{'':>7} exactly once: {checked} write keys re-sent, "
                    f"{len(problems)} problems {problems[:3]}",
                    flush=True,
                )
                failures += problems
                all_levels += levels
    if failures:
        print("FAILED:", failures[:10])
        sys.exit(1)
    keys = sum(len(level.writes) for level in all_levels)
    print(f"all {keys} write keys executed exactly once; only ok/overloaded/rate_limited seen")


def _rows(url: str, bearer: str) -> list[tuple[int, str]]:
    """``(flock id, date)`` pairs to record on: active flocks, from their placement to 15
    days before the farm's today (the demo submitted the last 14 days), so that concurrent
    writes rarely meet on one draft row."""
    today = dt.datetime.now(ZoneInfo("Asia/Manila")).date()
    rows = []
    for flock_id, placed in _flocks(url, bearer):
        first = max(placed, today - dt.timedelta(days=300))
        days = (today - dt.timedelta(days=15) - first).days
        rows += [(flock_id, (first + dt.timedelta(days=n)).isoformat()) for n in range(days)]
    return rows


def _flocks(url: str, bearer: str) -> list[tuple[int, dt.date]]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "cluck_list_flocks", "arguments": {}},
    }
    response = httpx.post(
        f"{url}/mcp",
        content=json.dumps(body),
        headers={**HEADERS, "Authorization": f"Bearer {bearer}"},
        timeout=60,
    )
    flocks = response.json()["result"]["structuredContent"]["flocks"]
    return [
        (f["flockId"], dt.date.fromisoformat(f["placementDate"]))
        for f in flocks
        if f["status"] == "Active"
    ]


if __name__ == "__main__":
    main()
