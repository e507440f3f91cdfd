"""Tasks on a real engine, with real processes: uvicorn, and the engine's own workers.

Each test runs on every engine: the embedded default (django-tasks' database backend, run by
``manage.py db_worker``), the RQ one (django-tasks' RQ backend on Debian's ``redis-server``,
run by ``manage.py rqworker``) and Celery (django-tasks-fennel's backend, the broker on the
same ``redis-server``, run by ``celery -A cluck.celery worker``). Processes are killed with
SIGKILL: nothing of theirs runs after it (no ``finally``, no signal handler), as when a
machine or a container dies. The task store is read through ``tasks/get`` over HTTP, as a
client reads it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from cluck.devredis import redis_server
from tests.a2a_tools.conftest import skill_message
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools import servers
from tests.mcp_tools.conftest import MODERN, modern_meta
from tests.mcp_tools.servers import ROOT, serve
from tests.mutations import mutation
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
TASKS: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
LEASE_SECONDS = 2  # a lost worker is noticed within this (generous bounds below: 2 cores)
WAIT_SECONDS = 60.0
# A database of its own on the test Redis per engine: one engine's jobs never meet another's.
REDIS_DATABASES = {"db": 4, "rq": 3, "celery": 5}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["db", "rq", "celery"])
def engine(request: pytest.FixtureRequest, redis_url: str) -> Iterator[Engine]:
    with tempfile.TemporaryDirectory(prefix="cluck-task-engine-") as where:
        yield Engine(request.param, redis_url, Path(where))


class Engine:
    """One engine's servers and workers, sharing the test database and a marker directory."""

    def __init__(self, name: str, redis_url: str, where: Path) -> None:
        self.name = name
        self.where = where
        self.env = {
            "CLUCK_TASK_ENGINE": name,
            "CLUCK_TASK_REDIS_URL": f"{redis_url.rsplit('/', 1)[0]}/{REDIS_DATABASES[name]}",
            "MCP_TOOLS_TASK_LEASE_SECONDS": str(LEASE_SECONDS),
            "MCP_TOOLS_RATE": "100000/m",
            "TASK_ENGINE_TEST_DIR": str(where),
        }

    @contextmanager
    def server(self) -> Iterator[Any]:
        with serve("uvicorn", env=self.env) as url:
            try:
                yield url
            except BaseException:
                url.log.seek(0)
                print(url.log.read().decode(errors="replace")[-6000:])  # shown on failure
                raise

    @contextmanager
    def worker(self) -> Iterator[subprocess.Popen[bytes]]:
        """A worker process of this engine (stopped afterwards unless killed before)."""
        if self.name == "db":
            command = ["manage.py", "db_worker", "--queue-name", "mcp_tools", "--interval", "0.1"]
            command += ["--no-startup-delay"]
        elif self.name == "rq":
            command = ["manage.py", "rqworker", "--job-class", "django_tasks_rq.Job", "mcp_tools"]
            command += ["--worker-class", "rq.worker.SimpleWorker"]
        else:
            # The solo pool runs the task in the worker process itself (as RQ's SimpleWorker):
            # the SIGKILL below ends the run, where a prefork child would outlive its parent.
            command = ["-m", "celery", "-A", "cluck.celery", "worker", "-Q", "mcp_tools"]
            command += ["--pool", "solo", "--without-gossip", "--without-mingle", "-l", "ERROR"]
        log = tempfile.TemporaryFile()
        process = subprocess.Popen(
            [sys.executable, *command],
            cwd=ROOT,
            env={
                **os.environ,
                **self.env,
                "DATABASE_URL": servers.test_database_url(),
                "LOG_LEVEL": "ERROR",
            },
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
            log.close()

    def marker(self, name: str) -> Path:
        return self.where / name

    def hold(self, label: str) -> None:
        self.marker(f"hold-{label}").write_text("")


def _until(condition: Callable[[], Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _rpc(url: str, bearer: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    name = params.get("name") or params.get("taskId")
    if isinstance(name, str):
        headers["Mcp-Name"] = name
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {**params, "_meta": modern_meta(TASKS)},
    }
    response = httpx.post(f"{url}/mcp", content=json.dumps(body), headers=headers, timeout=30)
    assert response.headers.get("content-type", "").startswith("application/json"), (
        response.status_code,
        response.text[:2000],
    )
    answer: dict[str, Any] = response.json()
    return answer


def _create(url: str, bearer: str, name: str, arguments: dict[str, Any]) -> str:
    answer = _rpc(url, bearer, "tools/call", {"name": name, "arguments": arguments})
    assert answer.get("result", {}).get("resultType") == "task", answer
    return str(answer["result"]["taskId"])


def _settled(url: str, bearer: str, task_id: str) -> dict[str, Any]:
    def terminal() -> dict[str, Any] | None:
        task: dict[str, Any] = _rpc(url, bearer, "tasks/get", {"taskId": task_id})["result"]
        return task if task["status"] in ("completed", "failed", "cancelled") else None

    result: dict[str, Any] = _until(terminal, f"task {task_id} to settle")
    return result


@pytest.fixture
def bearer(transactional_db: Any, settings: Any) -> str:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    membership = MembershipFactory(tenant=FarmFactory(), roles=["Admin"])
    return bearer_for(membership)  # type: ignore[arg-type]


def test_a_task_accepted_then_its_web_process_killed_still_completes(engine, bearer):
    """The job is the engine's, committed with the task: no web process needs to live on.
    The worker starts only after the server that accepted the task is gone."""
    with engine.server() as url:
        task_id = _create(url, bearer, "engine_sleep", {"label": "orphan", "seconds": 0.2})
        url.process.send_signal(signal.SIGKILL)
        url.process.wait()
    with engine.worker(), engine.server() as url:
        task = _settled(url, bearer, task_id)
    assert task["status"] == "completed", task
    assert "orphan done by" in task["result"]["content"][0]["text"]


def test_a_worker_killed_mid_task_fails_the_task_when_its_tool_declares_no_retry(engine, bearer):
    """``engine_sleep`` declares no ``task_retry``: its lease lapses, the task reads failed."""
    with engine.server() as url:
        with engine.worker() as worker:
            engine.hold("lost")
            task_id = _create(url, bearer, "engine_sleep", {"label": "lost"})
            _until(lambda: engine.marker("started-lost").exists(), "the run to start")
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        with engine.worker():
            task = _settled(url, bearer, task_id)
    assert task["status"] == "failed", task
    assert task["error"]["code"] == -32603


@mutation(
    "mcp_tools/tasks/store.py",
    find="        if row.attempts < row.max_attempts and self.on_requeue is not None:\n",
    replace="        if False:\n",
)
def test_a_worker_killed_mid_task_is_run_again_when_its_tool_declares_task_retry(engine, bearer):
    """``engine_sleep_retried`` declares ``task_retry=1``: the lost run's task is queued again
    and a live worker completes it.

    Mutation: the store never requeues a lost task → red (it reads failed)."""
    with engine.server() as url:
        with engine.worker() as worker:
            engine.hold("again")
            task_id = _create(url, bearer, "engine_sleep_retried", {"label": "again"})
            _until(lambda: engine.marker("started-again").exists(), "the first run")
            first = engine.marker("started-again").read_text()
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        with engine.worker() as second:
            task = _settled(url, bearer, task_id)
    assert task["status"] == "completed", task
    assert task["result"]["content"][0]["text"] == f"again done by {second.pid}"
    assert str(second.pid) != first


@mutation(
    "mcp_tools/tasks/run.py",
    find="    validated = validate_arguments(spec, view.arguments)\n",
    replace="    validated = validate_arguments(\n"
    '        spec, {**view.arguments, "idempotencyKey": __import__("uuid").uuid4().hex}\n'
    "    )\n",
)
def test_a_write_task_is_done_once_under_a_worker_restart(engine, bearer):
    """The write commits, then its worker is killed before the task records the outcome; the
    run after the restart uses the stored ``idempotencyKey`` and replays the committed write.

    Mutation: a run again takes a fresh idempotency key → red (a second side-effect row)."""
    key = uuid.uuid4().hex
    with engine.server() as url:
        with engine.worker() as worker:
            engine.hold("once")
            arguments = {"label": "once", "idempotencyKey": key}
            task_id = _create(url, bearer, "engine_write", arguments)
            _until(lambda: engine.marker("committed-once").exists(), "the write's commit")
            worker.send_signal(signal.SIGKILL)
            worker.wait()
        with engine.worker():
            task = _settled(url, bearer, task_id)
    assert task["status"] == "completed", task
    assert task["result"]["structuredContent"]["replayed"] is True
    first = SideEffect.objects.get(label="once", attempt=engine.marker("started-once").read_text())
    assert not SideEffect.objects.filter(label="once").exclude(pk=first.pk).exists()


@mutation(
    "mcp_tools/tasks/run.py",
    find="            self._gone = not store.is_working(self.task_id)\n",
    replace="            self._gone = False\n",
)
def test_cancel_reaches_the_work_running_on_a_worker(engine, bearer):
    """``tasks/cancel`` flips the row; the tool, in another process, stops at its next
    ``ctx.check_cancelled()`` and the task stays cancelled.

    Mutation: the worker's cancellation check never reads the store → red."""
    with engine.server() as url, engine.worker():
        task_id = _create(url, bearer, "engine_sleep", {"label": "stop", "seconds": 60})
        _until(lambda: engine.marker("started-stop").exists(), "the run to start")
        cancelled = _rpc(url, bearer, "tasks/cancel", {"taskId": task_id})
        assert "result" in cancelled, cancelled
        _until(lambda: engine.marker("stopped-stop").exists(), "the tool to stop", timeout=15)
        task = _rpc(url, bearer, "tasks/get", {"taskId": task_id})["result"]
    assert task["status"] == "cancelled"


def _a2a(url: str, bearer: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{url}/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"},
        timeout=30,
    )
    assert response.status_code == 200, response.text[:2000]
    answer: dict[str, Any] = response.json()
    assert "result" in answer, answer
    return answer["result"]


def test_an_a2a_long_running_skill_survives_its_web_process_and_is_canceled_on_the_worker(
    engine, bearer
):
    """A2A ``SendMessage`` (return immediately) is the same task on the same engine: accepted
    by a web process killed at once, run by a worker started after it, canceled over A2A
    while it runs there."""
    params = {
        **skill_message("engine_sleep", {"label": "agent", "seconds": 60}),
        "configuration": {"returnImmediately": True},
    }
    with engine.server() as url:
        working = _a2a(url, bearer, "SendMessage", params)["task"]
        assert working["status"]["state"] == "TASK_STATE_WORKING", working
        url.process.send_signal(signal.SIGKILL)
        url.process.wait()
    with engine.worker(), engine.server() as url:
        _until(lambda: engine.marker("started-agent").exists(), "the skill to start")
        canceled = _a2a(url, bearer, "CancelTask", {"id": working["id"]})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED", canceled
        _until(lambda: engine.marker("stopped-agent").exists(), "the skill to stop", timeout=15)
        task = _a2a(url, bearer, "GetTask", {"id": working["id"]})
    assert task["status"]["state"] == "TASK_STATE_CANCELED"
