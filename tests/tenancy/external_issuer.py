"""A local identity provider for the external-JWT tests: a tiny HTTP server in a thread.

It serves its key set (``/jwks``) and its discovery documents (OpenID Connect and RFC 8414),
counts the requests it receives, and signs RFC 9068 access tokens with keys generated in the
test. ``rotate()`` publishes a new key and drops the old one, as an issuer's rotation does.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from joserfc import jwt
from joserfc.jwk import RSAKey


def generate_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"})


class LocalIssuer:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        host, port = server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        self.requests: Counter[str] = Counter()
        self.keys = [generate_key("key-1")]
        # Extra members of the published key set (a test pads it past the size cap).
        self.extra: dict[str, Any] = {}
        self._generation = 1

    @property
    def jwks_uri(self) -> str:
        return f"{self.url}/jwks"

    def jwks(self) -> dict[str, Any]:
        return {"keys": [key.as_dict(private=False) for key in self.keys], **self.extra}

    def rotate(self) -> RSAKey:
        """A new signing key; the old one leaves the published set."""
        self._generation += 1
        self.keys = [generate_key(f"key-{self._generation}")]
        return self.keys[0]

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {
            "iss": self.url,
            "aud": "http://testserver/mcp",
            "sub": "nobody",
            "client_id": "external-client",
            "iat": now,
            "exp": now + 300,
            "jti": f"jti-{now}-{id(overrides)}",
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def token(
        self, *, key: RSAKey | None = None, header: dict[str, Any] | None = None, **claims: Any
    ) -> str:
        """An access token signed with ``key`` (default: the current key)."""
        key = key or self.keys[0]
        protected = {"alg": "RS256", "typ": "at+jwt", "kid": key.kid, **(header or {})}
        protected = {name: value for name, value in protected.items() if value is not None}
        return jwt.encode(protected, self.claims(**claims), key)


def unsigned_token(claims: dict[str, Any]) -> str:
    """``alg: none`` with a junk signature segment (an empty one is not even a JWS shape)."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'at+jwt'})}.{part(claims)}.c2ln"


@contextmanager
def local_issuer() -> Iterator[LocalIssuer]:
    issuer: LocalIssuer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            issuer.requests[self.path] += 1
            if self.path == "/jwks":
                self._send(issuer.jwks())
            elif self.path in (
                "/.well-known/openid-configuration",
                "/.well-known/oauth-authorization-server",
            ):
                self._send({"issuer": issuer.url, "jwks_uri": issuer.jwks_uri})
            else:
                self.send_error(404)

        def _send(self, document: dict[str, Any]) -> None:
            body = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer = LocalIssuer(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def trickling_issuer(seconds_per_byte: float) -> Iterator[LocalIssuer]:
    """An issuer whose every answer trickles: the headers at once, then one byte of a long body
    every ``seconds_per_byte`` (issue 34's slow identity provider). Its keys are never
    delivered; ``requests`` counts what it was asked."""
    issuer: LocalIssuer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            issuer.requests[self.path] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(100000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    if stopping.wait(seconds_per_byte):
                        return
            except OSError:
                return  # the client gave up: what a deadline is for

        def log_message(self, format: str, *args: Any) -> None:
            pass

    stopping = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    issuer = LocalIssuer(server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        stopping.set()
        server.shutdown()
        server.server_close()
