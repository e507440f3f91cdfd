"""How the cost of one ``tools/call`` grows with the data (a benchmark, not a test).

    .venv/bin/python bench/scale_bench.py [--requests 200] [--rss-calls 50000] [--smoke]

Starts a throwaway embedded PostgreSQL with two databases, seeds the demo farms in both, starts
one uvicorn worker on each and measures, at each size of the growing database, the p50 latency
and the server's CPU per call of

* a farm read (``cluck_list_flocks``) and
* a keyed write (``cluck_record_daily_entry`` with a fresh ``idempotencyKey`` each call),

while the tables the request path touches grow together, filled between sizes with other
tenants' rows (the measured tenant's own rows grow too, as on a busy server):

==========  =======  ========  ===================  =========
size        tenants  tokens    idempotency records  MCP tasks
==========  =======  ========  ===================  =========
smallest    demo (2)  10       0                    0
middle      100      10,000    100,000              10,000
largest     1,000    100,000   1,000,000            100,000
==========  =======  ========  ===================  =========

The second database stays demo-sized: each call is made on both servers, interleaved call by
call, and every figure is a ratio to the reference measured in the same rounds (the VM is
shared and its speed drifts; a ratio taken minutes apart would measure the drift).

Then the worker's RSS is sampled over ``--rss-calls`` reads (after a warm-up tenth), and the
purges are shown to keep the tables bounded: half of the filled idempotency records and tasks
are past their retention, ``purge_idempotency`` and ``purge_mcp_tools`` run, and the row
counts before and after are printed. Target: per-call cost at the largest size within 1.2x of
the reference; RSS flat after warm-up.

The tables are filled with SQL (``generate_series``) for idempotency records and ORM bulk
inserts for the rest, then ``VACUUM ANALYZE`` — what autovacuum would have done on a server
that grew this way. ``--smoke`` uses tiny sizes and a few calls: it proves the bench runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    add_smoke_option,
    embedded_database,
    manage,
    seed_demo,
    smoke_done,
    uvicorn_process,
)
from cluck.devdb import _ensure_database, _with_database  # noqa: E402

RATES = {"TENANCY_API_RATE": "100000000/m", "MCP_TOOLS_RATE": "100000000/m"}
FARM_TIME_ZONE = "Asia/Manila"
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


@dataclass(frozen=True)
class Size:
    label: str
    tenants: int
    tokens: int
    records: int
    tasks: int


FULL_SIZES = (
    Size("smallest", 0, 10, 0, 0),
    Size("middle", 100, 10_000, 100_000, 10_000),
    Size("largest", 1_000, 100_000, 1_000_000, 100_000),
)
SMOKE_SIZES = (Size("smallest", 0, 10, 0, 0), Size("smoke", 3, 30, 300, 30))


@dataclass
class Cost:
    read_p50_ms: float
    read_cpu_us: float
    write_p50_ms: float
    write_cpu_us: float


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300, help="calls per workload and size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rss-calls", type=int, default=50_000)
    add_smoke_option(parser)
    args = parser.parse_args()
    sizes: tuple[Size, ...] = FULL_SIZES
    if args.smoke:
        args.requests, args.rounds, args.rss_calls, sizes = 6, 2, 40, SMOKE_SIZES

    with tempfile.TemporaryDirectory(prefix="cluck-scale-") as workdir:
        with embedded_database(Path(workdir)) as url:
            reference_url = _with_database(url, "reference")
            _ensure_database(url, "reference")
            env, token = seed_demo(url, "scale")
            reference_env, reference_token = seed_demo(reference_url, "scale")
            _setup_django(url)
            with (
                uvicorn_process({**env, **RATES}) as (base, process),
                uvicorn_process({**reference_env, **RATES}) as (reference_base, reference),
                _client(base, token) as client,
                _client(reference_base, reference_token) as reference_client,
            ):
                growing = _Server(_Calls(client), psutil.Process(process.pid))
                fixed = _Server(_Calls(reference_client), psutil.Process(reference.pid))
                costs: list[tuple[Size, dict[str, int], Cost, Cost]] = []
                for size in sizes:
                    _grow_to(size)
                    grown, same = _measure(growing, fixed, args.requests, args.rounds)
                    costs.append((size, _table_sizes(), grown, same))
                    _print_cost(*costs[-1])
                rss = _rss_over(growing, args.rss_calls)
            purged = _purges(env)
    _report(costs, rss, purged)
    if args.smoke:
        smoke_done()


def _client(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")
    import django

    django.setup()


class _Calls:
    """The two measured calls, on one client and the demo farm's first active flock."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        flocks = client.get("/api/v1/flocks/?status=Active").json()["items"]
        self.flock_id = flocks[0]["id"]
        day = dt.datetime.now(ZoneInfo(FARM_TIME_ZONE)).date() - dt.timedelta(days=30)
        self.entry = {
            "date": day.isoformat(),
            "totalEggs": 900,
            "crackedEggs": 10,
            "dirtyEggs": 5,
            "mortalityCount": 0,
        }

    def _call(self, name: str, arguments: dict[str, object]) -> None:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        response = self.client.post("/mcp", content=json.dumps(body), headers=MCP_HEADERS)
        result = response.json().get("result")
        assert response.status_code == 200 and result and not result["isError"], response.text

    def read(self) -> None:
        self._call("cluck_list_flocks", {})

    def write(self) -> None:
        key = uuid.uuid4().hex
        arguments = {"idempotencyKey": key, "flock": self.flock_id, **self.entry}
        self._call("cluck_record_daily_entry", arguments)


