"""System checks for ``tenancy`` configuration."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

MIDDLEWARE_PATH = "tenancy.middleware.TenancyMiddleware"


@checks.register(checks.Tags.security)
def check_middleware(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    middleware = list(settings.MIDDLEWARE)
    if MIDDLEWARE_PATH not in middleware:
        errors.append(
            checks.Error(
                f"{MIDDLEWARE_PATH} is not in MIDDLEWARE.",
                hint="Add it after AuthenticationMiddleware.",
                id="tenancy.E001",
            )
        )
    elif "idempotency.middleware.IdempotencyMiddleware" in middleware and middleware.index(
        "idempotency.middleware.IdempotencyMiddleware"
    ) < middleware.index(MIDDLEWARE_PATH):
        errors.append(
            checks.Error(
                "IdempotencyMiddleware runs before TenancyMiddleware.",
                hint="Idempotency keys are scoped by tenant: put TenancyMiddleware first.",
                id="tenancy.E002",
            )
        )
    if not getattr(settings, "TENANCY_TENANT_MODEL", None):
        errors.append(
            checks.Error(
                "TENANCY_TENANT_MODEL is not set.",
                hint='Set it to your tenant model, e.g. "cluck.Farm".',
                id="tenancy.E003",
            )
        )
    return errors
