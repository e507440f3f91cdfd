"""System checks for ``tenancy`` configuration."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, ImproperlyConfigured
from django.db import connections
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.module_loading import import_string

from tenancy import conf
from tenancy.markers import handles_transactions_on

MIDDLEWARE_PATH = "tenancy.middleware.TenancyMiddleware"
IDEMPOTENCY_MIDDLEWARE = "idempotency.middleware.IdempotencyMiddleware"
AUTHENTICATION_MIDDLEWARE = "django.contrib.auth.middleware.AuthenticationMiddleware"


def middleware_index(path: str) -> int | None:
    """Where ``MIDDLEWARE`` installs the class at ``path`` — or a project's subclass of it.

    A project may extend the toolkit's middleware; an entry is compared by class, not by its
    dotted path. An entry that does not import is left to Django's own error.
    """
    base = import_string(path)
    for index, entry in enumerate(settings.MIDDLEWARE):
        if entry == path:
            return index
        try:
            installed = import_string(entry)
        except ImportError:
            continue
        if isinstance(installed, type) and issubclass(installed, base):
            return index
    return None


@checks.register(checks.Tags.security)
def check_middleware(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    tenancy_at = middleware_index(MIDDLEWARE_PATH)
    idempotency_at = (
        middleware_index(IDEMPOTENCY_MIDDLEWARE) if apps.is_installed("idempotency") else None
    )
    if tenancy_at is None:
        errors.append(
            checks.Error(
                f"{MIDDLEWARE_PATH} is not in MIDDLEWARE.",
                hint="Add it after AuthenticationMiddleware.",
                id="tenancy.E001",
            )
        )
    elif (auth_at := middleware_index(AUTHENTICATION_MIDDLEWARE)) is not None and (
        auth_at > tenancy_at
    ):
        # The documented order: the project's authentication is in place first, and a
        # middleware after this one finds a resolved toolkit bearer taken off the header.
        errors.append(
            checks.Error(
                "TenancyMiddleware runs before AuthenticationMiddleware.",
                hint="Move tenancy.middleware.TenancyMiddleware below "
                "django.contrib.auth.middleware.AuthenticationMiddleware in MIDDLEWARE.",
                id="tenancy.E010",
            )
        )
    if tenancy_at is not None and idempotency_at is not None and idempotency_at < tenancy_at:
        errors.append(
            checks.Error(
                "IdempotencyMiddleware runs before TenancyMiddleware.",
                hint="Idempotency keys are scoped by tenant: put TenancyMiddleware first.",
                id="tenancy.E002",
            )
        )
    return errors


@checks.register(checks.Tags.models)
def check_tenant_model(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TENANCY_TENANT_MODEL`` names an installed model with the code field and the active
    field (unless ``TENANCY_TENANT_ACTIVE_FIELD`` is ``None``: no flag, always active)."""
    from django.apps import apps

    label = conf.get("TENANT_MODEL")
    hint = (
        'Set TENANCY_TENANT_MODEL = "<app_label>.<ModelName>" to your tenant model (the account, '
        "store or organisation a membership belongs to), as you would AUTH_USER_MODEL, before "
        "the first migrate."
    )
    if not label:
        return [checks.Error("TENANCY_TENANT_MODEL is not set.", hint=hint, id="tenancy.E003")]
    try:
        model = apps.get_model(label, require_ready=False)
    except (ValueError, LookupError):
        return [
            checks.Error(
                f"TENANCY_TENANT_MODEL refers to {label!r}, which is not an installed model.",
                hint=hint,
                id="tenancy.E003",
            )
        ]
    errors: list[checks.CheckMessage] = []
    names = {field.name for field in model._meta.get_fields()}
    for setting, field_name, optional in (
        ("TENANCY_TENANT_CODE_FIELD", conf.get("TENANT_CODE_FIELD"), False),
        # None: the tenant model has no active flag (every tenant is always active).
        ("TENANCY_TENANT_ACTIVE_FIELD", conf.get("TENANT_ACTIVE_FIELD"), True),
    ):
        if field_name is None and optional:
            continue
        if field_name not in names:
            errors.append(
                checks.Error(
                    f"{label} has no field {field_name!r} ({setting}).",
                    hint=f"Add the field to {label}, or set {setting} to the field it has"
                    + (" (None when it has no active flag)." if optional else "."),
                    obj=model,
                    id="tenancy.E005",
                )
            )
    return errors


