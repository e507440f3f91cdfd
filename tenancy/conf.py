"""``tenancy`` settings: defaults here, read at call time so ``override_settings`` works."""

from __future__ import annotations

from typing import Any, Final

from django.conf import settings

# Membership points at the tenant model through this setting, the way Django points at the
# user model through AUTH_USER_MODEL: ``"app_label.ModelName"``. It has no default; a missing
# or invalid value is system check ``tenancy.E003``.
TENANT_MODEL_SETTING: Final = "TENANCY_TENANT_MODEL"
# What a model relation names while the setting is missing: never a real model, so Django's own
# relation check reports it beside tenancy.E003 instead of anything crashing at import.
UNCONFIGURED_TENANT_MODEL: Final = "tenancy.TenantModelNotConfigured"
# The project's own membership table, like AUTH_USER_MODEL: "app_label.ModelName" of a model
# inheriting tenancy.models.AbstractMembership. Unset: tenancy's own ``tenancy.Membership``.
MEMBERSHIP_MODEL_SETTING: Final = "TENANCY_MEMBERSHIP_MODEL"
DEFAULT_MEMBERSHIP_MODEL: Final = "tenancy.Membership"
# The cache alias tenancy installs for rate counts when a project configures none.
DEFAULT_COUNTER_CACHE: Final = "tenancy_counters"
# django-ratelimit's warning for any cache backend outside its short list of supported ones.
RATELIMIT_UNLISTED_BACKEND_CHECK: Final = "django_ratelimit.W001"

DEFAULTS: dict[str, Any] = {
    "TENANT_MODEL": None,
    # The tenant model's unique, human-typed code (login, commands) and its active flag; an
    # active field of None: the model has no such flag and every tenant is always active.
    "TENANT_CODE_FIELD": "code",
    "TENANT_ACTIVE_FIELD": "is_active",
    # What the project calls a tenant, for messages and command-line aliases ("store", "school").
    "TENANT_NOUN": "tenant",
    # What a row of the row scope is ("project", "site"), for the ``me`` fields.
    "ROW_NOUN": "row",
    # Dotted path to a tenancy.RoleSet; None → tenancy.roles.DEFAULT_ROLES.
    "ROLES": None,
    # True: a member's Django groups named like a declared role (or its stored string) raise
    # the membership's role to the highest of them, in every tenant the user belongs to.
    "ROLES_FROM_GROUPS": False,
    # Dotted path to ``resolve(*, tenant, actor) -> (unrestricted, row_ids)``; None → every
    # actor is unrestricted.
    "ROW_SCOPE_RESOLVER": None,
    # RFC 9457 ``type`` = base + code. None → "<this server's origin>/problems/".
    "PROBLEM_TYPE_BASE_URL": None,
    "SESSION_TOKEN_MINUTES": 15,
    # Personal tokens created through the REST API expire: after the default when the caller
    # names no lifetime, never later than the maximum.
    "PERSONAL_TOKEN_DEFAULT_DAYS": 90,
    "PERSONAL_TOKEN_MAX_DAYS": 366,
    # Live (unrevoked, unexpired) personal tokens one membership may hold; creating one more
    # is 409 Token.LimitReached.
    "MAX_PERSONAL_TOKENS": 20,
    # Requests per membership (TenancyMiddleware; views marked counts_own_rate skip it).
    "API_RATE": "300/m",
    # last_used_at is written at most this often per token, to keep reads cheap.
    "TOKEN_LAST_USED_RESOLUTION_SECONDS": 300,
    "LOGIN_RATE": "10/m",
    # Reverse proxies (addresses or networks, a list or a comma-separated string) whose
    # X-Forwarded-For is believed when rate limits find the client's address
    # (tenancy.rates.addresses). Empty: the connection's peer is the client.
    "TRUSTED_PROXIES": (),
    # JWT access tokens (RFC 9068) from an external identity provider: a dict of
    # tenancy.idp.external_jwt.DEFAULTS keys, at least ISSUER. None: no external issuer.
    "EXTERNAL_JWT": None,
    # Row-level security under tool calls (tenancy.rls): on unless turned off, for the models
    # declared here ({"app_label.Model": "tenant_field"}) or by tenancy.rls.declare; the role
    # tool calls take, and the setting (``<namespace>.<name>``) that carries their tenant.
    "RLS": True,
    "RLS_MODELS": {},
    "RLS_ROLE": "tenancy_tools",
    "RLS_SETTING": "tenancy.tenant",
}


