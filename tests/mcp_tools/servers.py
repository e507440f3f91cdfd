"""Real server processes for end-to-end and conformance tests (uvicorn ASGI, runserver WSGI)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
UVICORN_HTTP = "mcp_tools.uvicorn_http:BoundedHttpToolsProtocol"


@contextmanager
def serve(
    kind: str = "uvicorn",
    *,
    app: str = "cluck.asgi:application",
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = ("--http", UVICORN_HTTP),
) -> Iterator[str]:
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
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(process.stderr.read().decode() if process.stderr else "died")
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
