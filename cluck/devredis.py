"""A throwaway Redis server (Debian's ``redis-server``) for tests and benchmarks.

Production points ``CACHE_URL=redis://…`` at its own Redis (docs/deploying.md); the test
harness and ``bench/`` start one here, the way they start PostgreSQL: on a free loopback port,
in memory only (no snapshots, no append-only file), stopped afterwards.
``./scripts/ensure-redis`` installs the server where it is missing. Imports no Django.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

SERVER = "redis-server"


class RedisUnavailableError(RuntimeError):
    """``redis-server`` is not installed (``./scripts/ensure-redis``), or did not start."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(*, timeout: float = 30.0) -> Iterator[str]:
    """Start ``redis-server`` on a free loopback port; yield its ``redis://`` URL.

    Raises:
        RedisUnavailableError: no ``redis-server`` on ``PATH`` (or in ``/usr/bin``), or it
            did not answer ``PING`` within ``timeout`` seconds.
    """
    binary = shutil.which(SERVER) or shutil.which(SERVER, path="/usr/bin:/usr/sbin")
    if binary is None:
        raise RedisUnavailableError(f"{SERVER} not found: run ./scripts/ensure-redis")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="cluck-redis-") as workdir:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
            + ["--appendonly", "no", "--dir", workdir, "--daemonize", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + timeout
            while not _answers(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RedisUnavailableError(f"{SERVER} did not start on port {port}")
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


if __name__ == "__main__":  # python -m cluck.devredis: start one and wait (Ctrl-C stops it)
    with redis_server() as url:
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
