"""Request size and time bounds against a real uvicorn server, over raw sockets.

The server runs as ``./scripts/serve`` does (the bounded httptools protocol), with short
deadlines: ``--timeout-keep-alive 1`` for request heads, ``MCP_TOOLS_BODY_READ_SECONDS=1``.
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.mcp_tools.servers import UVICORN_HTTP, serve
from tests.mutations import Edit, mutation

pytestmark = [pytest.mark.e2e]

# Well-formed, unknown: authentication would cost a token lookup.
BEARER = "ck_pat_" + "x" * 43


@pytest.fixture(scope="module")
def server(django_db_setup: Any, django_db_blocker: Any) -> Iterator[tuple[str, int]]:
    with django_db_blocker.unblock():
        with serve(
            env={"MCP_TOOLS_BODY_READ_SECONDS": "1"},
            args=("--http", UVICORN_HTTP, "--timeout-keep-alive", "1"),
        ) as url:
            parts = urlsplit(url)
            yield parts.hostname or "127.0.0.1", parts.port or 80


def _connect(server: tuple[str, int]) -> socket.socket:
    sock = socket.create_connection(server, timeout=5)
    return sock


def _head(path: str, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {BEARER}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _response(sock: socket.socket, timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """Read one response (status, lower-cased headers, body); the server closes after it."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(status_line.split()[1]), headers, body


def _closed(sock: socket.socket, within: float) -> bool:
    """The server closed the connection (EOF or reset) within ``within`` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return True


@mutation(
    "mcp_tools/serving/asgi.py",
    find=(
        "        if declared is not None and declared > limit:\n"
        "            await self._refuse(send, *too_large(limit), jsonrpc)\n"
        "            return\n"
    ),
    replace="",
)
@pytest.mark.parametrize(
    ("path", "length", "content_type"),
    [
        ("/mcp", 50 * 1024 * 1024, "application/json"),
        ("/api/v1/customers/", 2 * 1024 * 1024, "application/problem+json"),
    ],
)
def test_a_declared_oversized_body_is_refused_before_a_byte_of_it_is_sent(
    server, path, length, content_type
):
    """Content-Length over the route's cap (32 KiB on /mcp, 1 MiB on REST) → 413 at once,
    in the endpoint's shape, and the connection closes: the body is never read.

    Mutation: drop the ``declared > limit`` refusal in ``SyncMiddlewareASGIHandler.handle``
    → red (the server waits for a body that never comes; no answer within 5 s).
    """
    with _connect(server) as sock:
        sock.sendall(_head(path, Content_Type="application/json", Content_Length=str(length)))
        status, headers, body = _response(sock)
    assert status == 413
    assert headers["content-type"] == content_type
    assert headers["connection"] == "close"
    decoded = json.loads(body)
    if path == "/mcp":
        assert decoded["error"]["code"] == -32600 and decoded["id"] is None
    else:
        assert decoded["code"] == "Http.BodyTooLarge" and decoded["status"] == 413


@mutation(
    "mcp_tools/serving/asgi.py",
    find='            self.received += len(message.get("body", b""))\n',
    replace="",
)
def test_a_chunked_oversized_body_is_cut_off_at_the_cap(server):
    """A chunked upload with no length is answered 413 once it passes the cap, long before
    its last chunk; Django never spools it to disk.

    Mutation: let ``_CappedReceive`` pass every message without counting → red (the whole
    8 MB is read and spooled before anything answers).
    """
    total, chunk = 8 * 1024 * 1024, b"a" * 16384
    sent = 0
    with _connect(server) as sock:
        sock.sendall(_head("/mcp", Content_Type="application/json", Transfer_Encoding="chunked"))
        answered = False
        try:
            while sent < total:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
                if select.select([sock], [], [], 0)[0]:
                    answered = True
                    break
        except (BrokenPipeError, ConnectionResetError):
            answered = True
        assert answered, "no answer before the last chunk"
        status, headers, _ = _response(sock)
    assert status == 413
    assert headers["connection"] == "close"
    assert sent < total


@mutation(
    "mcp_tools/serving/asgi.py",
    find="            async with asyncio.timeout_at(self.deadline):\n",
    replace="            if True:\n",
)
def test_a_body_slower_than_the_read_deadline_is_408(server):
    """A client trickling its body is answered 408 at the deadline (1 s here, 30 s by
    default) instead of holding a request open indefinitely.

    Mutation: drop ``asyncio.timeout_at`` from ``_CappedReceive.__call__`` → red (no answer).
    """
    with _connect(server) as sock:
        sock.sendall(_head("/mcp", Content_Type="application/json", Content_Length="100"))
        sock.sendall(b'{"jsonrpc":')
        started = time.monotonic()
        status, headers, body = _response(sock, timeout=5)
    assert status == 408
    assert time.monotonic() - started < 4
    assert json.loads(body)["error"]["code"] == -32600


@mutation(
    "mcp_tools/serving/uvicorn_http.py",
    find="class BoundedHttpToolsProtocol(HttpToolsProtocol):\n",
    replace=(
        "class BoundedHttpToolsProtocol(HttpToolsProtocol):\n"
        "    pass\n\n\n"
        "class _DroppedBoundedHttpToolsProtocol(HttpToolsProtocol):\n"
    ),
)
def test_an_oversized_request_head_is_431_and_never_reaches_the_application(server):
    """Headers over 16 KiB (``--h11-max-incomplete-event-size``) → 431, connection closed.

    Mutation: serve with uvicorn's plain ``--http httptools`` (drop the bounded protocol)
    → red (a 1 MiB header is accepted and the request served).
    """
    with _connect(server) as sock:
        sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ")
        for _ in range(64):
            sock.sendall(b"a" * 16384)
            if select.select([sock], [], [], 0)[0]:
                break
        status, headers, _ = _response(sock)
    assert status == 431
    assert headers["connection"] == "close"


@mutation(
    Edit(
        "mcp_tools/serving/uvicorn_http.py",
        find="        super().connection_made(transport)\n        self._arm_head_timer()\n",
        replace="        super().connection_made(transport)\n",
    ),
    Edit(
        "mcp_tools/serving/uvicorn_http.py",
        find="        self._head_parsed = 0\n        self._arm_head_timer()\n",
        replace="        self._head_parsed = 0\n",
    ),
)
def test_a_trickled_request_head_is_closed_at_the_keep_alive_timeout(server):
    """One byte every 0.2 s used to keep a connection open for ever: now the head must be
    complete within ``--timeout-keep-alive`` (1 s here, 5 s by default) → 408 and closed.

    Mutation: do not arm the head timer in ``BoundedHttpToolsProtocol.on_message_begin``
    and ``connection_made`` → red (still open after 4 s).
    """
    started = time.monotonic()
    with _connect(server) as sock:
        request = b"GET /api/v1/me/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 40
        status = None
        try:
            for byte in request:
                sock.sendall(bytes([byte]))
                if select.select([sock], [], [], 0.2)[0]:
                    status, _, _ = _response(sock)
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert status == 408
    assert time.monotonic() - started < 4


@mutation(
    "mcp_tools/serving/uvicorn_http.py",
    find="        super().connection_made(transport)\n        self._arm_head_timer()\n",
    replace="        super().connection_made(transport)\n",
)
def test_an_idle_connection_is_closed_at_the_keep_alive_timeout(server):
    """A connection that never sends a byte is closed too (uvicorn alone keeps it open).

    Mutation: drop ``_arm_head_timer`` from ``connection_made`` → red.
    """
    with _connect(server) as sock:
        assert _closed(sock, within=4)