@dataclass
class _Server:
    calls: _Calls
    process: psutil.Process

    def cpu(self) -> float:
        return float(sum(self.process.cpu_times()[:2]))


def _measure(growing: _Server, fixed: _Server, n: int, rounds: int) -> tuple[Cost, Cost]:
    """The same calls on the growing database and on the demo-sized reference, interleaved
    call by call so the shared VM's drift hits both alike: (growing's cost, reference's)."""

    def run(workload: str) -> tuple[tuple[float, float], tuple[float, float]]:
        servers = (growing, fixed)
        for server in servers:
            for _ in range(max(5, n // 10)):
                getattr(server.calls, workload)()
        latencies: tuple[list[float], list[float]] = ([], [])
        cpu: list[list[float]] = [[], []]
        for _ in range(rounds):
            before = [server.cpu() for server in servers]
            for _ in range(n // rounds):
                for side, server in enumerate(servers):
                    started = time.perf_counter()
                    getattr(server.calls, workload)()
                    latencies[side].append(time.perf_counter() - started)
            for side, server in enumerate(servers):
                cpu[side].append((server.cpu() - before[side]) / (n // rounds) * 1e6)
        return (
            (statistics.median(latencies[0]) * 1000, statistics.median(cpu[0])),
            (statistics.median(latencies[1]) * 1000, statistics.median(cpu[1])),
        )

    (grown_read, same_read), (grown_write, same_write) = run("read"), run("write")
    return (
        Cost(*grown_read, *grown_write),
        Cost(*same_read, *same_write),
    )


# --- growing the database ------------------------------------------------------------------


def _grow_to(size: Size) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from cluck.models import Farm
    from mcp_tools.models import TaskRecord, TaskStatus
    from tenancy.models import AccessToken, Membership

    extra_farms = Farm.objects.filter(code__startswith="scale-")
    have = extra_farms.count()
    user_model = get_user_model()
    new_farms = [
        Farm(
            code=f"scale-{i}",
            name=f"Scale farm {i}",
            currency_code="PHP",
            currency_minor_unit=2,
            time_zone=FARM_TIME_ZONE,
        )
        for i in range(have, size.tenants)
    ]
    Farm.objects.bulk_create(new_farms, batch_size=1000)
    for farm in new_farms:
        user = user_model.objects.create_user(
            username=f"owner@{farm.code}.test", email=f"owner@{farm.code}.test", password=None
        )
        Membership.objects.create(user=user, tenant=farm, roles=["Admin"])

    memberships = list(Membership.objects.all())
    tokens_have = AccessToken.objects.count()
    now = timezone.now()
    _bulk(
        AccessToken,
        (
            AccessToken(
                membership=memberships[i % len(memberships)],
                kind=AccessToken.Kind.PERSONAL,
                name=f"scale {i}",
                prefix="ck_pat_scale",
                digest=secrets.token_hex(32),
                credential_epoch=memberships[i % len(memberships)].credential_epoch,
            )
            for i in range(tokens_have, size.tokens)
        ),
    )

    tenant_keys = [str(pk) for pk in Farm.objects.values_list("pk", flat=True)]
    records_have = _count("idempotency_records")
    if size.records > records_have:
        # Half completed long ago (past retention: the purge's work), half completed recently.
        with connection.cursor() as cursor:
            cursor.execute(
                """
                INSERT INTO idempotency_records
                  (id, tenant_id, operation_key, caller_key, fingerprint, status, lease_owner,
                   lease_expires_at, result, completed_at, created_at)
                SELECT gen_random_uuid(), (%s::text[])[1 + i %% %s::bigint], md5('op' || (i %% 40)),
                       md5('caller' || i), md5('fp' || i), 1, gen_random_uuid(),
                       now(), '{"ok": true}',
                       CASE WHEN i %% 2 = 0 THEN now() - interval '30 days' ELSE now() END,
                       CASE WHEN i %% 2 = 0 THEN now() - interval '30 days' ELSE now() END
                FROM generate_series(%s::bigint, %s::bigint) AS i
                """,
                [tenant_keys, len(tenant_keys), records_have, size.records - 1],
            )
    tasks_have = TaskRecord.objects.count()
    _bulk(
        TaskRecord,
        (
            TaskRecord(
                task_id=secrets.token_urlsafe(24),
                tenant_key=tenant_keys[i % len(tenant_keys)],
                owner_key=str(i % 997),
                operation="cluck_monthly_report",
                status=TaskStatus.COMPLETED,
                result={"content": [], "isError": False},
                created_at=now - dt.timedelta(days=2),
                updated_at=now - dt.timedelta(days=2),
                # Half expired (the purge's work), half still readable.
                expires_at=now + (dt.timedelta(days=-1) if i % 2 == 0 else dt.timedelta(days=1)),
            )
            for i in range(tasks_have, size.tasks)
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _bulk(model: type, rows: object, batch: int = 5000) -> None:
    chunk: list[object] = []
    for row in rows:  # type: ignore[attr-defined]
        chunk.append(row)
        if len(chunk) == batch:
            model.objects.bulk_create(chunk)  # type: ignore[attr-defined]
            chunk = []
    if chunk:
        model.objects.bulk_create(chunk)  # type: ignore[attr-defined]


def _count(table: str) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (our own table names)
        return int(cursor.fetchone()[0])


def _table_sizes() -> dict[str, int]:
    from cluck.models import Farm
    from mcp_tools.models import TaskRecord
    from tenancy.models import AccessToken

    return {
        "tenants": Farm.objects.count(),
        "tokens": AccessToken.objects.count(),
        "idempotency records": _count("idempotency_records"),
        "tasks": TaskRecord.objects.count(),
    }


# --- memory over a long run ----------------------------------------------------------------


def _rss_over(server: _Server, n: int) -> list[tuple[int, float]]:
    """(calls so far, worker RSS MiB), ten samples; the first after a warm-up tenth."""
    samples = []
    step = max(1, n // 10)
    for done in range(n):
        server.calls.read()
        if (done + 1) % step == 0:
            samples.append((done + 1, server.process.memory_info().rss / 2**20))
    return samples


def _purges(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    before = {
        "idempotency records": _count("idempotency_records"),
        "tasks": _count("mcp_tools_task"),
    }
    # The commands work in bounded batches; an operator's cron runs them until nothing is left.
    for _ in range(200):
        if "more remain" not in manage(env, "purge_idempotency", "--max-batches", "1000"):
            break
    manage(env, "purge_mcp_tools")
    after = {
        "idempotency records": _count("idempotency_records"),
        "tasks": _count("mcp_tools_task"),
    }
    return {name: (before[name], after[name]) for name in before}


# --- report --------------------------------------------------------------------------------


def _print_cost(size: Size, tables: dict[str, int], grown: Cost, same: Cost) -> None:
    shown = ", ".join(f"{name} {count:,}" for name, count in tables.items())
    print(
        f"[{size.label}] {shown}: read p50 {grown.read_p50_ms:.2f} ms "
        f"(reference {same.read_p50_ms:.2f}), {grown.read_cpu_us:.0f} µs CPU "
        f"({same.read_cpu_us:.0f}); write p50 {grown.write_p50_ms:.2f} ms "
        f"({same.write_p50_ms:.2f}), {grown.write_cpu_us:.0f} µs CPU ({same.write_cpu_us:.0f})",
        flush=True,
    )


METRICS = (
    ("read p50", "read_p50_ms"),
    ("read CPU/call", "read_cpu_us"),
    ("write p50", "write_p50_ms"),
    ("write CPU/call", "write_cpu_us"),
)


def _report(
    costs: list[tuple[Size, dict[str, int], Cost, Cost]],
    rss: list[tuple[int, float]],
    purged: dict[str, tuple[int, int]],
) -> None:
    print(
        "\nper-call cost as the database grows: one uvicorn worker on it and one on a demo-sized "
        "reference database, calls interleaved; x = grown / reference in the same rounds"
    )
    print(f"{'size':<10}{'tenants':>9}{'tokens':>10}{'idem. records':>15}{'tasks':>9}"
          f"{'read ms':>9}{'x':>6}{'read µs':>9}{'x':>6}{'write ms':>10}{'x':>6}"
          f"{'write µs':>10}{'x':>6}")  # fmt: skip
    for size, tables, grown, same in costs:
        cells = "".join(
            f"{getattr(grown, attr):>{9 if i < 2 else 10}.{2 if 'ms' in attr else 0}f}"
            f"{getattr(grown, attr) / getattr(same, attr):>6.2f}"
            for i, (_, attr) in enumerate(METRICS)
        )
        print(
            f"{size.label:<10}{tables['tenants']:>9,}{tables['tokens']:>10,}"
            f"{tables['idempotency records']:>15,}{tables['tasks']:>9,}{cells}"
        )
    _, _, grown, same = costs[-1]
    for label, attr in METRICS:
        ratio = getattr(grown, attr) / getattr(same, attr)
        verdict = "met" if ratio <= 1.2 else "NOT met"
        print(f"{label:<16} largest / reference = {ratio:.2f}x (target ≤ 1.2: {verdict})")
    print("\nworker RSS over reads (calls: MiB): " + ", ".join(f"{n:,}: {m:.1f}" for n, m in rss))
    if len(rss) >= 2:
        print(f"RSS growth after warm-up: {rss[-1][1] - rss[0][1]:+.1f} MiB")
    print("\npurges (rows before -> after purge_idempotency / purge_mcp_tools):")
    for name, (before, after) in purged.items():
        print(f"  {name}: {before:,} -> {after:,}")


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as failed:
        sys.stderr.write((failed.stderr or b"").decode())
        raise
