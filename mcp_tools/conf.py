"""``mcp_tools`` settings: defaults here, read at call time so ``override_settings`` works.

``PAGE_SIZE`` and ``SERVER_NAME``/``SERVER_VERSION`` shape the prepared surfaces and are read
once at start-up, when the catalogue is built.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # Patterns like "http://localhost:*" (any port). An absent Origin header passes: only
    # browsers send one, and a browser page on another origin is the DNS-rebinding threat.
    "ALLOWED_ORIGINS": ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    # One JSON-RPC message is small; 32 KiB bounds parsing work before anything else runs.
    "MAX_BODY_BYTES": 32 * 1024,
    "MAX_JSON_DEPTH": 32,
    "MAX_JSON_NODES": 4096,
    "MAX_ID_LENGTH": 128,
    # Tools run in worker threads; the limit bounds threads and DB connections per process.
    "MAX_CONCURRENT_CALLS": 8,
    "CALL_TIMEOUT_SECONDS": 30.0,
    # django-ratelimit rate per bearer token, counted on the default (shared) cache.
    # The cache is django-ratelimit's RATELIMIT_USE_CACHE (default: "default").
    "RATE": "300/m",
    # Dotted path to ``callable(exc) -> ToolFailure | None`` mapping domain errors.
    "ERROR_TRANSLATOR": None,
    "PAGE_SIZE": 50,
    "SERVER_NAME": "cluck",
    "SERVER_VERSION": "0.1.0",
    "INSTRUCTIONS": None,
}


def get(name: str) -> Any:
    """The value of ``MCP_TOOLS_<name>``, or its default. Unknown names raise."""
    if name not in DEFAULTS:
        raise AttributeError(f"unknown mcp_tools setting {name!r}")
    return getattr(settings, f"MCP_TOOLS_{name}", DEFAULTS[name])
