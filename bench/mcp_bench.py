"""MCP benchmark (not a test): what ``/mcp`` costs against the same work without MCP.

    .venv/bin/python bench/mcp_bench.py [--requests 200] [--concurrency 8] [--rounds 9]
                                        [--no-redis] [--no-peers] [--smoke]
    .venv/bin/python bench/mcp_bench.py --rls [--requests 150] [--rounds 5] [--smoke]

Starts an embedded PostgreSQL and a Redis (``cluck.devredis``) in temporary directories,
migrates, seeds one farm with an owner and a bearer token, then real ``uvicorn`` processes
(1 worker each, ``--lifespan off``) with ``bench.mcp_bench_settings`` (the real project +
bench tools + comparison views): one counting rate limits on tenancy's PostgreSQL table (the
embedded default), one on Redis (``CACHE_URL``), one with 500 tools for ``tools/list``.

Every kind does the same work: authenticate the bearer (TenancyMiddleware), then add two
numbers and answer JSON-RPC.

- ``bare``: a bare Django JSON view behind the same middleware (authentication only);
- ``bare+rate``: the same view plus the same per-member rate count as ``/mcp`` (the same
  budget, counted the same way) — the "same work" baseline;
- ``mcp-2025`` / ``mcp-2026``: ``tools/call`` of ``bench_add`` on ``/mcp`` in the handshake
  era (2025-11-25 header) and in the 2026-07-28 era (``_meta`` envelope, routing headers).
  ``bench_add`` is ``async def`` (a declared non-blocking tool, on the event loop, as the
  peers run theirs); ``thread mcp-…`` calls ``bench_add_in_thread``, the same tool as a plain
  function (in a worker thread);
- ``dsm-2025`` / ``dsm-2026``: the same tool on django-stateless-mcp (``pip install -e
  .[bench]``) mounted in the same project behind the same authentication and rate count;
- ``redis …``: the same kinds on the server counting on Redis;
- ``dms-2025``: the same tool on django-mcp-server 0.5 (mcp 1.x, which has no 2026-07-28
  era), ``mcpz-2025`` / ``mcpz-2026``: on django-mcpz 1.2. Each peer runs in its own venv
  (``bench/peers/venvs.py``: created once under ``var/bench-peers/``, PyPI needed the first
  time) and its own uvicorn process, a minimal project (``bench/peers/``) on its own
  database of the same PostgreSQL, with Cluck's middleware chain, the same token check and
  the same rate count in front of the peer's view, answered through the peer's own hooks.
  A peer venv that cannot be created stops the run with the reason (``--no-peers`` skips
  them, and says so).

Each round measures every kind twice: sequential latency, interleaved request by request
across kinds (so drift in the machine's speed hits every kind alike), and throughput with
``--concurrency`` requests in flight, one burst per kind in a rotating order. The server's
CPU per call comes from its threads' scheduler statistics (``/proc/<pid>/task/*/schedstat``,
nanoseconds of CPU really run), which other load on the machine barely moves; it is read
after the server has settled, so work it defers (the call audit) counts for the kind that
caused it. Figures are
medians over rounds; each ratio is the median of the rounds' own ratios. The targets
(issue 16) are checked on those ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    median_ratio,
    migrate_and_seed,
    smoke_done,
    uvicorn_process,
)
from bench.peers import venvs  # noqa: E402
from cluck.devdb import _ensure_database, _with_database  # noqa: E402
from cluck.devredis import redis_server  # noqa: E402

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
HEADERS = {"Accept": "application/json, text/event-stream"}
KINDS = ["bare", "bare+rate", "mcp-2025", "mcp-2026", "dsm-2025", "dsm-2026"]
REDIS_KINDS = ["bare+rate", "mcp-2025", "mcp-2026"]
# The operator's kit (docs/operating.md), each on a server of its own: "noaudit" without the
# stored call audit, "nokit" without the audit and the tenant switches (the farm has both on).
KIT_KINDS = {"noaudit mcp-2025": "noaudit", "nokit mcp-2025": "nokit"}
# A plain (synchronous) tool, run in a worker thread: what the event-loop path saves.
THREAD_KINDS = ["thread mcp-2025", "thread mcp-2026"]
KIT_PREFIXES = ("redis ", "noaudit ", "nokit ", "thread ")
# Longer than the call audit's linger (0.2 s) plus its batch's write.
SETTLE_SECONDS = 0.5
# The peers in their own processes: kind -> peer (bench/peers/venvs.py). django-mcp-server
# serves only the 2025 revisions (mcp 1.x answers 2026-07-28 "Unsupported protocol version").
PEER_KINDS = {
    "dms-2025": "django-mcp-server",
    "mcpz-2025": "django-mcpz",
    "mcpz-2026": "django-mcpz",
}
PEER_NAMES = {
    "dsm": "django-stateless-mcp",
    "dms": "django-mcp-server",
    "mcpz": "django-mcpz",
}


def call_for(kind: str, i: int) -> tuple[str, dict[str, Any], dict[str, str]]:
    """``(path, JSON body, headers)`` of call ``i`` of ``kind`` (a server prefix ignored)."""
    tool = "bench_add_in_thread" if kind.startswith("thread ") else "bench_add"
    kind = _bare_kind(kind)
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"a": i, "b": 2}},
    }
    if kind == "list":
        body = {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {}}
        return "/mcp", body, {**HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    if kind in ("bare", "bare+rate"):
        return ("/bench/bare" if kind == "bare" else "/bench/bare-limited"), body, HEADERS
    path = "/bench/dsm/mcp" if kind.startswith("dsm-") else "/mcp"
    if kind.endswith("-2025"):
        return path, body, {**HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    body["params"]["_meta"] = MODERN_META
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}
    return path, body, {**HEADERS, **modern, "Mcp-Name": tool}


def _bare_kind(kind: str) -> str:
    for prefix in KIT_PREFIXES:
        kind = kind.removeprefix(prefix)
    return kind


def check(kind: str, i: int, response: httpx.Response) -> None:
    assert response.status_code == 200, (kind, response.status_code, response.text[:300])
    result = response.json()["result"]
    if kind == "list":
        assert result["tools"]
    else:
        assert result["structuredContent"]["sum"] == i + 2, (kind, result)


def cpu_seconds(pid: int) -> float:
    """CPU time every thread of ``pid`` has run so far (schedstat: nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue  # a thread that ended meanwhile
    return total / 1e9


class Target:
    """One server process: its URL, pid and the bearer token of its seeded member."""

    def __init__(self, url: str, pid: int, bearer: str) -> None:
        self.url, self.pid, self.bearer = url, pid, bearer


async def _post(http: httpx.AsyncClient, kind: str, i: int) -> float:
    path, body, headers = call_for(kind, i)
    started = time.perf_counter()
    response = await http.post(path, json=body, headers=headers)
    elapsed = time.perf_counter() - started
    check(_bare_kind(kind), i, response)
    return elapsed


async def _drain(http: httpx.AsyncClient, kind: str, queue: list[int]) -> None:
    while queue:
        await _post(http, kind, queue.pop())


async def _round(
    targets: dict[str, Target], n: int, concurrency: int, shift: int, settle: float
) -> dict[str, tuple[float, float, float]]:
    """``{kind: (p50 ms, rps, server CPU µs per call)}`` for one round."""
    kinds = list(targets)
    kinds = kinds[shift % len(kinds) :] + kinds[: shift % len(kinds)]
    limits = httpx.Limits(max_keepalive_connections=concurrency, max_connections=concurrency)
    clients = {
        t.url: httpx.AsyncClient(
            base_url=t.url,
            headers={"Authorization": f"Bearer {t.bearer}"},
            limits=limits,
            timeout=60,
        )
        for t in targets.values()
    }
    try:
        latencies: dict[str, list[float]] = {kind: [] for kind in kinds}
        for kind in kinds:  # warm-up (connections, prepared statements)
            for i in range(10):
                await _post(clients[targets[kind].url], kind, i)
        for i in range(n):
            for kind in kinds:
                latencies[kind].append(await _post(clients[targets[kind].url], kind, i))
        figures = {}
        for kind in kinds:
            http, pid = clients[targets[kind].url], targets[kind].pid
            queue = list(range(n))
            # Work a server defers (the call audit's writer, MCP_TOOLS_AUDIT_LINGER_SECONDS)
            # is charged to the kind that caused it: the server settles before the burst and
            # its CPU is read once it has settled after it. Servers host several kinds.
            await asyncio.sleep(settle)
            cpu, started = cpu_seconds(pid), time.perf_counter()
            await asyncio.gather(*(_drain(http, kind, queue) for _ in range(concurrency)))
            elapsed = time.perf_counter() - started
            await asyncio.sleep(settle)
            cpu = cpu_seconds(pid) - cpu
            p50 = statistics.median(latencies[kind]) * 1000
            figures[kind] = (p50, n / elapsed, cpu / n * 1e6)
        return figures
    finally:
        for http in clients.values():
            await http.aclose()


# The identity factory of the farm's surface (the query tool): its page is completed per
# request, the others are prepared bytes, so ``tools/list`` is compared on the page holding it
# in both servers (the first page holds it with ~10 tools, not with ~500).
FACTORY_TOOL = "cluck_query"


async def _list_page(http: httpx.AsyncClient, i: int, cursor: str | None) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {}}
    if cursor is not None:
        body["params"] = {"cursor": cursor}
    headers = {**HEADERS, "MCP-Protocol-Version": "2025-11-25"}
    response = await http.post("/mcp", json=body, headers=headers)
    assert response.status_code == 200, (response.status_code, response.text[:300])
    result: dict[str, Any] = response.json()["result"]
    return result


