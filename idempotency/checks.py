"""System checks for the ``IDEMPOTENCY_*`` settings and the middleware position."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from idempotency import conf
from idempotency.unit import is_duration

MIDDLEWARE_PATH = "idempotency.middleware.IdempotencyMiddleware"

_DURATIONS = (
    ("LEASE_SECONDS", False, "idempotency.E001"),
    ("MAX_WAIT_SECONDS", True, "idempotency.E002"),
    ("POLL_INTERVAL_SECONDS", False, "idempotency.E003"),
    ("RETENTION_HOURS", False, "idempotency.E004"),
)
_FUNCTIONS = (
    ("TENANT_ID_FUNCTION", "idempotency.E005", "f(request) -> str | None"),
    ("USER_ID_FUNCTION", "idempotency.E006", "f(request) -> str | None"),
    (
        "AUTHORIZE_FUNCTION",
        "idempotency.E009",
        "f(request, view_func, view_args, view_kwargs) -> HttpResponse | None",
    ),
)


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for name, zero_allowed, check_id in _DURATIONS:
        value = conf.get(name)
        if not is_duration(value, zero_allowed=zero_allowed):
            bound = ">= 0" if zero_allowed else "> 0"
            messages.append(
                checks.Error(
                    f"IDEMPOTENCY_{name} must be a finite number {bound}, not {value!r}.",
                    hint=f"Default: {conf.DEFAULTS[name]!r}.",
                    id=check_id,
                )
            )
    for name, check_id, signature in _FUNCTIONS:
        value = conf.get(name)
        if callable(value):
            continue
        try:
            function = import_string(value) if isinstance(value, str) else None
        except ImportError:
            function = None
        if not callable(function):
            messages.append(
                checks.Error(
                    f"IDEMPOTENCY_{name} ({value!r}) is not an importable callable.",
                    hint=f"A dotted path to {signature}.",
                    id=check_id,
                )
            )
    max_key = conf.get("MAX_KEY_LENGTH")
    if not isinstance(max_key, int) or isinstance(max_key, bool) or max_key < 1:
        messages.append(
            checks.Error(
                f"IDEMPOTENCY_MAX_KEY_LENGTH must be a positive integer, not {max_key!r}.",
                id="idempotency.E007",
            )
        )
    prefixes = conf.get("USER_SCOPED_PATH_PREFIXES")
    if isinstance(prefixes, str) or not all(
        isinstance(p, str) and p.startswith("/") for p in prefixes
    ):
        messages.append(
            checks.Error(
                "IDEMPOTENCY_USER_SCOPED_PATH_PREFIXES must be a sequence of paths starting "
                "with '/'.",
                id="idempotency.E008",
            )
        )
    return messages


@checks.register()
def check_middleware(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``idempotency.W001``: a middleware after ``IdempotencyMiddleware`` has a
    ``process_view`` hook, which never runs for a keyed request.

    Judged on ``MIDDLEWARE`` as in effect (a later settings module may append to it) and on
    what each later entry does: one without ``process_view`` (django-debug-toolbar's, which
    a cookiecutter-django ``local.py`` appends) loses nothing.
    """
    middleware = list(settings.MIDDLEWARE)
    if MIDDLEWARE_PATH not in middleware:
        return []
    later = middleware[middleware.index(MIDDLEWARE_PATH) + 1 :]
    skipped = [entry for entry in later if _has_process_view(entry)]
    if not skipped:
        return []
    return [
        checks.Warning(
            f"IdempotencyMiddleware comes before {', '.join(skipped)}, whose process_view "
            "never runs for a keyed request.",
            hint=(
                "IdempotencyMiddleware calls the view itself (inside its transaction). Move it "
                "after them (last), in the settings module that appends them if there is one."
            ),
            id="idempotency.W001",
        )
    ]


def _has_process_view(path: str) -> bool:
    try:
        middleware = import_string(path)
    except ImportError:
        return False  # Django reports it when it loads MIDDLEWARE
    return callable(getattr(middleware, "process_view", None))
