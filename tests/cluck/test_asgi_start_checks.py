"""The ASGI application runs the security system checks when it is built and refuses to start
on an error: ``uvicorn cluck.asgi:application`` never runs ``manage.py check``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.test import override_settings

from mcp_tools.serving.asgi import StartupCheckError, check_before_serving
from tests.mcp_tools.servers import free_port
from tests.mutations import mutation

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = {"ALLOWED_HOSTS": "farm.example.com", "SECRET_KEY": "s" * 60}


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@mutation("mcp_tools/serving/asgi.py", find="    check_before_serving(check_tags)\n", replace="")
@pytest.mark.e2e
def test_uvicorn_refuses_to_start_with_the_loopback_cimd_flag_on_a_public_host() -> None:
    """Mutation: build the application without the checks → red (it serves, and would fetch
    client metadata from loopback over plain http)."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "cluck.asgi:application", "--lifespan", "off"]
        + ["--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        env={
            **environment,
            **PUBLIC,
            "DATABASE_URL": "sqlite:///:memory:",
            "CLUCK_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS": "1",
        },
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            assert not _listening(port), "the server started and serves"
            time.sleep(0.1)
        assert process.returncode not in (None, 0)
        stderr = process.stderr.read() if process.stderr else ""
        assert "StartupCheckError" in stderr and "tenancy_oauth.E001" in stderr
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


@pytest.mark.django_db  # the start-up checks read the database's row-level security (tenancy.rls)
def test_only_unsilenced_errors_refuse_to_start() -> None:
    with override_settings(
        ALLOWED_HOSTS=["farm.example.com"], TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS=True
    ):
        with pytest.raises(StartupCheckError, match="tenancy_oauth.E001"):
            check_before_serving()
        check_before_serving(())  # the checks skipped on purpose
        with override_settings(SILENCED_SYSTEM_CHECKS=["tenancy_oauth.E001"]):
            check_before_serving()
    with override_settings(ALLOWED_HOSTS=["farm.example.com"]):
        check_before_serving()