async def _list_p50(url: str, bearer: str, n: int) -> tuple[float, int]:
    """The p50 (ms) of ``tools/list`` of the page holding ``FACTORY_TOOL``, and that page's
    index."""
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {bearer}"}, timeout=60
    ) as http:
        cursor, index = None, 0
        page = await _list_page(http, 0, cursor)
        while not any(t["name"] == FACTORY_TOOL for t in page["tools"]):
            cursor = page.get("nextCursor")
            if cursor is None:
                raise SystemExit(f"no tools/list page holds {FACTORY_TOOL}")
            index += 1
            page = await _list_page(http, 0, cursor)
        for i in range(10):
            await _list_page(http, i, cursor)
        times = []
        for i in range(n):
            started = time.perf_counter()
            page = await _list_page(http, i, cursor)
            times.append(time.perf_counter() - started)
            assert any(t["name"] == FACTORY_TOOL for t in page["tools"])
        return statistics.median(times) * 1000, index


@contextmanager
def _servers(database_url: str, redis_url: str, bearer: str) -> Iterator[dict[str, Target]]:
    base = {"DATABASE_URL": database_url, "DJANGO_SETTINGS_MODULE": "bench.mcp_bench_settings"}
    with ExitStack() as stack:
        servers = {}
        for name, env in (
            ("small", {"MCP_BENCH_EXTRA_TOOLS": "10"}),
            ("large", {"MCP_BENCH_EXTRA_TOOLS": "500"}),
            ("redis", {"MCP_BENCH_EXTRA_TOOLS": "10", "CACHE_URL": redis_url}),
            ("noaudit", {"MCP_BENCH_EXTRA_TOOLS": "10", "MCP_TOOLS_AUDIT": "0"}),
            (
                "nokit",
                {
                    "MCP_BENCH_EXTRA_TOOLS": "10",
                    "MCP_TOOLS_AUDIT": "0",
                    "MCP_TOOLS_TENANT_SWITCHES": "",
                },
            ),
        ):
            url, process = stack.enter_context(uvicorn_process({**base, **env}))
            servers[name] = Target(url, process.pid, bearer)
        yield servers


