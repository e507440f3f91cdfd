"""Text no OAuth endpoint accepts: NUL and lone surrogates, refused before any work.

PostgreSQL stores neither (psycopg raises ``DataError`` for a NUL, and a lone surrogate cannot
be encoded as UTF-8), so a ``client_id=%00`` reached the database and came back as an HTML
500 — after the registration endpoint had paid for hashing a secret. Every endpoint of the
authorization server asks ``unsafe_request`` (query string, form body, HTTP Basic credentials)
or ``unsafe_value`` (a parsed JSON document) first and answers a 4xx in its own format.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any
from urllib.parse import unquote_plus

# NUL, and the UTF-16 surrogate range (JSON's "\ud800" decodes to one; UTF-8 cannot hold it).
_UNSAFE = re.compile("[\x00\ud800-\udfff]")
# What every endpoint answers such a request with, in its own format.
UNSAFE_INPUT = "The request holds NUL or unpaired surrogate characters."
# Nesting deeper than this in a client's JSON is refused rather than walked.
MAX_DEPTH = 8


def unsafe_text(text: str) -> bool:
    return _UNSAFE.search(text) is not None


def unsafe_value(value: Any, depth: int = 0) -> bool:
    """``value`` (parsed JSON) holds an unsafe string anywhere, keys included, or nests too deep."""
    if isinstance(value, str):
        return unsafe_text(value)
    if depth > MAX_DEPTH:
        return True
    if isinstance(value, dict):
        return any(unsafe_text(str(k)) or unsafe_value(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return any(unsafe_value(item, depth + 1) for item in value)
    return False


def basic_credentials(request: Any) -> tuple[str, str] | None:
    """The ``(client_id, client_secret)`` of an HTTP Basic ``Authorization`` header, if any."""
    header = str(request.META.get("HTTP_AUTHORIZATION") or "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic" or not value:
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, _, secret = decoded.partition(":")
    return unquote_plus(client_id), unquote_plus(secret)


def unsafe_request(request: Any, *, form: bool = True) -> bool:
    """The query string, the form body (``form``) or the Basic credentials hold unsafe text."""
    sources = [request.GET]
    if form:
        sources.append(request.POST)
    for source in sources:
        for key, values in source.lists():
            if unsafe_text(key) or any(unsafe_text(value) for value in values):
                return True
    credentials = basic_credentials(request)
    return credentials is not None and any(unsafe_text(part) for part in credentials)
