"""``scripts/serve``: the demo on ``http://127.0.0.1:$PORT`` for a developer's machine.

In order: claim the port (when it is taken nothing is started, issued or printed), pick the
database (``DATABASE_URL``, else the embedded PostgreSQL under ``var/``, started if needed),
migrate and seed, start one task worker beside the server (``manage.py db_worker``, or
``rqworker`` with ``CLUCK_TASK_ENGINE=rq``, ``celery worker`` with ``celery``; none with
``in_process``), reuse or issue the demo
token, print how to use it, and serve with uvicorn on the socket claimed at the start. On the
way out (Ctrl-C, SIGTERM, SIGHUP) the worker is stopped, and an embedded PostgreSQL that this
process started is stopped again; one that was already running and an external
``DATABASE_URL`` are left alone.
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final

from cluck import devdb

HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
DEMO_FARM: Final = "sunrise"
DEMO_EMAIL: Final = "owner@sunrise.example"
TOKEN_NAME: Final = "scripts/serve demo"
TOKEN_FILE: Final = "demo-token"
NEW_TOKEN_ENV: Final = "CLUCK_NEW_TOKEN"
# The worker beside the server per CLUCK_TASK_ENGINE (cluck/settings.py; docs/deploying.md).
TASK_WORKERS: Final = {
    "db": ("manage.py", "db_worker", "--queue-name", "mcp_tools"),
    "rq": ("manage.py", "rqworker", "--job-class", "django_tasks_rq.Job", "mcp_tools"),
    "celery": ("-m", "celery", "-A", "cluck.celery", "worker", "-Q", "mcp_tools"),
}
WORKER_STOP_SECONDS: Final = 15


class ServeError(Exception):
    """A problem the user can fix, reported in one message without a traceback."""


def parse_port(raw: str | None) -> int:
    if raw is None or raw.strip() == "":
        return DEFAULT_PORT
    try:
        port = int(raw)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise ServeError(f"PORT must be a TCP port number (1-65535), not {raw!r}.")
    return port


def claim_port(port: int) -> socket.socket:
    """Bind and listen on ``HOST:port`` now; uvicorn serves on this very socket later.

    Raises:
        ServeError: the port is taken (or not ours to take).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As uvicorn does: a port whose previous server has just exited (connections left in
    # TIME_WAIT) is free; one that another process listens on is still refused.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            problem = f"port {port} on {HOST} is already in use (another ./scripts/serve?)."
        else:
            problem = f"cannot listen on {HOST}:{port}: {exc.strerror}."
        other = port + 1 if port < 65535 else 8001
        raise ServeError(
            f"{problem}\nStop what holds it, or choose another port: PORT={other} ./scripts/serve"
        ) from exc
    return sock


@dataclass(frozen=True)
class Database:
    description: str
    started: Path | None = None  # data directory of an embedded server this process started


def open_database() -> Database:
    """``DATABASE_URL`` as given, else the embedded server (exported as ``DATABASE_URL``)."""
    if os.environ.get("DATABASE_URL"):
        return Database("DATABASE_URL (not stopped on exit)")
    data_dir = devdb.var_dir() / "pgdata"
    where = shown(data_dir)
    running = devdb.running_server_pid(data_dir)
    os.environ["DATABASE_URL"] = devdb.embedded_database_url(data_dir)
    if running is not None:
        return Database(
            f"embedded PostgreSQL in {where}, already running: left running on exit "
            "(./scripts/stop-db stops it)"
        )
    return Database(f"embedded PostgreSQL in {where}, stopped on exit", started=data_dir)


def prepare_database() -> None:
    import django
    from django.core.management import call_command

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cluck.settings")
    django.setup()
    call_command("migrate", interactive=False)
    call_command("seed_demo")


def shown(path: Path) -> str:
    """``path`` relative to the project when it is inside it (``var/demo-token``)."""
    try:
        return str(path.relative_to(devdb.PROJECT_DIR))
    except ValueError:
        return str(path)


def _read_token_file(path: Path) -> tuple[str | None, bool]:
    """The stored token and whether its file was safe (readable by its owner only)."""
    try:
        mode = path.stat().st_mode
        raw = path.read_text().strip()
    except FileNotFoundError:
        return None, True
    return raw or None, not mode & 0o077


def _write_token_file(path: Path, raw: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    # Created 0600 by open(2) itself (the umask can only narrow it), so the secret is never
    # readable by others, not even briefly; the rename then replaces the old file atomically.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as file:
        file.write(raw + "\n")
    os.replace(temporary, path)


def demo_token(path: Path, *, renew: bool) -> tuple[str, str]:
    """The demo owner's token and how it was obtained.

    The stored token is reused while the database still accepts it (``check_token``: not
    revoked, expired or superseded) and it is the demo owner's. Otherwise, or with ``renew``,
    a new one is issued and stored; a stored one that still worked is revoked first.
    """
    from django.core.management import call_command

    from tenancy.exceptions import AuthenticationFailedError
    from tenancy.tokens import check_token, revoke_token

    stored, safe = _read_token_file(path)
    live = None
    reason = "none was stored yet"
    if stored is not None:
        try:
            token = check_token(stored)
        except AuthenticationFailedError as exc:
            reason = f"the stored one is no longer valid ({exc.default_code})"
        else:
            membership = token.membership
            if membership.user.email == DEMO_EMAIL and membership.tenant.code == DEMO_FARM:
                live = token
            else:
                reason = f"the stored one is not {DEMO_EMAIL}'s"
    if live is not None and safe and not renew:
        return stored, f"reused from {shown(path)}"  # type: ignore[return-value]
    if live is not None:
        revoke_token(live)
        reason = (
            "asked for a new one; the old one is revoked"
            if renew
            else f"{shown(path)} was readable by other users; the old token is revoked"
        )
    out = io.StringIO()
    call_command("issue_token", tenant=DEMO_FARM, email=DEMO_EMAIL, name=TOKEN_NAME, stdout=out)
    raw = out.getvalue().strip()
    _write_token_file(path, raw)
    return raw, f"new, stored in {shown(path)}: {reason}"


def start_task_worker() -> subprocess.Popen[bytes] | None:
    """One worker of the task engine (``None`` for the in-process development engine)."""
    command = TASK_WORKERS.get(os.environ.get("CLUCK_TASK_ENGINE", "db"))
    if command is None:
        return None
    return subprocess.Popen(
        [sys.executable, *command],
        cwd=devdb.PROJECT_DIR,
        env=os.environ.copy(),  # DATABASE_URL is set by now
    )


def stop_task_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the worker finishes the task in hand), then SIGKILL after a while: a task it
    could not finish is requeued or failed through its lease (docs/deploying.md)."""
    if worker.poll() is None:
        worker.terminate()
    try:
        worker.wait(WORKER_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def tasks_line(worker: subprocess.Popen[bytes] | None) -> str:
    if worker is None:
        return "in this process (CLUCK_TASK_ENGINE=in_process; development only)"
    engine = os.environ.get("CLUCK_TASK_ENGINE", "db")
    name = "celery worker" if engine == "celery" else TASK_WORKERS[engine][1]
    return f"a {name} beside the server (pid {worker.pid}), stopped on exit"


def banner(*, base: str, token: str, origin: str, database: str, tasks: str = "") -> str:
    return f"""
  Cluck is running on {base}  (API docs: {base}/api/docs/)
  Database: {database}
  Tasks: {tasks}
  Demo farms: sunrise (owner@sunrise.example, manager@, sales@, worker@, readonly@) and
  hillside (owner@hillside.example); demo password: cluck-demo-password

  A bearer token for {DEMO_EMAIL} (valid until revoked):
    {token}
  ({origin}; the next ./scripts/serve reuses it, ./scripts/serve --new-token replaces it)

  Try it:
    curl -H "Authorization: Bearer {token}" {base}/api/v1/flocks/

  Connect Claude Code to the MCP endpoint:
    claude mcp add --transport http cluck {base}/mcp --header "Authorization: Bearer {token}"

  Stop: Ctrl-C
"""


def run_uvicorn(sock: socket.socket) -> None:
    import uvicorn

    # The bounded httptools protocol caps request heads (16 KiB) and their time: see
    # docs/deploying.md.
    config = uvicorn.Config(
        "cluck.asgi:application",
        lifespan="off",
        host=HOST,
        http="mcp_tools.serving.uvicorn_http:BoundedHttpToolsProtocol",
        # The client's address is tenancy's to find (TENANCY_TRUSTED_PROXIES): uvicorn would
        # otherwise take it from any loopback peer's X-Forwarded-For, one per request.
        proxy_headers=False,
    )
    uvicorn.Server(config).run(sockets=[sock])


def stop_started_database(data_dir: Path) -> None:
    import django.apps
    from django.db import connections

    if django.apps.apps.ready:
        for connection in connections.all(initialized_only=True):
            close_pool = getattr(connection, "close_pool", None)
            if close_pool is not None:
                close_pool()
        connections.close_all()
    others = devdb.other_handles(data_dir)
    if others:
        pids = ", ".join(map(str, others))
        print(
            f"The embedded PostgreSQL ({shown(data_dir)}) is still in use by process {pids}: left "
            "running (./scripts/stop-db stops it).",
            file=sys.stderr,
        )
        return
    try:
        devdb.stop_embedded(data_dir)
    except subprocess.CalledProcessError as exc:
        print(f"Could not stop the embedded PostgreSQL: {exc.stderr.strip()}", file=sys.stderr)
        return
    print(f"Stopped the embedded PostgreSQL ({shown(data_dir)}).", file=sys.stderr)


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    # SIGTERM and SIGHUP would otherwise end the process without running any cleanup. uvicorn
    # takes SIGINT and SIGTERM over while it serves and re-raises them once it has shut down.
    raise SystemExit(128 + signum)


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def wants_new_token(argv: list[str] | None = None) -> bool:
    """``--new-token`` on the command line, or ``CLUCK_NEW_TOKEN=1`` in the environment."""
    parser = argparse.ArgumentParser(
        prog="./scripts/serve",
        description="Set up and serve the Cluck demo on 127.0.0.1 (PORT, default 8000).",
    )
    parser.add_argument(
        "--new-token",
        action="store_true",
        help=f"issue a new demo token and revoke the stored one (or set {NEW_TOKEN_ENV}=1)",
    )
    return bool(parser.parse_args(argv).new_token) or _flag(NEW_TOKEN_ENV)


def main(argv: list[str] | None = None) -> int:
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _exit_on_signal)
    renew = wants_new_token(argv)
    try:
        port = parse_port(os.environ.get("PORT"))
        sock = claim_port(port)
    except ServeError as exc:
        print(f"./scripts/serve: {exc}", file=sys.stderr)
        return 1
    database: Database | None = None
    worker: subprocess.Popen[bytes] | None = None
    try:
        database = open_database()
        prepare_database()
        worker = start_task_worker()
        token, origin = demo_token(devdb.var_dir() / TOKEN_FILE, renew=renew)
        base = f"http://{HOST}:{port}"
        print(
            banner(
                base=base,
                token=token,
                origin=origin,
                database=database.description,
                tasks=tasks_line(worker),
            )
        )
        sys.stdout.flush()
        run_uvicorn(sock)
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()
        if worker is not None:
            stop_task_worker(worker)
        if database is not None and database.started is not None:
            stop_started_database(database.started)


if __name__ == "__main__":
    sys.exit(main())