def get(name: str) -> Any:
    if name not in DEFAULTS:
        raise AttributeError(f"unknown tenancy setting {name!r}")
    return getattr(settings, f"TENANCY_{name}", DEFAULTS[name])


def tenant_is_active(tenant: Any) -> bool:
    """The tenant's active flag (``TENANCY_TENANT_ACTIVE_FIELD``): the one reading of it, so a
    tenant model without such a flag (the setting is ``None``) has every tenant active."""
    field = get("TENANT_ACTIVE_FIELD")
    return True if field is None else bool(getattr(tenant, field))


def ratelimit_enabled() -> bool:
    """django-ratelimit's ``RATELIMIT_ENABLE`` (default on): off, nothing is counted."""
    return bool(getattr(settings, "RATELIMIT_ENABLE", True))


def rate_cache_alias() -> str:
    """The cache rate limits count on: django-ratelimit's ``RATELIMIT_USE_CACHE``."""
    return str(getattr(settings, "RATELIMIT_USE_CACHE", "default"))


def tenant_model_label() -> str:
    """``TENANCY_TENANT_MODEL``, or a placeholder that no model answers to (check E003)."""
    value = get("TENANT_MODEL")
    return value if isinstance(value, str) and value.count(".") == 1 else UNCONFIGURED_TENANT_MODEL


def membership_model_label() -> str:
    """``TENANCY_MEMBERSHIP_MODEL``, or tenancy's own membership model."""
    return str(getattr(settings, MEMBERSHIP_MODEL_SETTING, DEFAULT_MEMBERSHIP_MODEL))


def install_membership_model_default() -> None:
    """Migrations name ``settings.TENANCY_MEMBERSHIP_MODEL`` (as they name AUTH_USER_MODEL,
    which Django's global settings define): give it its default before any migration loads."""
    if not hasattr(settings, MEMBERSHIP_MODEL_SETTING):
        setattr(settings, MEMBERSHIP_MODEL_SETTING, DEFAULT_MEMBERSHIP_MODEL)


def install_counter_cache_default() -> None:
    """Count rate limits on tenancy's shared counter table unless the project chose a cache.

    django-ratelimit counts on ``caches[RATELIMIT_USE_CACHE]`` (default ``"default"``), and
    Django's default cache is per-process memory: with several workers or replicas every
    limit would be multiplied. A project that sets ``RATELIMIT_USE_CACHE`` (e.g. to Redis in
    production) keeps its choice; otherwise this adds the ``tenancy_counters`` alias
    (``tenancy.rates.counters.CounterCache``, one table shared by every process) and points
    django-ratelimit at it, whose system check would otherwise warn (W001) that the backend is
    not on its list. Runs from ``TenancyConfig.ready()``, before any cache is used.
    """
    if hasattr(settings, "RATELIMIT_USE_CACHE"):
        return
    caches = dict(settings.CACHES)
    caches.setdefault(
        DEFAULT_COUNTER_CACHE,
        {"BACKEND": "tenancy.rates.counters.CounterCache", "LOCATION": "tenancy_rate_counter"},
    )
    settings.CACHES = caches
    settings.RATELIMIT_USE_CACHE = DEFAULT_COUNTER_CACHE
    # django_ratelimit.W001 says only that a backend is not on its fixed list; E003 is the
    # check that matters (a cache not shared or not atomic), and this one is shared and
    # atomic. Quiet the warning for the backend tenancy chose, never for the project's own.
    silenced = list(settings.SILENCED_SYSTEM_CHECKS)
    if RATELIMIT_UNLISTED_BACKEND_CHECK not in silenced:
        settings.SILENCED_SYSTEM_CHECKS = [*silenced, RATELIMIT_UNLISTED_BACKEND_CHECK]
    from django.core.cache import caches as handler

    # CacheHandler reads CACHES once, on first use; forget a read that happened already.
    handler.__dict__.pop("settings", None)
