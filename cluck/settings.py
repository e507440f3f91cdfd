"""Django settings for the Cluck reference project.

Configuration comes from the environment (one place, here). With no ``DATABASE_URL`` the project
runs on an embedded PostgreSQL under ``var/``; ``DATABASE_URL=sqlite:///...`` also works.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
import django_stubs_ext

# Lets runtime code write admin.ModelAdmin[Model] and friends, as the type stubs do.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


def _env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def _env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = _env_bool("DEBUG", False)
# The development default is only usable on a loopback server; production sets SECRET_KEY.
SECRET_KEY = os.environ.get(
    "SECRET_KEY", "cluck-dev-insecure-key-change-me-in-production-0123456789"
)
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_ratelimit",
    "tenancy",
    "idempotency",
    "mcp_tools",
    "a2a_tools",
    "cluck",
    *_env_list("CLUCK_EXTRA_APPS", []),
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "mcp_tools.middleware.BodyCapMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "tenancy.middleware.TenancyMiddleware",
    "idempotency.middleware.IdempotencyMiddleware",
]

# Test-only apps (tests/testapps/*) are added by the test harness through these two variables.
CLUCK_EXTRA_URLCONFS = _env_list("CLUCK_EXTRA_URLCONFS", [])

ROOT_URLCONF = "cluck.urls"
WSGI_APPLICATION = "cluck.wsgi.application"
ASGI_APPLICATION = "cluck.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    from cluck.devdb import embedded_database_url

    return embedded_database_url(VAR_DIR / "pgdata")


DATABASES = {"default": dj_database_url.parse(_database_url(), conn_max_age=0)}
DATABASES["default"].setdefault("TEST", {})
if "postgresql" in DATABASES["default"]["ENGINE"]:
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    # A per-process psycopg pool: MCP tools run in worker threads, so one MCP call uses two
    # threads' connections; without a pool each would pay a fresh PostgreSQL connection.
    if _env_bool("CLUCK_DB_POOL", True):
        _options["pool"] = {
            "min_size": 2,
            "max_size": int(os.environ.get("CLUCK_DB_POOL_MAX", "20")),
            "timeout": 10,
        }
    # Server-side binding lets psycopg prepare a statement after a few runs on a connection, so
    # the hot queries (token check, idempotency claim) skip PostgreSQL's planner. Turn it off
    # behind a pooler that cannot carry prepared statements (PgBouncer < 1.21 in transaction
    # mode).
    if _env_bool("CLUCK_DB_SERVER_SIDE_BINDING", True):
        _options["server_side_binding"] = True
        _options.setdefault("prepare_threshold", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Rate-limit counters must be shared by every replica. By default tenancy counts them in its
# own table (tenancy.counters.CounterCache, installed when RATELIMIT_USE_CACHE is unset);
# CACHE_URL=redis://… moves the default cache and the counts to Redis.
_cache_url = os.environ.get("CACHE_URL")
if _cache_url and _cache_url.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
        }
    }
    RATELIMIT_USE_CACHE = "default"

# django-ratelimit warns about any backend it does not list (tenancy's counter cache included).
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]

# Test runs (and the servers they start) hash passwords fast; never set this in production.
if _env_bool("CLUCK_FAST_PASSWORD_HASHER", False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["tenancy.authentication.TenancyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["tenancy.permissions.IsTenantMember"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "cluck.api.errors.problem_exception_handler",
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Cluck API",
    "DESCRIPTION": "The poultry-farm reference API behind Cluck's tenant-scoped MCP tools.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Expands cluck.api.base.MethodRoutes (one path, several named routes) into the schema.
    "DEFAULT_GENERATOR_CLASS": "cluck.api.schema.CluckSchemaGenerator",
    "ENUM_NAME_OVERRIDES": {
        "SalesOrderStatusEnum": "cluck.models.SalesOrder.Status",
        "PaymentMethodEnum": "cluck.models.Payment.Method",
    },
}

# --- tenancy ---------------------------------------------------------------------------------
TENANCY_TENANT_MODEL = "cluck.Farm"
TENANCY_ROLES = "cluck.roles.FARM_ROLES"
# The farm's words: login takes farmCode; /me says flockRestricted and assignedFlockIds.
TENANCY_TENANT_NOUN = "farm"
TENANCY_ROW_NOUN = "flock"
TENANCY_ROW_SCOPE_RESOLVER = "cluck.scope.resolve_flock_scope"
TENANCY_PROBLEM_TYPE_BASE_URL = "https://cluck.dev/problems/"

# --- idempotency -----------------------------------------------------------------------------
IDEMPOTENCY_LEASE_SECONDS = float(os.environ.get("IDEMPOTENCY_LEASE_SECONDS", "30"))
IDEMPOTENCY_MAX_WAIT_SECONDS = float(os.environ.get("IDEMPOTENCY_MAX_WAIT_SECONDS", "30"))

IDEMPOTENCY_PROBLEM_TYPE_BASE_URL = "https://cluck.dev/problems/"

# --- mcp_tools -------------------------------------------------------------------------------
MCP_TOOLS_SERVER_NAME = "cluck"
MCP_TOOLS_REQUEST_THREADS = int(os.environ.get("CLUCK_REQUEST_THREADS", "32"))
MCP_TOOLS_SERVER_VERSION = "0.1.0"
MCP_TOOLS_ERROR_TRANSLATOR = "cluck.mcp_errors.translate_domain_error"
# Per bearer token, django-ratelimit syntax ("300/m"); shared by every replica.
MCP_TOOLS_RATE = os.environ.get("MCP_TOOLS_RATE", "300/m")
MCP_TOOLS_ALLOWED_ORIGINS = _env_list(
    "MCP_TOOLS_ALLOWED_ORIGINS",
    ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    "loggers": {
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
    },
}