def _in_peer_venv(python: Path, env: dict[str, str], *args: str) -> str:
    """``python <args>`` in the peer's venv with the checkout on its path; its output."""
    done = subprocess.run(
        [str(python), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{python} {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


@contextmanager
def _peer_servers(database_url: str) -> Iterator[dict[str, Target]]:
    """Each peer (bench/peers/) in its venv: its database migrated and seeded, its server."""
    with ExitStack() as stack:
        servers = {}
        for peer in dict.fromkeys(PEER_KINDS.values()):
            python = venvs.ensure(peer)
            module = peer.replace("-", "_")
            _ensure_database(database_url, f"peer_{module}")
            env = {
                "DATABASE_URL": _with_database(database_url, f"peer_{module}"),
                "DJANGO_SETTINGS_MODULE": f"bench.peers.{module}.settings",
            }
            bearer = _in_peer_venv(python, env, "-m", "bench.peers.project.seed").split()[-1]
            url, process = stack.enter_context(
                uvicorn_process(
                    env,
                    ready_path="/mcp",
                    python=python,
                    app="bench.peers.project.asgi:application",
                )
            )
            servers[peer] = Target(url, process.pid, bearer)
        yield servers


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="per kind, per round")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--no-redis", action="store_true", help="skip the Redis server's kinds")
    parser.add_argument(
        "--no-peers", action="store_true", help="skip django-mcp-server and django-mcpz"
    )
    add_smoke_option(parser)
    options = parser.parse_args()
    settle = SETTLE_SECONDS
    if options.smoke:
        options.requests, options.rounds, settle = 3, 1, 0.0
    n, conc, rounds = options.requests, options.concurrency, options.rounds
    rows: dict[str, list[tuple[float, float, float]]] = {}
    lists: dict[int, list[float]] = {10: [], 500: []}
    pages: dict[int, int] = {}  # tools -> index of the page holding FACTORY_TOOL
    with tempfile.TemporaryDirectory(prefix="perf_mcp_bench_") as tmp, ExitStack() as stack:
        database_url = stack.enter_context(embedded_database(Path(tmp)))
        redis_url = "" if options.no_redis else stack.enter_context(redis_server())
        bearer = migrate_and_seed(database_url, "bench.mcp_bench_settings")
        servers = stack.enter_context(
            _servers(database_url, redis_url or "redis://127.0.0.1:1/0", bearer)
        )
        peers = {} if options.no_peers else stack.enter_context(_peer_servers(database_url))
        targets = {kind: servers["small"] for kind in KINDS}
        if not options.no_redis:
            targets.update({f"redis {kind}": servers["redis"] for kind in REDIS_KINDS})
        targets.update({kind: servers["small"] for kind in THREAD_KINDS})
        targets.update({kind: servers[name] for kind, name in KIT_KINDS.items()})
        targets.update({kind: peers[peer] for kind, peer in PEER_KINDS.items() if peer in peers})
        for number in range(rounds):
            figures = asyncio.run(_round(targets, n, conc, number, settle))
            for kind, row in figures.items():
                rows.setdefault(kind, []).append(row)
            for tools, name in ((10, "small"), (500, "large")):
                p50, pages[tools] = asyncio.run(
                    _list_p50(servers[name].url, bearer, max(n // 4, 1))
                )
                lists[tools].append(p50)
            print(f"round {number + 1}/{rounds} done", file=sys.stderr, flush=True)
    report(rows, lists, n=n, concurrency=conc, rounds=rounds, pages=pages)
    if options.no_peers:
        print("\npeers skipped (--no-peers): django-mcp-server and django-mcpz not measured")
    if options.smoke:
        smoke_done()


def report(
    rows: dict[str, list[tuple[float, float, float]]],
    lists: dict[int, list[float]],
    *,
    n: int,
    concurrency: int,
    rounds: int,
    pages: dict[int, int],
) -> None:
    def column(kind: str, index: int) -> list[float]:
        return [row[index] for row in rows[kind]]

    def ratio(ours: str, base: str, index: int) -> float:
        return median_ratio(column(ours, index), column(base, index))

    print(
        f"tools/call bench_add: {n} sequential calls (interleaved across kinds) and {n} at "
        f"{concurrency} in flight per kind per round, {rounds} rounds, 1 uvicorn worker per "
        "server; figures are medians over rounds, ratios medians of each round's own ratio"
    )
    print(f"{'endpoint':<20}{'p50 ms':>9}{f'{concurrency}-way rps':>12}{'CPU µs/call':>13}")
    for kind in rows:
        p50, rps, cpu = (statistics.median(column(kind, i)) for i in range(3))
        print(f"{kind:<20}{p50:>9.2f}{rps:>12.0f}{cpu:>13.0f}")
    print(
        "\ntargets (issues 16, 24)                     p50 ratio   throughput   CPU/call  verdict"
        "\n(vs bare+rate: p50 and CPU <= 1.10, throughput >= 0.90; vs django-stateless-mcp: "
        "throughput >= 1.3)"
    )
    near = lambda p, t, c: p <= 1.1 and t >= 0.9 and c <= 1.1  # noqa: E731
    checks: list[tuple[str, str, str, Callable[[float, float, float], bool]]] = [
        ("/mcp 2025 era vs bare+rate", "mcp-2025", "bare+rate", near),
        ("/mcp 2026 era vs bare+rate", "mcp-2026", "bare+rate", near),
        ("2026 era vs 2025 era", "mcp-2026", "mcp-2025", lambda p, t, c: p <= 1.0 and t >= 1.0),
        ("/mcp 2025 vs django-stateless-mcp", "mcp-2025", "dsm-2025", lambda p, t, c: t >= 1.3),
        ("/mcp 2026 vs django-stateless-mcp", "mcp-2026", "dsm-2026", lambda p, t, c: t >= 1.3),
    ]
    for label, ours, base, ok in checks:
        p, t, c = (ratio(ours, base, i) for i in range(3))
        print(f"{label:<44}{p:>9.3f}{t:>13.3f}{c:>11.3f}  {_verdict(ok(p, t, c))}")
    print("\nother ratios                                p50 ratio   throughput   CPU/call")
    others = [
        ("/mcp 2025 era vs bare (auth only)", "mcp-2025", "bare"),
        ("/mcp 2026 era vs bare (auth only)", "mcp-2026", "bare"),
        ("bare+rate vs bare (the rate count)", "bare+rate", "bare"),
        ("/mcp 2025 vs bare+rate, CPU", "mcp-2025", "bare+rate"),
        ("/mcp 2026 vs bare+rate, CPU", "mcp-2026", "bare+rate"),
        ("django-stateless-mcp 2025 vs bare+rate", "dsm-2025", "bare+rate"),
        ("/mcp 2025, a tool in a thread, vs bare+rate", "thread mcp-2025", "bare+rate"),
        ("/mcp 2026, a tool in a thread, vs bare+rate", "thread mcp-2026", "bare+rate"),
        ("2025: a tool in a thread vs on the loop", "thread mcp-2025", "mcp-2025"),
        ("2026: a tool in a thread vs on the loop", "thread mcp-2026", "mcp-2026"),
    ]
    if "redis bare+rate" in rows:
        others += [
            ("Redis: bare+rate vs bare+rate on PostgreSQL", "redis bare+rate", "bare+rate"),
            ("Redis: /mcp 2025 vs bare+rate on Redis", "redis mcp-2025", "redis bare+rate"),
            ("Redis: /mcp 2026 vs bare+rate on Redis", "redis mcp-2026", "redis bare+rate"),
            ("Redis: /mcp 2025 vs /mcp 2025 on PostgreSQL", "redis mcp-2025", "mcp-2025"),
        ]
    for label, ours, base in others:
        p, t, c = (ratio(ours, base, i) for i in range(3))
        print(f"{label:<44}{p:>9.3f}{t:>13.3f}{c:>11.3f}")
    if "redis mcp-2025" in rows:
        print(
            "\n/mcp counting on Redis vs on PostgreSQL      p50 ratio   throughput   CPU/call"
            "  verdict\n(issue 22's target: p50 and CPU/call ratios <= 1.10)"
        )
        for era in ("2025", "2026"):
            p, t, c = (ratio(f"redis mcp-{era}", f"mcp-{era}", i) for i in range(3))
            label = f"/mcp {era} on Redis vs on PostgreSQL"
            print(f"{label:<44}{p:>9.3f}{t:>13.3f}{c:>11.3f}  {_verdict(p <= 1.10 and c <= 1.10)}")
    print(
        "\nthe operator's kit (issue 26: the audit <= 5 % p50)  p50 ratio   throughput   CPU/call"
    )
    kit = [
        ("audit on vs off (switches on in both)", "mcp-2025", "noaudit mcp-2025"),
        ("switches on vs off (audit off in both)", "noaudit mcp-2025", "nokit mcp-2025"),
        ("audit + switches vs neither", "mcp-2025", "nokit mcp-2025"),
    ]
    for label, ours, base in kit:
        p, t, c = (ratio(ours, base, i) for i in range(3))
        print(f"{label:<44}{p:>9.3f}{t:>13.3f}{c:>11.3f}")
    peer_rows = [(era, peer) for era in ("2025", "2026") for peer in PEER_NAMES]
    peer_rows = [(era, peer) for era, peer in peer_rows if f"{peer}-{era}" in rows]
    if peer_rows:
        print(
            "\n/mcp vs the peers (same auth and count)      p50 ratio   throughput   CPU/call"
            "  verdict\n(issue 24's target: ahead of each, p50 ratio < 1 and throughput > 1)"
        )
        for era, peer in peer_rows:
            ours, base = f"mcp-{era}", f"{peer}-{era}"
            p, t, c = (ratio(ours, base, i) for i in range(3))
            label = f"/mcp {era} vs {PEER_NAMES[peer]}"
            print(f"{label:<44}{p:>9.3f}{t:>13.3f}{c:>11.3f}  {_verdict(p < 1 and t > 1)}")
        measured = {kind.partition("-")[0] for kind in rows}
        missing = [
            f"{PEER_NAMES[peer]} {era}"
            for era in ("2025", "2026")
            for peer in PEER_NAMES
            if peer in measured and f"{peer}-{era}" not in rows
        ]
        if missing:
            print(f"not measured (the peer does not serve that era): {', '.join(missing)}")
    small, large = statistics.median(lists[10]), statistics.median(lists[500])
    flat = median_ratio(lists[500], lists[10])
    print(
        f"\ntools/list p50 of the page holding {FACTORY_TOOL} (an identity factory; page "
        f"{pages[10] + 1} with ~10 tools, page {pages[500] + 1} with ~500): {small:.2f} ms with "
        f"~10 tools, {large:.2f} ms with ~500 tools (ratio {flat:.2f}; target: flat, <= 1.10: "
        f"{_verdict(flat <= 1.1)})"
    )


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    if "--rls" in sys.argv[1:]:
        # Row-level security on vs off is its own pair of servers (bench/rls_bench.py): the
        # same /mcp, one switch apart; its options (--requests, --rounds, --smoke) apply.
        from bench import rls_bench

        sys.argv.remove("--rls")
        rls_bench.main()
    else:
        main()
