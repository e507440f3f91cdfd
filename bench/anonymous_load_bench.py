"""Anonymous load benchmark (not a test): an authenticated ``tools/list`` while strangers knock.

    .venv/bin/python bench/anonymous_load_bench.py [--rate 50] [--seconds 10] [--rounds 3]
    .venv/bin/python bench/anonymous_load_bench.py --smoke        # a few seconds, one round

Issue 23's done-when: while anonymous clients send a fixed 50 requests/s in all to the token,
registration and CIMD endpoints, an authenticated ``tools/list`` keeps its p50 within 1.5× of
idle.

Starts its own embedded PostgreSQL, migrates, seeds one farm with an owner and a bearer token,
registers one public client, and starts one ``uvicorn cluck.asgi:application`` worker with the
production password hasher (PBKDF2), loopback CIMD documents allowed (the server answers only
for loopback) and ``TENANCY_TRUSTED_PROXIES=127.0.0.1``, so each anonymous request can come
from an address of its own (``X-Forwarded-For``) and per-address limits bite only as hard as
the scenario says. A local document server answers any path with a valid client metadata
document after ``--document-delay`` seconds (a remote origin's latency).

Each round measures ``--calls`` sequential ``tools/list`` calls idle, then the same while an
open-loop generator sends ``--rate`` requests/s (a fixed schedule, whatever the answers), cycling
through:

- ``POST /oauth/token/`` ``grant_type=password`` with the registered client (the guessing
  oracle issue 23 closed),
- ``POST /oauth/register/``: a public client, then a confidential one (its secret is hashed),
- ``POST /oauth/token/`` ``grant_type=authorization_code`` naming a client_id URL never seen
  (a CIMD first sight: a fetch and a row unless a limit says no).

Scenarios (``--scenario``): ``one`` (every anonymous request from one address: the per-address
limits bite) and ``many`` (each from a new address: only the per-path and per-client limits,
and the cost of a refusal, are left). The verdict compares each round's loaded p50 with its
own idle p50.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    embedded_database,
    migrate_and_seed,
    smoke_done,
    uvicorn_process,
)
from bench.mcp_bench import cpu_seconds  # noqa: E402

PUBLIC_CLIENT = "bench-public-client"
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
TARGET_RATIO = 1.5


@contextmanager
def document_server(delay: float) -> Iterator[str]:
    """Client metadata documents for any path, each naming its own URL; yields the origin."""
    origin = ""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            time.sleep(delay)
            body = json.dumps(
                {
                    "client_id": origin + self.path,
                    "client_name": "stranger",
                    "redirect_uris": ["http://localhost/callback"],
                    "token_endpoint_auth_method": "none",
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    origin = f"https://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield origin
    finally:
        httpd.shutdown()
        httpd.server_close()


def register_public_client() -> None:
    from oauth2_provider.models import get_application_model

    Application = get_application_model()
    Application.objects.create(
        client_id=PUBLIC_CLIENT,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://localhost/callback",
        name="bench",
    )
    from django.db import connections

    connections.close_all()


_serial = itertools.count()


KINDS = ("password", "register-public", "register-confidential", "cimd")


def anonymous_request(
    n: int, origin: str, kinds: tuple[str, ...] = KINDS
) -> tuple[str, str, dict[str, Any]]:
    """``(kind, path, httpx keyword arguments)`` of anonymous request ``n``."""
    unique = next(_serial)
    kind = kinds[n % len(kinds)]
    if kind == "password":
        form = {
            "grant_type": "password",
            "username": f"guess{unique}@example.com",
            "password": f"guess-{unique}",
            "client_id": PUBLIC_CLIENT,
        }
        return kind, "/oauth/token/", {"data": form}
    if kind.startswith("register"):
        method = "none" if kind == "register-public" else "client_secret_post"
        document = {
            "client_name": f"stranger {unique}",
            "redirect_uris": ["http://localhost/callback"],
            "token_endpoint_auth_method": method,
        }
        return kind, "/oauth/register/", {"json": document}
    form = {
        "grant_type": "authorization_code",
        "code": f"code-{unique}",
        "redirect_uri": "http://localhost/callback",
        "code_verifier": "v" * 43,
        "client_id": f"{origin}/client-{unique}.json",
    }
    return kind, "/oauth/token/", {"data": form}


async def flood(
    url: str,
    origin: str,
    *,
    rate: float,
    seconds: float,
    scenario: str,
    kinds: tuple[str, ...],
    outcomes: Counter[str],
) -> None:
    """Open loop: request ``n`` leaves at ``n / rate`` seconds, answered or not."""
    addresses = (f"198.18.{a}.{b}" for a, b in itertools.product(range(256), range(1, 255)))
    # Open loop: no client-side pool may hold requests back (it would lower the rate).
    limits = httpx.Limits(max_connections=2000, max_keepalive_connections=100)
    timeout = httpx.Timeout(30, pool=None)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as http:

        async def one(n: int) -> None:
            kind, path, kwargs = anonymous_request(n, origin, kinds)
            address = "198.51.100.1" if scenario == "one" else next(addresses)
            try:
                response = await http.post(path, headers={"X-Forwarded-For": address}, **kwargs)
                outcomes[f"{kind} {response.status_code}"] += 1
            except httpx.HTTPError as error:
                outcomes[f"{kind} {type(error).__name__}"] += 1

        started = time.perf_counter()
        tasks = []
        for n in range(int(rate * seconds)):
            delay = started + n / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(n)))
        await asyncio.gather(*tasks)


FAILED_LISTS: Counter[str] = Counter()


async def list_p50(url: str, bearer: str, calls: int) -> float:
    """Median ms of ``calls`` sequential ``tools/list``; a refused call (a 503 when the server
    is saturated) counts with its latency and is tallied in ``FAILED_LISTS``."""
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {bearer}", **MCP_HEADERS}, timeout=60
    ) as http:
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            try:
                response = await http.post("/mcp", json=LIST)
            except httpx.TransportError as error:  # the connection dropped under the load
                FAILED_LISTS[type(error).__name__] += 1
                continue
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200 or "tools" not in response.json().get("result", {}):
                FAILED_LISTS[str(response.status_code)] += 1
        return statistics.median(latencies) * 1000


async def loaded_round(
    url: str, bearer: str, origin: str, options: argparse.Namespace, outcomes: Counter[str]
) -> float:
    generator = asyncio.create_task(
        flood(
            url,
            origin,
            rate=options.rate,
            seconds=options.seconds,
            scenario=options.scenario,
            kinds=tuple(options.kinds),
            outcomes=outcomes,
        )
    )
    await asyncio.sleep(1)  # the flood up to speed
    p50 = await list_p50(url, bearer, options.calls)
    await generator
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=50.0, help="anonymous requests/s, in all")
    parser.add_argument("--seconds", type=float, default=12.0, help="of flood per round")
    parser.add_argument("--calls", type=int, default=100, help="tools/list calls per phase")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scenario", choices=("one", "many"), default="many")
    parser.add_argument("--document-delay", type=float, default=0.2)
    parser.add_argument(
        "--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="anonymous requests, cycled"
    )
    parser.add_argument("--smoke", action="store_true", help="one short round (a few seconds)")
    options = parser.parse_args()
    if options.smoke:
        options.seconds, options.calls, options.rounds = 3.0, 10, 1
    idle: list[float] = []
    loaded: list[float] = []
    outcomes: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="perf_anon_bench_") as tmp, ExitStack() as stack:
        database_url = stack.enter_context(embedded_database(Path(tmp)))
        bearer = migrate_and_seed(database_url)
        register_public_client()
        origin = stack.enter_context(document_server(options.document_delay))
        env = {
            "DATABASE_URL": database_url,
            "DJANGO_SETTINGS_MODULE": "cluck.settings",
            "CLUCK_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS": "1",
            "TENANCY_TRUSTED_PROXIES": "127.0.0.1",
            "MCP_TOOLS_RATE": "1000000/m",
            "TENANCY_API_RATE": "1000000/m",
        }
        os.environ.pop("CLUCK_FAST_PASSWORD_HASHER", None)  # the production hasher
        url, process = stack.enter_context(uvicorn_process(env, ready_path="/healthz"))
        asyncio.run(list_p50(url, bearer, 20))  # warm-up
        cpu_loaded = 0.0
        wall_loaded = 0.0
        for number in range(options.rounds):
            idle.append(asyncio.run(list_p50(url, bearer, options.calls)))
            cpu, wall = cpu_seconds(process.pid), time.perf_counter()
            loaded.append(asyncio.run(loaded_round(url, bearer, origin, options, outcomes)))
            cpu_loaded += cpu_seconds(process.pid) - cpu
            wall_loaded += time.perf_counter() - wall
            print(f"round {number + 1}/{options.rounds} done", file=sys.stderr, flush=True)
    ratios = [b / a for a, b in zip(idle, loaded, strict=True)]
    ratio = statistics.median(ratios)
    where = "one address" if options.scenario == "one" else "a new address each"
    print(
        f"anonymous flood: {options.rate:g} requests/s for {options.seconds:g} s per round "
        f"({', '.join(options.kinds)}), from {where}; {options.rounds} round(s), "
        f"{options.calls} sequential tools/list calls per phase, 1 uvicorn worker, PBKDF2"
    )
    print(f"{'round':<8}{'idle p50 ms':>13}{'loaded p50 ms':>15}{'ratio':>8}")
    for number, (a, b) in enumerate(zip(idle, loaded, strict=True), 1):
        print(f"{number:<8}{a:>13.2f}{b:>15.2f}{b / a:>8.2f}")
    print(f"server CPU while loaded: {cpu_loaded / wall_loaded:.2f} cores")
    if FAILED_LISTS:
        print(f"tools/list failed: {dict(FAILED_LISTS)} (HTTP status or error: count)")
    print("anonymous answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())))
    verdict = "met" if ratio <= TARGET_RATIO else "NOT MET"
    print(f"loaded/idle p50 (median of rounds) {ratio:.2f} (target ≤ {TARGET_RATIO}): {verdict}")
    if options.smoke:
        smoke_done()  # a smoke run shows the bench runs: one 3 s round decides nothing


if __name__ == "__main__":
    main()
