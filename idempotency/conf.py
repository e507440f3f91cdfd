"""``idempotency`` settings: defaults here, read at call time so ``override_settings`` works.

Every setting is ``IDEMPOTENCY_<NAME>`` in Django settings; ``idempotency.checks`` validates them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

DEFAULTS: dict[str, Any] = {
    # How long a claim blocks others before it is presumed abandoned and may be stolen.
    "LEASE_SECONDS": 30.0,
    # How long one caller polls a live competing claim before answering "in progress".
    "MAX_WAIT_SECONDS": 30.0,
    "POLL_INTERVAL_SECONDS": 0.04,
    # Completed records stay replayable this long after completion (purge_idempotency).
    "RETENTION_HOURS": 48.0,
    # ``f(request) -> str | None``: the tenant an HTTP write belongs to; None = not tracked.
    "TENANT_ID_FUNCTION": "idempotency.middleware.tenant_id_from_request",
    # ``f(request) -> str | None``: the acting user, bound into every fingerprint (a stored
    # response is replayed to its own author only) and the owner of a USER_SCOPED key space.
    "USER_ID_FUNCTION": "idempotency.middleware.user_id_from_request",
    # ``f(request, view_func, view_args, view_kwargs) -> HttpResponse | None``: the view's own
    # authorization, run before any claim or replay; a response is the refusal to send.
    "AUTHORIZE_FUNCTION": "idempotency.middleware.authorize_view",
    # Paths (segment prefixes, case-insensitive) whose keys are scoped per user, not per tenant.
    "USER_SCOPED_PATH_PREFIXES": ("/api/v1/me",),
    "MAX_KEY_LENGTH": 255,
    # RFC 9457 ``type`` = base + code (``Idempotency.KeyRequired``), as tenancy builds it.
    # None → "<this server's origin>/problems/".
    "PROBLEM_TYPE_BASE_URL": None,
}


def get(name: str) -> Any:
    if name not in DEFAULTS:
        raise AttributeError(f"unknown idempotency setting {name!r}")
    return getattr(settings, f"IDEMPOTENCY_{name}", DEFAULTS[name])


def get_function(name: str) -> Callable[..., Any]:
    """Import the callable named by a ``*_FUNCTION`` setting (a dotted path or a callable)."""
    value = get(name)
    if callable(value):
        return value
    function: Callable[..., Any] = import_string(value)
    return function
