"""A throwaway PgBouncer (Debian's ``pgbouncer``) in front of a PostgreSQL, for tests and benches.

Production runs its own pooler (docs/deploying.md#pgbouncer); the test harness starts one here
the way ``cluck.devredis`` starts Redis: on a free loopback port, ``pool_mode = transaction``
(the mode that breaks anything holding session state across transactions), a small server
pool so that client connections really share server sessions, stopped afterwards.
``./scripts/ensure-pgbouncer`` installs it where it is missing. Imports no Django.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

SERVER = "pgbouncer"


class PgBouncerUnavailableError(RuntimeError):
    """``pgbouncer`` is not installed (``./scripts/ensure-pgbouncer``), or did not start."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _config(database_url: str, port: int, workdir: Path, pool_size: int) -> str:
    parts = urlsplit(database_url)
    # The harness's embedded server listens on a Unix socket (``?host=/dir``), CI's on TCP.
    host = parse_qs(parts.query).get("host", [parts.hostname or "127.0.0.1"])[0]
    server = [f"host={host}", f"port={parts.port or 5432}", f"user={parts.username or 'postgres'}"]
    if parts.password:
        server.append(f"password={parts.password}")
    lines = [
        "[databases]",
        # Every database name the client asks for, on the one server, as one fixed user.
        f"* = {' '.join(server)}",
        "[pgbouncer]",
        "listen_addr = 127.0.0.1",
        f"listen_port = {port}",
        "unix_socket_dir =",
        # Loopback only, and the server login is fixed above: the client's name is ignored.
        "auth_type = any",
        "pool_mode = transaction",
        f"default_pool_size = {pool_size}",
        "max_client_conn = 500",
        "ignore_startup_parameters = extra_float_digits",
        f"logfile = {workdir / 'pgbouncer.log'}",
        f"pidfile = {workdir / 'pgbouncer.pid'}",
    ]
    if os.geteuid() == 0:
        # PgBouncer refuses to run as root; it switches to the owner of the server's socket
        # directory (the embedded server's, which only that user may enter), else nobody.
        owner = pwd.getpwuid(Path(host).stat().st_uid).pw_name if host.startswith("/") else ""
        lines.append(f"user = {owner if owner and owner != 'root' else 'nobody'}")
    return "\n".join(lines) + "\n"


def pooled_url(database_url: str, port: int) -> str:
    """``database_url`` with its server replaced by the pooler on loopback ``port``."""
    parts = urlsplit(database_url)
    user = parts.username or "postgres"
    return parts._replace(netloc=f"{user}@127.0.0.1:{port}", query="").geturl()


@contextmanager
def pgbouncer(database_url: str, *, pool_size: int = 4, timeout: float = 30.0) -> Iterator[str]:
    """Start ``pgbouncer`` in transaction mode before ``database_url``'s server; yield the URL
    of the same database through it (``postgresql://user@127.0.0.1:port/name``).

    Raises:
        PgBouncerUnavailableError: no ``pgbouncer`` on ``PATH`` (or in ``/usr/sbin``), or it
            did not listen within ``timeout`` seconds.
    """
    binary = shutil.which(SERVER) or shutil.which(SERVER, path="/usr/sbin:/usr/bin")
    if binary is None:
        raise PgBouncerUnavailableError(f"{SERVER} not found: run ./scripts/ensure-pgbouncer")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="cluck-pgbouncer-") as name:
        workdir = Path(name)
        workdir.chmod(0o777)  # written by the unprivileged user PgBouncer switches to
        config = workdir / "pgbouncer.ini"
        config.write_text(_config(database_url, port, workdir, pool_size))
        process = subprocess.Popen(
            [binary, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + timeout
            while not _listening(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    log = workdir / "pgbouncer.log"
                    detail = log.read_text()[-2000:] if log.exists() else ""
                    raise PgBouncerUnavailableError(
                        f"{SERVER} did not start on port {port}: {detail}"
                    )
                time.sleep(0.05)
            yield pooled_url(database_url, port)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":  # python -m cluck.devpgbouncer URL: start one and wait (Ctrl-C)
    import sys

    with pgbouncer(sys.argv[1]) as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
