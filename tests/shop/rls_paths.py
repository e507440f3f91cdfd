"""The paths a project's careless read takes besides ``/mcp`` (issue 35), for the shop's and
the tracker's row-level security tests: a task run by the project's own ``manage.py
db_worker``, an A2A skill over ``POST /a2a``, and what PgBouncer's server connections hold
after the tools ran through them (``cluck.devpgbouncer`` starts the pooler)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import psycopg

from tests.a2a_tools.conftest import artifact_data, skill_message
from tests.mcp_tools.test_task_engine import _create, _settled
from tests.project_harness import Project

POOL = 2  # PgBouncer's server connections (pool_size): every_server_connection holds all


@contextmanager
def db_worker(project: Project) -> Iterator[None]:
    """``python manage.py db_worker --queue-name mcp_tools`` in the copy (the command of
    docs/existing-project.md section 14), stopped afterwards; its log shown on failure."""
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            [project.interpreter(), "manage.py", "db_worker", "--queue-name", "mcp_tools",
             "--interval", "0.1", "--no-startup-delay"],
            cwd=project.path,
            env=project.env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )  # fmt: skip
        try:
            yield
        except BaseException:
            log.seek(0)
            print(log.read().decode(errors="replace")[-4000:])
            raise
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def task_result(url: str, bearer: str, tool: str) -> Any:
    """``tool`` called as a task over ``url``/mcp (the tasks extension negotiated), run by a
    worker; its structured result once the task completed."""
    task = _settled(url, bearer, _create(url, bearer, tool, {}))
    assert task["status"] == "completed", task
    return task["result"]["structuredContent"]


def skill_result(url: str, bearer: str, skill: str) -> Any:
    """``skill`` invoked with A2A's ``SendMessage`` over ``url``/a2a; its artifact's data."""
    response = httpx.post(
        f"{url}/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": skill_message(skill)},
        headers={"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    return artifact_data(task)


# What a transaction finds on its server connection: the role, the tenant setting, whether it
# is read-only, and how many tenants' rows of the declared table it sees.
STATE = (
    "SELECT current_setting('role'), coalesce(current_setting('tenancy.tenant', true), ''), "
    "current_setting('transaction_read_only'), (SELECT count(DISTINCT {column}) FROM {table})"
)


def every_server_connection(pooled_url: str, table: str, column: str) -> list[tuple[Any, ...]]:
    """``STATE`` on each of the pool's server connections: ``POOL`` clients, each holding a
    transaction open, so that PgBouncer gives each a server connection of its own."""
    with ExitStack() as stack:
        clients = [
            stack.enter_context(psycopg.connect(pooled_url, prepare_threshold=None))
            for _ in range(POOL)
        ]
        pids = [client.execute("SELECT pg_backend_pid()").fetchone() for client in clients]
        assert len(set(pids)) == POOL, pids  # every server connection, once
        query = STATE.format(table=table, column=column)
        return [tuple(client.execute(query).fetchone() or ()) for client in clients]