@checks.register(checks.Tags.models)
def check_membership_model(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TENANCY_MEMBERSHIP_MODEL`` names an ``AbstractMembership`` whose named fields exist."""
    from tenancy.members import get_membership_model

    hint = (
        'Set TENANCY_MEMBERSHIP_MODEL = "<app_label>.<ModelName>" to your membership model, '
        "which inherits tenancy.models.AbstractMembership, before the first migrate; or leave "
        "it unset for tenancy's own."
    )
    try:
        model = get_membership_model()
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), hint=hint, id="tenancy.E008")]
    targets = {
        "USER_FIELD": str(settings.AUTH_USER_MODEL),
        "TENANT_FIELD": conf.tenant_model_label(),
        "ROLE_FIELD": None,
    }
    errors: list[checks.CheckMessage] = []
    for attribute, target in targets.items():
        name = getattr(model, attribute)
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            field = None
        related = getattr(field, "related_model", None)
        if isinstance(related, str):
            # A lazy reference no installed model answers (a missing or misspelt
            # TENANCY_TENANT_MODEL): check_tenant_model reports it as tenancy.E003.
            continue
        points_elsewhere = target is not None and (
            related is None or related._meta.label_lower != target.lower()
        )
        if field is None or points_elsewhere:
            what = f"a foreign key to {target}" if target else "a field"
            errors.append(
                checks.Error(
                    f"{model._meta.label}.{attribute} = {name!r} is not {what}.",
                    hint=f"Set {attribute} to the name of the field that holds it.",
                    obj=model,
                    id="tenancy.E009",
                )
            )
    return errors


@checks.register(checks.Tags.models)
def check_scoped_managers(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """No model's default or base manager is tenant-scoped: Django's own machinery uses them."""
    from django.apps import apps

    from tenancy.scoping import is_tenant_scoped

    configs = app_configs if app_configs is not None else apps.get_app_configs()
    warnings: list[checks.CheckMessage] = []
    for model in (model for config in configs for model in config.get_models()):
        for role, manager in (("default", model._default_manager), ("base", model._base_manager)):
            if is_tenant_scoped(manager):
                warnings.append(
                    checks.Warning(
                        f"{model._meta.label}'s {role} manager {manager.name!r} is "
                        "tenant-scoped: admin, related managers, cascades and dumpdata use it, "
                        "and it refuses every query not narrowed to a tenant.",
                        hint="Declare a plain manager first (objects = models.Manager()) or "
                        f"name one in Meta.{role}_manager_name; keep the scoped one as a "
                        "second manager (scoped = TenantScopedManager(...)).",
                        obj=model,
                        id="tenancy.W001",
                    )
                )
    return warnings


@checks.register()
def check_roles(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TENANCY_ROLES`` loads, and every policy names only declared roles."""
    from tenancy.roles import EVERY_ROLE, active_roles, declared_policies

    path = conf.get("ROLES")
    misplaced = _app_label_path(path)
    try:
        roles = active_roles()
    except ImproperlyConfigured as exc:
        hint = (
            f"Write the full import path: TENANCY_ROLES = {misplaced!r}."
            if misplaced
            else "Point TENANCY_ROLES at a tenancy.RoleSet by its full import path, e.g. "
            '"myproject.orgs.roles.ROLES".'
        )
        return [checks.Error(str(exc), hint=hint, id="tenancy.E006")]
    if misplaced:
        # It imported only through a sys.path entry inside the project's package (a
        # cookiecutter manage.py or wsgi.py adds one): pytest, uvicorn and workers lack it.
        return [
            checks.Error(
                f"TENANCY_ROLES {path!r} starts with an app label, not the app's module "
                f"({misplaced.removesuffix(path.partition('.')[2]).rstrip('.')!r}).",
                hint=f"Write the full import path: TENANCY_ROLES = {misplaced!r}.",
                id="tenancy.E011",
            )
        ]
    errors: list[checks.CheckMessage] = []
    for policy in declared_policies():
        if policy.admits is EVERY_ROLE:
            continue
        unknown = sorted(set(policy.admits) - set(roles.names))  # type: ignore[arg-type]
        if unknown:
            errors.append(
                checks.Error(
                    f"Policy {policy.name!r} admits undeclared roles {unknown}.",
                    hint=f"Declared roles are {list(roles.names)} (TENANCY_ROLES).",
                    id="tenancy.E004",
                )
            )
    return errors


def _app_label_path(path: object) -> str | None:
    """``path`` written from an installed app's label where the app's module is longer
    (``"orgs.roles.ROLES"`` for the app ``myproject.orgs``): the full path, else ``None``."""
    if not isinstance(path, str) or "." not in path:
        return None
    head, _, rest = path.partition(".")
    for config in apps.get_app_configs():
        if config.label == head and config.name != head:
            return f"{config.name}.{rest}"
    return None


def routed_views(patterns: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from routed_views(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


@checks.register(checks.Tags.urls)
def check_atomic_requests(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Under ``ATOMIC_REQUESTS``, no routed async view is left to the request transaction.

    Django refuses such a view on every request ("You cannot use ATOMIC_REQUESTS with async
    views": a 500); this finds it at start-up instead, the toolkit's own views included should
    a project mount one through a wrapper that drops their ``handles_own_transactions``.
    Nothing else is reported: with the toolkit's views opted out and every keyed write run in
    its ``IdempotentUnit``'s transaction, ``ATOMIC_REQUESTS`` needs no action (docs/tenancy.md).
    """
    aliases = [
        alias for alias, database in connections.settings.items() if database.get("ATOMIC_REQUESTS")
    ]
    if not aliases:
        return []
    errors: list[checks.CheckMessage] = []
    for route, view in routed_views(get_resolver().url_patterns):
        if not iscoroutinefunction(view):
            continue
        wrapped = [alias for alias in aliases if not handles_transactions_on(view, alias)]
        if wrapped:
            name = f"{getattr(view, '__module__', '?')}.{getattr(view, '__qualname__', view)}"
            errors.append(
                checks.Error(
                    f"The async view {name} at {route!r} is not excluded from ATOMIC_REQUESTS "
                    f"on {', '.join(wrapped)}: Django answers every request to it with a 500.",
                    hint=(
                        "Decorate the view with tenancy.handles_own_transactions (or "
                        "django.db.transaction.non_atomic_requests(using=alias) for each of "
                        "those aliases) and open transactions inside it where it writes."
                    ),
                    obj=route,
                    id="tenancy.E007",
                )
            )
    return errors


@checks.register(checks.Tags.security)
def check_external_jwt(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``TENANCY_EXTERNAL_JWT``: known keys, an issuer, no symmetric or unsigned algorithm."""
    from tenancy.idp import external_jwt

    raw = conf.get("EXTERNAL_JWT")
    if not raw:
        return []
    errors: list[checks.CheckMessage] = []
    if not isinstance(raw, dict):
        return [checks.Error("TENANCY_EXTERNAL_JWT must be a dict.", id="tenancy.E020")]
    unknown = sorted(set(raw) - set(external_jwt.DEFAULTS))
    if unknown:
        errors.append(
            checks.Error(
                f"TENANCY_EXTERNAL_JWT has unknown keys {unknown}.",
                hint=f"Known keys: {sorted(external_jwt.DEFAULTS)}.",
                id="tenancy.E020",
            )
        )
    if not raw.get("ISSUER"):
        errors.append(
            checks.Error(
                "TENANCY_EXTERNAL_JWT names no ISSUER.",
                hint="Set ISSUER to the identity provider's issuer identifier.",
                id="tenancy.E020",
            )
        )
    configured = list(raw.get("ALGORITHMS", external_jwt.DEFAULTS["ALGORITHMS"]))
    refused = [name for name in configured if name not in external_jwt.allowed_algorithms([name])]
    if refused or not configured:
        errors.append(
            checks.Error(
                f"TENANCY_EXTERNAL_JWT ALGORITHMS allows {refused or 'nothing'}.",
                hint="List asymmetric algorithms only (RS256, PS256, ES256, EdDSA): 'none' and "
                "the HMAC ones are never accepted with a public key set.",
                id="tenancy.E021",
            )
        )
    # The key set decides who may act as whom: fetched over plain http, anyone on the path can
    # swap in their own keys. Discovery (no JWKS_URI) starts at the issuer's URL.
    fetched_from = raw.get("JWKS_URI") or raw.get("ISSUER")
    if (
        isinstance(fetched_from, str)
        and not fetched_from.startswith("https://")
        and not (settings.DEBUG)
    ):
        errors.append(
            checks.Error(
                f"TENANCY_EXTERNAL_JWT fetches its key set from {fetched_from!r}, not https.",
                hint="Serve the issuer's discovery document and key set over https (plain http "
                "is accepted only with DEBUG, for a local identity provider).",
                id="tenancy.E022",
            )
        )
    return errors


# Caches that talk to Redis through the redis package (the "redis" extra): Django's own backend,
# or any cache given tenancy's per-process pool.
REDIS_BACKEND = "django.core.cache.backends.redis.RedisCache"
REDIS_POOL = "tenancy.rates.redis_pool.ProcessConnectionPool"


@checks.register(checks.Tags.caches)
def check_redis_extra(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``tenancy.E030``: a cache on Redis without the redis package. Nothing imports it until
    the first count, so without this check every rate-limited request would be a 500."""
    import importlib.util

    if importlib.util.find_spec("redis") is not None:
        return []
    caches: dict[str, dict[str, Any]] = settings.CACHES
    return [
        checks.Error(
            f"CACHES[{alias!r}] uses Redis but the redis package is not installed.",
            hint="pip install 'cluck[redis]'",
            id="tenancy.E030",
        )
        for alias, cache in caches.items()
        if cache.get("BACKEND") == REDIS_BACKEND
        or (cache.get("OPTIONS") or {}).get("pool_class") == REDIS_POOL
    ]
