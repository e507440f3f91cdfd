"""The only hashing an adapter needs: SHA-256, lower-case hex, 64 characters."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_hex(text: str) -> str:
    """SHA-256 of the UTF-8 encoding of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint_bytes(data: bytes) -> str:
    """SHA-256 of raw bytes (the HTTP adapter fingerprints the request body as received)."""
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, non-ASCII kept as is: equal values give equal text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint_json(obj: Any) -> str:
    """SHA-256 of the canonical JSON of ``obj`` (for adapters whose request is a value, e.g. MCP
    tool arguments). Raises ``TypeError`` for values JSON cannot represent."""
    return fingerprint_bytes(canonical_json(obj).encode("utf-8"))


def bound_fingerprint(request_digest: str, *, user_id: str | None) -> str:
    """The fingerprint an adapter stores: the request's own digest bound to the acting user.

    Every adapter uses it (HTTP: the body's digest; MCP: the validated arguments' digest), so a
    stored result is only ever replayed to the member who made the original request; another
    member sending the same key and the same request is refused as a reused key. ``user_id``
    ``None`` (no person behind the request) is its own, single caller.
    """
    return fingerprint_json({"request": request_digest, "user": user_id})
