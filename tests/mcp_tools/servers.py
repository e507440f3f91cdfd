"""Real server processes for end-to-end and conformance tests (uvicorn ASGI, runserver WSGI)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from django.db import connection

from cluck.devdb import _with_database

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_database_url() -> str:
    """The test database this run writes its fixtures to (servers must use the same one)."""
    return _with_database(os.environ["DATABASE_URL"], connection.settings_dict["NAME"])


# What ./scripts/serve runs: uvicorn's httptools parser with a bounded request head.
UVICORN_HTTP = "mcp_tools.serving.uvicorn_http:BoundedHttpToolsProtocol"


class ServerURL(str):
    """The base URL of a running server; ``process`` is its ``subprocess.Popen``."""

    process: subprocess.Popen[bytes]
    log: Any  # the server's stderr (a temporary file)


@contextmanager
def serve(
    kind: str = "uvicorn",
    *,
    app: str = "cluck.asgi:application",
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = ("--http", UVICORN_HTTP),
) -> Iterator[ServerURL]:
    """Start a server on a free port and yield its base URL; stop it afterwards.

    ``args`` are extra uvicorn options (by default the bounded httptools protocol).
    """
    port = free_port()
    if kind == "uvicorn":
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            app,
            "--lifespan",
            "off",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
            *args,
        ]
    else:
        command = [
            sys.executable,
            "manage.py",
            "runserver",
            f"127.0.0.1:{port}",
            "--noreload",
            "--nothreading",
            "--skip-checks",
        ]
    # A file, not a pipe: nobody reads a pipe while the server runs, and a server that logs
    # more than a pipe holds (64 KiB of tracebacks in a fault test) would block on write.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "LOG_LEVEL": "ERROR",
            **(env or {}),
        },
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    url = ServerURL(f"http://127.0.0.1:{port}")
    url.process = process
    url.log = log
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(log.read().decode(errors="replace") or "died")
            try:
                httpx.get(f"{url}/.well-known/oauth-authorization-server", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
