"""The external issuer's signing keys (``tenancy.external_jwt``): fetched, cached, rotated.

One key set per process, per issuer (its JWKS URL configured or discovered). It is used for
``JWKS_CACHE_SECONDS``, then fetched again on the next token; a token signed with a ``kid``
the set does not hold (the issuer rotated its keys) fetches it again at once, but never more
often than ``JWKS_MIN_REFETCH_SECONDS``: a stream of tokens with made-up kids costs the issuer one
request per interval, not one per token. A failed fetch keeps the set already held.
Symmetric keys (``kty: oct``) in a published set are dropped: a public set cannot hold a
secret, and such a key would let anyone "sign" with HMAC.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

if TYPE_CHECKING:
    from tenancy.external_jwt import Settings

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
    lock: threading.Lock = field(default_factory=threading.Lock)


_sets: dict[str, _Cached] = {}
_sets_lock = threading.Lock()
_discovered: dict[str, str] = {}


def key_for(config: Settings, kid: str | None) -> Any:
    """The issuer's key for ``kid`` (or its only key, for a token without one), or ``None``."""
    with _sets_lock:
        cached = _sets.setdefault(config.issuer, _Cached())
    with cached.lock:
        now = clock()
        stale = cached.fetched_at is None or now - cached.fetched_at >= config.cache_seconds
        if stale and _may_fetch(cached, now, config):
            _refresh(cached, config, now)
        key = _find(cached.keys, kid)
        if key is None and _may_fetch(cached, now, config):
            _refresh(cached, config, now)  # rotated: the new kid is in the new set
            key = _find(cached.keys, kid)
        return key


def forget() -> None:
    """Drop every cached key set and discovered URL (tests; a changed configuration)."""
    with _sets_lock:
        _sets.clear()
        _discovered.clear()


def _may_fetch(cached: _Cached, now: float, config: Settings) -> bool:
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


def _refresh(cached: _Cached, config: Settings, now: float) -> None:
    cached.attempted_at = now  # a failed fetch or discovery counts against the rate too
    uri = _jwks_uri(config)
    if uri is None:
        return
    document = _get_json(uri, config)
    if document is None:
        return
    entries = document.get("keys")
    if not isinstance(entries, list):
        logger.warning("external issuer's JWKS has no key list", extra={"jwks_uri": uri})
        return
    public = [
        entry
        for entry in entries
        if isinstance(entry, dict) and entry.get("kty") != "oct" and "d" not in entry
    ]
    try:
        cached.keys = KeySet.import_key_set({"keys": public})
    except (JoseError, ValueError, TypeError):
        logger.warning("external issuer's JWKS could not be read", extra={"jwks_uri": uri})
        return
    cached.fetched_at = now


def _jwks_uri(config: Settings) -> str | None:
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
        document = _get_json(url, config)
        if document is None:
            continue
        if document.get("issuer") != config.issuer or not isinstance(document.get("jwks_uri"), str):
            logger.warning("discovery document does not name the issuer", extra={"url": url})
            continue
        _discovered[config.issuer] = document["jwks_uri"]
        return _discovered[config.issuer]
    return None


def _get_json(url: str, config: Settings) -> dict[str, Any] | None:
    try:
        response = httpx.get(url, timeout=config.timeout, follow_redirects=False)
    except httpx.HTTPError:
        logger.warning("external issuer unreachable", extra={"url": url})
        return None
    if response.status_code != 200 or len(response.content) > MAX_DOCUMENT_BYTES:
        logger.warning("external issuer answered %s", response.status_code, extra={"url": url})
        return None
    try:
        document = response.json()
    except ValueError:
        return None
    return document if isinstance(document, dict) else None
