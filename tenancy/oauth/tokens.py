"""Token values for django-oauth-toolkit (``ACCESS_TOKEN_GENERATOR``/``REFRESH_TOKEN_GENERATOR``).

``ck_oat_`` (access) and ``ck_ort_`` (refresh) + 256 random bits: recognisable to secret
scanners, never mistaken for a personal token (``ck_pat_``), and cheap to tell apart before any
database work. The toolkit stores only their SHA-256 checksum
(``COMPLIANT_BCP_RFC9700_TOKEN_STORAGE``).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

ACCESS_PREFIX = "ck_oat_"
REFRESH_PREFIX = "ck_ort_"
_ACCESS_RE = re.compile(r"^ck_oat_[A-Za-z0-9_-]{43}$")


def generate_access_token(request: Any = None, *args: Any, **kwargs: Any) -> str:
    return ACCESS_PREFIX + secrets.token_urlsafe(32)


def generate_refresh_token(request: Any = None, *args: Any, **kwargs: Any) -> str:
    return REFRESH_PREFIX + secrets.token_urlsafe(32)


def looks_like_access_token(raw: str) -> bool:
    return bool(_ACCESS_RE.match(raw))
