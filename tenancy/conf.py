"""``tenancy`` settings: defaults here, read at call time so ``override_settings`` works."""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # "app_label.ModelName" of the tenant; it must have a unique code field and an active flag.
    "TENANT_MODEL": "cluck.Farm",
    "TENANT_CODE_FIELD": "code",
    "TENANT_ACTIVE_FIELD": "is_active",
    # Dotted path to ``resolve(tenant, actor) -> FlockScopeResolution``.
    "FLOCK_SCOPE_RESOLVER": None,
    "SESSION_TOKEN_MINUTES": 15,
    "PERSONAL_TOKEN_MAX_DAYS": 366,
    # last_used_at is written at most this often per token, to keep reads cheap.
    "TOKEN_LAST_USED_RESOLUTION_SECONDS": 300,
    "LOGIN_RATE": "10/m",
}


def get(name: str) -> Any:
    if name not in DEFAULTS:
        raise AttributeError(f"unknown tenancy setting {name!r}")
    return getattr(settings, f"TENANCY_{name}", DEFAULTS[name])
