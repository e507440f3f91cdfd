"""``./scripts/serve`` as a developer runs it: real processes, real ports, real PostgreSQL.

The runs use the test database (``DATABASE_URL``) and a private ``CLUCK_VAR_DIR``, so they
never touch the developer's ``var/``; one test starts its own embedded PostgreSQL there.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.utils import timezone

from cluck import devdb, devserver
from tenancy.models import AccessToken
from tenancy.services import user_credentials_changed
from tenancy.tokens import digest, issue_token
from tests.factories import FarmFactory, MembershipFactory, UserFactory
from tests.mcp_tools import servers
from tests.mcp_tools.servers import ROOT, free_port
from tests.mutations import Edit, mutation

STARTUP_SECONDS = 120


@dataclass
class Run:
    process: subprocess.Popen[str]
    port: int
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)

    @property
    def stdout(self) -> str:
        return "".join(self.out)

    @property
    def stderr(self) -> str:
        return "".join(self.err)

    def token(self) -> str:
        lines = self.out
        for index, line in enumerate(lines):
            if line.strip().startswith("A bearer token for"):
                return lines[index + 1].strip()
        raise AssertionError(f"no token printed:\n{self.stdout}\n{self.stderr}")


def _pump(stream: Any, sink: list[str]) -> None:
    for line in stream:
        sink.append(line)


def _env(var: Path, port: int, **extra: str | None) -> dict[str, str]:
    env = {**os.environ, "CLUCK_VAR_DIR": str(var), "PORT": str(port), "LOG_LEVEL": "ERROR"}
    env.pop(devserver.NEW_TOKEN_ENV, None)
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


@pytest.fixture
def var_outside_pytest_temp() -> Iterator[Path]:
    """A ``CLUCK_VAR_DIR`` the embedded PostgreSQL's own system user can reach when we are
    root. Not under pytest's temporary root: every pytest session that starts (another
    worker's, a mutation run's) takes group and other access off ``pytest-of-<user>`` again,
    and pg_ctl, run as that user, then cannot reach its data directory."""
    root = Path(tempfile.mkdtemp(prefix="cluck-serve-var-"))
    root.chmod(0o755)
    try:
        yield root / "var"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[Run]:
    """Start ``scripts/serve`` (under umask 000), wait until it answers, SIGTERM it on exit."""
    process = subprocess.Popen(
        ["bash", "-c", 'umask 000 && exec scripts/serve "$@"', "serve", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run = Run(process, int(env["PORT"]))
    pumps = [
        threading.Thread(target=_pump, args=(process.stdout, run.out), daemon=True),
        threading.Thread(target=_pump, args=(process.stderr, run.err), daemon=True),
    ]
    for pump in pumps:
        pump.start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, f"serve exited:\n{run.stdout}\n{run.stderr}"
            try:
                httpx.get(
                    f"http://127.0.0.1:{run.port}/.well-known/oauth-authorization-server", timeout=2
                )
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, f"serve never answered:\n{run.stderr}"
                time.sleep(0.2)
        yield run
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        for pump in pumps:
            pump.join(5)


@mutation(
    Edit(
        "cluck/devserver.py",
        find='        port = parse_port(os.environ.get("PORT"))\n        sock = claim_port(port)\n',
        replace='        port = parse_port(os.environ.get("PORT"))\n',
    ),
    Edit(
        "cluck/devserver.py",
        find="        token, origin = demo_token(devdb.var_dir() / TOKEN_FILE, renew=renew)\n",
        replace=(
            "        token, origin = demo_token(devdb.var_dir() / TOKEN_FILE, renew=renew)\n"
            "        sock = claim_port(port)\n"
        ),
    ),
)
@pytest.mark.e2e
def test_a_busy_port_fails_before_anything_is_printed_or_issued(transactional_db, tmp_path):
    """Mutation: claim the port after ``demo_token`` in ``devserver.main`` → red."""
    var = tmp_path / "var"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = subprocess.run(
            ["bash", "scripts/serve"],
            cwd=ROOT,
            env=_env(var, port, DATABASE_URL=servers.test_database_url()),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"port {port} on 127.0.0.1 is already in use" in result.stderr
    assert f"PORT={port + 1} ./scripts/serve" in result.stderr
    assert "ck_pat_" not in result.stderr
    assert not (var / devserver.TOKEN_FILE).exists()
    assert not AccessToken.objects.exists()


@mutation(
    "cluck/devserver.py",
    find="    if live is not None and safe and not renew:\n        return stored",
    replace="    if False:\n        return stored",
)
@mutation(
    "cluck/devserver.py",
    find=(
        "    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\n"
        '    with os.fdopen(fd, "w") as file:'
    ),
    replace='    with open(temporary, "w") as file:',
)
@pytest.mark.e2e
@pytest.mark.slow
def test_the_demo_token_is_stored_0600_and_reused_until_renewed(transactional_db, tmp_path):
    """Mutation: issue a token on every run (skip the stored one) → red. Mutation: write the
    file with ``open()`` (the runs are under umask 000) → red. Renewing: in-process below."""
    var = tmp_path / "var"
    env = _env(var, free_port(), DATABASE_URL=servers.test_database_url())
    token_file = var / devserver.TOKEN_FILE

    with serving(env) as first:
        token = first.token()
        answer = httpx.get(
            f"http://127.0.0.1:{first.port}/api/v1/flocks/",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert answer.status_code == 200
    assert "Stopped the embedded PostgreSQL" not in first.stderr  # DATABASE_URL is left alone
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token_file.read_text().strip() == token

    with serving(env) as second:
        assert second.token() == token
    assert "reused from" in second.stdout


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) is gone too.
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


@mutation(
    "cluck/devserver.py",
    find="        worker = start_task_worker()\n",
    replace="",
)
@pytest.mark.e2e
def test_serve_runs_tasks_on_a_db_worker_beside_the_server_and_stops_it(transactional_db, tmp_path):
    """The embedded default: ``./scripts/serve`` starts one ``db_worker``; a farm report asked
    as a task completes on it; the worker is gone once serve stops.

    Mutation: serve starts no worker → red (the task never leaves ``working``)."""
    var = tmp_path / "var"
    env = _env(var, free_port(), DATABASE_URL=servers.test_database_url(), CLUCK_TASK_ENGINE=None)
    with serving(env) as run:
        line = next(x for x in run.out if x.strip().startswith("Tasks:"))
        assert "db_worker beside the server" in line, run.stdout
        pid = int(line.split("(pid ")[1].split(")")[0])
        assert _pid_alive(pid)
        headers = {
            "Authorization": f"Bearer {run.token()}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": "2026-07-28",
        }
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
            "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "0"},
        }

        def rpc(method: str, params: dict[str, Any], name: str) -> dict[str, Any]:
            answer = httpx.post(
                f"http://127.0.0.1:{run.port}/mcp",
                headers={**headers, "Mcp-Method": method, "Mcp-Name": name},
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": method,
                    "params": {**params, "_meta": meta},
                },
                timeout=30,
            )
            body: dict[str, Any] = answer.json()
            return body["result"]

        report = "cluck_production_report"
        arguments = {"fromDate": "2026-01-01", "toDate": "2026-03-31"}
        task = rpc("tools/call", {"name": report, "arguments": arguments}, report)
        assert task["resultType"] == "task", task
        deadline = time.monotonic() + 60
        while task["status"] == "working" and time.monotonic() < deadline:
            time.sleep(0.2)
            task = rpc("tasks/get", {"taskId": task["taskId"]}, task["taskId"])
        assert task["status"] == "completed", task
    deadline = time.monotonic() + 30
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _pid_alive(pid)


@mutation(
    "cluck/devserver.py",
    find=(
        "        if database is not None and database.started is not None:\n"
        "            stop_started_database(database.started)\n"
    ),
    replace="",
)
@mutation(
    "cluck/devserver.py",
    find=(
        "    for signum in (signal.SIGTERM, signal.SIGHUP):\n"
        "        signal.signal(signum, _exit_on_signal)\n"
    ),
    replace="",
)
@pytest.mark.e2e
@pytest.mark.slow
def test_serve_stops_the_embedded_postgres_it_started_and_stop_db_stops_one_left_running(
    var_outside_pytest_temp: Path,
):
    """Mutation: drop the stop from ``devserver.main``'s ``finally`` → red. Mutation: let
    SIGTERM end the process without cleanup (no ``_exit_on_signal``) → red."""
    var = var_outside_pytest_temp
    data_dir = var / "pgdata"
    env = _env(var, free_port(), DATABASE_URL=None)
    try:
        with serving(env) as started:
            assert devdb.running_server_pid(data_dir) is not None
        assert started.process.returncode == 128 + signal.SIGTERM
        assert "stopped on exit" in started.stdout
        assert "Stopped the embedded PostgreSQL" in started.stderr
        assert devdb.running_server_pid(data_dir) is None

        # Left running, as any manage.py command leaves it: scripts/stop-db stops it (as root,
        # pg_ctl itself refuses to).
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from cluck.devdb import embedded_database_url, var_dir; "
                "embedded_database_url(var_dir() / 'pgdata')",
            ],
            cwd=ROOT,
            env=env,
            check=True,
        )
        assert devdb.running_server_pid(data_dir) is not None
        stopped = subprocess.run(
            ["bash", "scripts/stop-db"], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert stopped.returncode == 0, stopped.stderr
        assert "Stopped the embedded PostgreSQL" in stopped.stdout
        assert devdb.running_server_pid(data_dir) is None
    finally:
        if devdb.running_server_pid(data_dir) is not None:
            devdb.stop_embedded(data_dir)


@mutation(
    "cluck/devserver.py",
    find="    if running is not None:\n        return Database(",
    replace="    if False:\n        return Database(",
)
def test_an_embedded_postgres_already_running_or_an_external_database_is_left_alone(
    monkeypatch, tmp_path
):
    """Mutation: treat an already running embedded server as started here → red."""
    monkeypatch.setenv("CLUCK_VAR_DIR", str(tmp_path))
    monkeypatch.setattr(devdb, "embedded_database_url", lambda data_dir: "sqlite:///unused")
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setattr(devdb, "running_server_pid", lambda data_dir: 4242)
    assert devserver.open_database().started is None
    monkeypatch.delenv("DATABASE_URL")
    monkeypatch.setattr(devdb, "running_server_pid", lambda data_dir: None)
    assert devserver.open_database().started == tmp_path / "pgdata"
    monkeypatch.setenv("DATABASE_URL", "postgresql://elsewhere/cluck")
    assert devserver.open_database().started is None


def test_a_new_token_is_asked_for_with_a_flag_or_an_environment_variable(monkeypatch):
    monkeypatch.delenv(devserver.NEW_TOKEN_ENV, raising=False)
    assert devserver.wants_new_token([]) is False
    assert devserver.wants_new_token(["--new-token"]) is True
    monkeypatch.setenv(devserver.NEW_TOKEN_ENV, "1")
    assert devserver.wants_new_token([]) is True


# --- the token rules, in-process -------------------------------------------------------------


@pytest.fixture
def demo_owner(db: Any) -> Any:
    farm = FarmFactory(code=devserver.DEMO_FARM)
    return MembershipFactory(tenant=farm, user=UserFactory(email=devserver.DEMO_EMAIL))


def _store(path: Path, raw: str, mode: int = 0o600) -> None:
    path.write_text(raw + "\n")
    path.chmod(mode)


def test_a_live_stored_token_is_reused(demo_owner, tmp_path):
    _, raw = issue_token(membership=demo_owner, name="stored")
    path = tmp_path / "demo-token"
    _store(path, raw)
    assert devserver.demo_token(path, renew=False)[0] == raw


@mutation(
    "cluck/devserver.py",
    find="    if live is not None and safe and not renew:\n        return stored",
    replace="    if stored is not None and safe and not renew:\n        return stored",
)
@pytest.mark.parametrize("spoil", ["revoked", "expired", "superseded", "someone-else", "garbage"])
def test_a_stored_token_that_no_longer_works_is_replaced(demo_owner, tmp_path, spoil):
    """Mutation: reuse whatever is stored without ``check_token`` → red."""
    owner = demo_owner
    if spoil == "someone-else":
        owner = MembershipFactory(tenant=demo_owner.tenant)
    token, raw = issue_token(membership=owner, name="stored")
    if spoil == "revoked":
        AccessToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    elif spoil == "expired":
        AccessToken.objects.filter(pk=token.pk).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
    elif spoil == "superseded":
        user_credentials_changed(user=demo_owner.user)
    elif spoil == "garbage":
        raw = "not a token"
    path = tmp_path / "demo-token"
    _store(path, raw)
    new, origin = devserver.demo_token(path, renew=False)
    assert new != raw and path.read_text().strip() == new
    assert origin.startswith("new, stored in")
    assert AccessToken.objects.get(digest=digest(new)).membership == demo_owner


def test_renewing_or_a_file_readable_by_others_revokes_the_stored_token(demo_owner, tmp_path):
    path = tmp_path / "demo-token"
    for renew, mode in [(True, 0o600), (False, 0o644)]:
        token, raw = issue_token(membership=demo_owner, name="stored")
        _store(path, raw, mode)
        new, _ = devserver.demo_token(path, renew=renew)
        assert new != raw
        token.refresh_from_db()
        assert token.revoked_at is not None
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("raw", ["0", "65536", "eighty", "-1"])
def test_a_bad_port_is_refused_with_a_message(raw):
    with pytest.raises(devserver.ServeError, match="PORT must be"):
        devserver.parse_port(raw)
    assert devserver.parse_port(None) == devserver.parse_port("") == 8000
