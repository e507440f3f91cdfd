"""A throwaway nginx (Debian's; ``./scripts/ensure-nginx``) balancing round robin over replicas.

The shape of a production reverse proxy in front of several uvicorn processes: HTTP/1.1 with
keep-alive to the upstreams, no buffering (SSE streams pass through), a failed upstream taken
out of the rotation (``max_fails=1``) and a request whose connection could not be made tried on
the next one. A POST already sent to a replica that then dies is never re-sent by nginx (it is
not idempotent): the client sees a 502 and retries with its ``Idempotency-Key``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx


class NginxUnavailableError(RuntimeError):
    """``nginx`` is not installed (``./scripts/ensure-nginx``), or did not start."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(workdir: Path, port: int, upstreams: Sequence[str]) -> str:
    servers = "\n".join(
        f"    server {upstream.removeprefix('http://')} max_fails=1 fail_timeout=60s;"
        for upstream in upstreams
    )
    temp = "\n".join(
        f"  {kind}_temp_path {workdir / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return f"""
worker_processes 1;
daemon off;
pid {workdir / "nginx.pid"};
error_log {workdir / "error.log"} warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
{temp}
  upstream farm {{
{servers}
    keepalive 16;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://farm;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_read_timeout 120s;
      proxy_next_upstream error timeout;
    }}
  }}
}}
"""


@contextmanager
def nginx(upstreams: Sequence[str], *, timeout: float = 30.0) -> Iterator[str]:
    """Start nginx on a free loopback port in front of ``upstreams`` (base URLs); yield its URL.

    Raises:
        NginxUnavailableError: no ``nginx`` on ``PATH`` (or in ``/usr/sbin``), or it did not
            answer within ``timeout`` seconds.
    """
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/bin")
    if binary is None:
        raise NginxUnavailableError("nginx not found: run ./scripts/ensure-nginx")
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="cluck-nginx-") as name:
        workdir = Path(name)
        workdir.chmod(0o777)  # its worker runs as nobody when started by root
        config = workdir / "nginx.conf"
        config.write_text(_config(workdir, port, upstreams))
        command = [binary, "-p", str(workdir), "-c", str(config), "-e", str(workdir / "error.log")]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = workdir / "error.log"
                    raise NginxUnavailableError(log.read_text() if log.exists() else "died")
                try:
                    httpx.get(f"{url}/healthz", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
