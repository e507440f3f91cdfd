"""The external issuer's signing keys (``tenancy.idp.external_jwt``): fetched, cached, rotated.

One key set per process, per issuer (its JWKS URL configured or discovered). **No request ever
waits on the issuer**: a request is answered from the set held now, and when that set is stale
(``JWKS_CACHE_SECONDS``) or lacks the token's ``kid`` (the issuer rotated), one background
refresh per issuer is started and the request goes on without it (an unknown ``kid`` is
refused now; the next token finds the new set). Before the first set arrives every token is
refused with ``Auth.SigningKeysUnavailable``. A slow or trickling issuer therefore costs
requests nothing: issue 34 measured a personal-token call at 57 s while made-up kids kept
request threads waiting on the issuer's lock.

Refreshes are rate-limited per issuer (``JWKS_MIN_REFETCH_SECONDS``, failed ones included): a
stream of tokens with made-up kids costs the issuer one request per interval, not one per token.
Each refresh has a total deadline (``HTTP_TIMEOUT_SECONDS``, discovery and key set together):
a per-read timeout is not one (a server sending one byte every few seconds never trips it), so
a watchdog shuts the socket at the deadline. The body is capped at ``MAX_DOCUMENT_BYTES``. A
failed fetch keeps the set already held. Symmetric keys (``kty: oct``) in a published set are
dropped: a public set cannot hold a secret, and such a key would let anyone "sign" with HMAC.

The standard library does the fetching (``urllib.request``): the bare install has no HTTP client
of its own, and none is imported at start-up.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from tenancy.exceptions import SigningKeysUnavailableError
from tenancy.process import LockedTable, ProcessObject

if TYPE_CHECKING:
    from tenancy.idp.external_jwt import Settings

logger = logging.getLogger("tenancy.security")

# A seam for tests (time is injected, never slept).
clock = time.monotonic
# A JWKS of a real issuer is a few kilobytes.
MAX_DOCUMENT_BYTES = 256 * 1024


@dataclass
class _Cached:
    keys: KeySet | None = None
    fetched_at: float | None = None
    attempted_at: float | None = None
    refresh: threading.Thread | None = None
    # Guards the fields above only: never held across I/O.
    lock: threading.Lock = field(default_factory=threading.Lock)


# Process state (mcp_tools.operator.process): the key set per issuer (each with the thread
# refreshing it, if any) and the JWKS URL discovered per issuer.
KEY_SETS: Final = ProcessObject[LockedTable[str, _Cached]](
    "idp.key_sets", LockedTable, kind="cache", renew=LockedTable.renew
)
_sets = KEY_SETS.get()
DISCOVERED: Final = ProcessObject[dict[str, str]](
    "idp.discovered", dict, kind="cache", renew=dict.clear
)
_discovered = DISCOVERED.get()


def key_for(config: Settings, kid: str | None) -> Any:
    """The issuer's key for ``kid`` (or its only key, for a token without one), or ``None``.

    Never waits on the issuer: a refresh this call needs runs in the background.

    Raises:
        SigningKeysUnavailableError: no key set has been fetched yet (one is being fetched).
    """
    with _sets.lock:
        cached = _sets.setdefault(config.issuer, _Cached())
    with cached.lock:
        now = clock()
        keys = cached.keys
        key = _find(keys, kid)
        stale = cached.fetched_at is None or now - cached.fetched_at >= config.cache_seconds
        if (stale or key is None) and _may_fetch(cached, now, config):
            cached.attempted_at = now  # a failed fetch or discovery counts against the rate too
            cached.refresh = threading.Thread(
                target=_refresh,
                args=(cached, config),
                name=f"jwks-refresh {config.issuer}",
                daemon=True,
            )
            cached.refresh.start()
    if keys is None:
        raise SigningKeysUnavailableError()
    return key


def settle(timeout: float = 10.0) -> None:
    """Wait for the background refreshes running now (tests, warm-up scripts; never requests)."""
    with _sets.lock:
        running = [cached.refresh for cached in _sets.values() if cached.refresh is not None]
    for thread in running:
        thread.join(timeout)


def forget() -> None:
    """Drop every cached key set and discovered URL (tests; a changed configuration)."""
    settle()
    KEY_SETS.reset()
    DISCOVERED.reset()


def _may_fetch(cached: _Cached, now: float, config: Settings) -> bool:
    if cached.refresh is not None and cached.refresh.is_alive():
        return False  # one refresh per issuer at a time
    return cached.attempted_at is None or now - cached.attempted_at >= config.min_refetch_seconds


def _find(keys: KeySet | None, kid: str | None) -> Any:
    if keys is None:
        return None
    if kid is None:
        return keys.keys[0] if len(keys.keys) == 1 else None
    for key in keys.keys:
        if key.kid == kid:
            return key
    return None


def _refresh(cached: _Cached, config: Settings) -> None:
    deadline = _Deadline(config.timeout)
    try:
        keys = _fetch_keys(config, deadline)
    except Exception:
        # A thread's exception would go nowhere useful; the held set stays in use.
        logger.exception("external issuer's key set refresh failed")
        return
    finally:
        deadline.cancel()
    if keys is None:
        return
    with cached.lock:
        cached.keys = keys
        cached.fetched_at = clock()


def _fetch_keys(config: Settings, deadline: _Deadline) -> KeySet | None:
    uri = _jwks_uri(config, deadline)
    if uri is None:
        return None
    document = _get_json(uri, deadline)
    if document is None:
        return None
    entries = document.get("keys")
    if not isinstance(entries, list):
        logger.warning("external issuer's JWKS has no key list", extra={"jwks_uri": uri})
        return None
    public = [
        entry
        for entry in entries
        if isinstance(entry, dict) and entry.get("kty") != "oct" and "d" not in entry
    ]
    try:
        return KeySet.import_key_set({"keys": public})
    except (JoseError, ValueError, TypeError):
        logger.warning("external issuer's JWKS could not be read", extra={"jwks_uri": uri})
        return None


def _jwks_uri(config: Settings, deadline: _Deadline) -> str | None:
    if config.jwks_uri:
        return config.jwks_uri
    if config.issuer in _discovered:
        return _discovered[config.issuer]
    issuer = config.issuer.rstrip("/")
    parts = urlsplit(issuer)
    candidates = [
        f"{issuer}/.well-known/openid-configuration",
        # RFC 8414 §3.1: the well-known segment goes before the issuer's path.
        f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{parts.path}",
    ]
    for url in candidates:
        document = _get_json(url, deadline)
        if document is None:
            continue
        if document.get("issuer") != config.issuer or not isinstance(document.get("jwks_uri"), str):
            logger.warning("discovery document does not name the issuer", extra={"url": url})
            continue
        _discovered[config.issuer] = document["jwks_uri"]
        return _discovered[config.issuer]
    return None


class _Deadline:
    """A refresh's total deadline: at it, every socket the refresh opened is shut down, which
    ends a read blocked on a trickling server whatever its per-read timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.ends_at = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return max(0.0, self.ends_at - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self._expired
        if expired:
            _shut(sock)

    @property
    def expired(self) -> bool:
        with self._lock:
            return self._expired

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self._expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        # The plain socket's shutdown, also under TLS: it wakes the reading thread without
        # touching the SSL object that thread is using.
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    class Watched(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class WatchedTLS(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Watched, req)

    class TLS(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(WatchedTLS, req)

    class NoRedirects(urllib.request.HTTPRedirectHandler):
        # A key set is fetched where it was configured or discovered, never where a 3xx points.
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(Plain, TLS, NoRedirects)


def _get_json(url: str, deadline: _Deadline) -> dict[str, Any] | None:
    if urlsplit(url).scheme not in ("http", "https"):
        logger.warning("external issuer URL is not http(s)", extra={"url": url})
        return None
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with _opener(deadline).open(request, timeout=max(deadline.remaining(), 0.001)) as response:
            status = response.status
            body = response.read(MAX_DOCUMENT_BYTES + 1)
    except urllib.error.HTTPError as exc:
        logger.warning("external issuer answered %s", exc.code, extra={"url": url})
        return None
    except (OSError, http.client.HTTPException, ValueError):
        # OSError covers refused connections, timeouts and the deadline's shutdown.
        logger.warning("external issuer unreachable or too slow", extra={"url": url})
        return None
    if deadline.expired or status != 200:
        # Past the deadline, a body cut short could still parse: it is not the issuer's.
        logger.warning("external issuer answered %s (or too slowly)", status, extra={"url": url})
        return None
    if len(body) > MAX_DOCUMENT_BYTES:
        logger.warning("external issuer's document is too large", extra={"url": url})
        return None
    try:
        document = json.loads(body)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
