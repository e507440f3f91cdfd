"""The paths a project's careless read takes besides ``/mcp`` (issue 35), for the shop's and
the tracker's row-level security tests: a task run by the project's own ``manage.py
db_worker`` and an A2A skill over ``POST /a2a`` (behind PgBouncer:
``tests/deploy/server_connections.py``)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from tests.a2a_tools.conftest import artifact_data, skill_message
from tests.mcp_tools.test_task_engine import _create, _settled
from tests.project_harness import Project


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
