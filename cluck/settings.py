"""Django settings for the Cluck reference project.

Configuration comes from the environment (one place, here). With no ``DATABASE_URL`` the project
runs on an embedded PostgreSQL under ``var/``; ``DATABASE_URL=sqlite:///...`` also works.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import dj_database_url
import django
import django_stubs_ext

from cluck.devdb import var_dir
from tenancy.oauth.defaults import oauth2_provider_settings

# Lets runtime code write admin.ModelAdmin[Model] and friends, as the type stubs do.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = var_dir()  # var/, or $CLUCK_VAR_DIR


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
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"]
ALLOWED_HOSTS = _env_list("ALLOWED_HOSTS", LOOPBACK_HOSTS)


def _installation_secret_key(path: Path) -> str:
    """This installation's own key: generated once into ``path`` (mode 0600), then reused.

    Written to a temporary file and linked into place, so processes starting together all
    read the one key that won.
    """
    from django.core.management.utils import get_random_secret_key

    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")
        try:
            with os.fdopen(fd, "w") as handle:  # mkstemp creates it 0600
                handle.write(get_random_secret_key())
            try:
                os.link(temporary, path)
            except FileExistsError:
                pass  # another process was first: use its key
        finally:
            os.unlink(temporary)
    return path.read_text().strip()


# SECRET_KEY signs sessions (the admin), password resets and CSRF tokens. Decision: a server
# reachable under any name but loopback (ALLOWED_HOSTS beyond LOOPBACK_HOSTS) is production
# and refuses to start without SECRET_KEY in its environment, DEBUG or not; a loopback one
# (./scripts/serve, tests) uses a key generated for this installation under var/. No key is
# committed to the repository.
SECRET_KEY = os.environ.get("SECRET_KEY", "")
SECRET_KEY_FILE: Path | None = None
if not SECRET_KEY:
    if set(ALLOWED_HOSTS) - set(LOOPBACK_HOSTS):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "SECRET_KEY is not set. A server for hosts other than loopback "
            f"({', '.join(sorted(set(ALLOWED_HOSTS) - set(LOOPBACK_HOSTS)))}) needs its own: "
            "set SECRET_KEY in the environment (50+ random characters)."
        )
    SECRET_KEY_FILE = VAR_DIR / "secret_key"
    SECRET_KEY = _installation_secret_key(SECRET_KEY_FILE)

INSTALLED_APPS = [
    "cluck.apps.CluckAdminConfig",  # django.contrib.admin, sign-in budgeted (cluck/admin_site.py)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and Redoc served from here, not a CDN
    "django_ratelimit",
    "csp",  # Content-Security-Policy (CLUCK_CSP)
    "tenancy",
    # OAuth 2.1 sign-in for MCP clients (Claude connectors): django-oauth-toolkit as the
    # authorization server, tenancy.oauth as its glue to tenancy.
    "oauth2_provider",
    "tenancy.oauth",
    "idempotency",
    "mcp_tools",
    "a2a_tools",
    "cluck",
    *_env_list("CLUCK_EXTRA_APPS", []),
]

# --- tasks: what runs MCP tasks and A2A long-running skills (docs/deploying.md "Workers") -----
# CLUCK_TASK_ENGINE: "db" (default): Django's tasks framework on the database backend, run by
# `manage.py db_worker` (./scripts/serve starts one); "rq": the same jobs on Redis (RQ), run by
# `manage.py rqworker --job-class django_tasks_rq.Job mcp_tools`, Redis at CLUCK_TASK_REDIS_URL;
# "celery": the same jobs on Celery (django-tasks-fennel's backend, the farm's app cluck.celery),
# run by `celery -A cluck.celery worker -Q mcp_tools`, the broker at CLUCK_TASK_REDIS_URL;
# "in_process": threads of the web process (development and the in-process test suite only).
CLUCK_TASK_ENGINE = os.environ.get("CLUCK_TASK_ENGINE", "db")
if CLUCK_TASK_ENGINE not in ("db", "rq", "celery", "in_process"):
    raise ValueError("CLUCK_TASK_ENGINE must be db, rq, celery or in_process")
_task_redis_url = os.environ.get("CLUCK_TASK_REDIS_URL", "redis://127.0.0.1:6379/0")
# Django 6.0 has the tasks framework built in (django.tasks); 5.2 has it from the django-tasks
# backport, an app of its own. django-tasks-db serves either.
if django.VERSION < (6, 0):
    INSTALLED_APPS += ["django_tasks"]
INSTALLED_APPS += ["django_tasks_db"]
TASKS: dict[str, dict[str, object]] = {
    "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default", "mcp_tools"]}
}
if CLUCK_TASK_ENGINE == "rq":
    INSTALLED_APPS += ["django_rq", "django_tasks_rq"]
    TASKS["default"] = {
        "BACKEND": "django_tasks_rq.RQBackend",
        "QUEUES": ["default", "mcp_tools"],
    }
    _rq_queue = {
        "URL": _task_redis_url,
        "DEFAULT_TIMEOUT": -1,  # mcp_tools bounds a task (MCP_TOOLS_TASK_TIMEOUT_SECONDS)
    }
    # Every queue the backend accepts must be an RQ queue ("default": django-tasks' own).
    RQ_QUEUES = {"default": _rq_queue, "mcp_tools": _rq_queue}
if CLUCK_TASK_ENGINE == "celery":
    INSTALLED_APPS += ["django_tasks_fennel"]
    TASKS["default"] = {
        "BACKEND": "django_tasks_fennel.CeleryBackend",
        "QUEUES": ["default", "mcp_tools"],
    }
    # Read by cluck.celery (namespace CELERY), as a team's own app reads its settings.
    CELERY_BROKER_URL = _task_redis_url
    # mcp_tools keeps every task's state in its own store; the result backend only serves
    # django-tasks' get_result() (and silences the backend's check that asks for one).
    CELERY_RESULT_BACKEND = _task_redis_url
    CELERY_RESULT_EXTENDED = True  # the backend's check asks for it (worker ids on results)
    CELERY_RESULT_EXPIRES = 3600
    CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
MCP_TOOLS_TASK_ENGINE = "in_process" if CLUCK_TASK_ENGINE == "in_process" else "django_tasks"
MCP_TOOLS_TASK_QUEUE = "mcp_tools"
# A running task renews this lease; past it its worker is presumed lost (retried or failed).
MCP_TOOLS_TASK_LEASE_SECONDS = float(os.environ.get("MCP_TOOLS_TASK_LEASE_SECONDS", "60"))

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "mcp_tools.serving.middleware.BodyCapMiddleware",
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


def _prepare_threshold() -> int | None:
    """``CLUCK_DB_PREPARE_THRESHOLD``: psycopg's ``prepare_threshold``; unset, empty or ``off``:
    ``None`` (never prepare)."""
    raw = os.environ.get("CLUCK_DB_PREPARE_THRESHOLD", "").strip().lower()
    if raw in ("", "off", "none"):
        return None
    return int(raw)


DATABASES = {"default": dj_database_url.parse(_database_url(), conn_max_age=0)}
DATABASES["default"].setdefault("TEST", {})
if "postgresql" in DATABASES["default"]["ENGINE"]:
    # Django's backend, with pooled connections probed before use (cluck/postgres/base.py):
    # after a PostgreSQL restart the very first request succeeds.
    DATABASES["default"]["ENGINE"] = "cluck.postgres"
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    # A per-process psycopg pool: MCP tools run in worker threads, so one MCP call uses two
    # threads' connections; without a pool each would pay a fresh PostgreSQL connection.
    if _env_bool("CLUCK_DB_POOL", True):
        _options["pool"] = {
            "min_size": 2,
            "max_size": int(os.environ.get("CLUCK_DB_POOL_MAX", "20")),
            # How long a request waits for a connection (pool exhausted, or the database
            # unreachable) before its 503.
            "timeout": float(os.environ.get("CLUCK_DB_POOL_TIMEOUT", "5")),
            # A failed background connection attempt is retried for half a second, not with
            # growing back-off for 5 minutes: while PostgreSQL is down the pool then opens a
            # connection when a request asks for one, so the first request after it returns
            # gets a connection at once instead of waiting out the back-off (and a 503).
            "reconnect_timeout": 0.5,
        }
    # Server-side binding: parameters travel apart from the SQL (one unnamed statement per
    # query, which any pooler carries).
    if _env_bool("CLUCK_DB_SERVER_SIDE_BINDING", True):
        _options["server_side_binding"] = True
    # No named prepared statements unless the operator opts in: they live in one server
    # session, and behind a pooler in transaction mode (PgBouncer < 1.21, or without
    # max_prepared_statements) the next transaction lands on another session:
    # DuplicatePreparedStatement "_pg3_0" / InvalidSqlStatementName (issue 22).
    # CLUCK_DB_PREPARE_THRESHOLD=5 prepares a query after its fifth run on a connection (the
    # hot token check and idempotency claim then skip the planner): direct to PostgreSQL, or
    # behind a pooler that carries prepared statements. docs/deploying.md#pgbouncer
    _options["prepare_threshold"] = _prepare_threshold()
    # Django's .iterator() opens a WITH HOLD cursor that outlives its transaction: a session
    # the pooler may already have lent to another client. CLUCK_DB_SERVER_SIDE_CURSORS=1 when
    # every connection is a session of its own.
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = not _env_bool(
        "CLUCK_DB_SERVER_SIDE_CURSORS", False
    )
# A host project's setting the farm can take on (cookiecutter-django's default): every other
# view in a transaction per request. The toolkit's views run outside it either way
# (tenancy.handles_own_transactions); tests/test_atomic_requests.py serves the farm with it.
DATABASES["default"]["ATOMIC_REQUESTS"] = _env_bool("CLUCK_ATOMIC_REQUESTS", False)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Rate-limit counters must be shared by every replica. By default tenancy counts them in its
# own table (tenancy.rates.counters.CounterCache, installed when RATELIMIT_USE_CACHE is unset);
# CACHE_URL=redis://… moves the default cache and the counts to Redis.
_cache_url = os.environ.get("CACHE_URL")
if _cache_url and _cache_url.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _cache_url,
            # One pool per process, not a connection per request (tenancy/rates/redis_pool.py).
            "OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},
        }
    }
    RATELIMIT_USE_CACHE = "default"

SILENCED_SYSTEM_CHECKS = [
    # django-ratelimit warns about any backend it does not list (tenancy's counter cache
    # included).
    "django_ratelimit.W001",
    # django-oauth-toolkit warns that http redirect URIs are allowed: they must be, for native
    # clients' loopback callbacks (RFC 8252 §7.3), and tenancy.oauth's validator refuses every
    # http redirect URI whose host is not loopback.
    "oauth2_provider.W008",
]

# Test runs (and the servers they start) hash passwords fast; never set this in production.
if _env_bool("CLUCK_FAST_PASSWORD_HASHER", False):
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# POSTs to /admin/login/ per client address (each wrong password costs a password hash).
CLUCK_ADMIN_LOGIN_RATE = os.environ.get("CLUCK_ADMIN_LOGIN_RATE", "10/m")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
CLUCK_SERVE_STATIC = _env_bool("CLUCK_SERVE_STATIC", True)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["tenancy.drf_authentication.TenancyAuthentication"],
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
    # Swagger UI and Redoc from the drf-spectacular-sidecar package, served by this server
    # (cluck/urls.py), never swagger-ui-dist@latest from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
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
        "TokenKindEnum": "tenancy.models.AccessToken.Kind",
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
# Row-level security under every tool call (tenancy.rls, issue 35): each farm-owned model is
# declared in cluck.apps, and PostgreSQL refuses a tool another farm's rows whatever its queries
# forget. On by default; CLUCK_RLS=0 is for a database where the tools' role cannot be created
# (docs/deploying.md has the DBA's SQL block): off, no tool call runs a statement more or takes
# a transaction it did not take before, and an async read tool is awaited on the event loop.
TENANCY_RLS = _env_bool("CLUCK_RLS", True)
TENANCY_RLS_ROLE = "cluck_tools"
TENANCY_RLS_SETTING = "cluck.farm"
# Requests per membership (TenancyMiddleware; /mcp has its own), shared by every replica.
TENANCY_API_RATE = os.environ.get("TENANCY_API_RATE", "300/m")

# --- tenancy.oauth (OAuth 2.1 for MCP clients) -------------------------------------------------
# CLUCK_PUBLIC_URL is the public HTTPS origin (e.g. https://farm.example): the OAuth issuer, and
# with /mcp the one resource every access token is bound to. Unset (development), both are
# derived from each request, which behind a proxy needs CLUCK_TRUST_PROXY_HEADERS.
CLUCK_PUBLIC_URL = os.environ.get("CLUCK_PUBLIC_URL", "").rstrip("/")
OAUTH2_PROVIDER = oauth2_provider_settings(
    issuer=CLUCK_PUBLIC_URL or None,
    resource=f"{CLUCK_PUBLIC_URL}/mcp" if CLUCK_PUBLIC_URL else None,
    SCOPES={
        "mcp:read": "Read this farm's flocks, production, stock, orders and balances",
        "mcp:write": "Record production, customers, orders and payments in this farm",
    },
)
# The farm has no login page of its own: the consent page signs people in with tenancy.oauth's
# email-and-password page. A project with a login (allauth, SSO) leaves this out, and its
# LOGIN_URL signs people in.
TENANCY_OAUTH_SIGN_IN = "toolkit"
if CLUCK_PUBLIC_URL:
    CSRF_TRUSTED_ORIGINS = [CLUCK_PUBLIC_URL]
# The reverse proxies whose X-Forwarded-For names the client every per-address limit keys on
# (tenancy.rates.addresses): addresses or networks, comma-separated. Behind a proxy, without it
# every client shares the proxy's address, and so one budget.
TENANCY_TRUSTED_PROXIES = _env_list("TENANCY_TRUSTED_PROXIES", [])
# An external identity provider (Keycloak, Okta, Entra ID, Auth0) whose RFC 9068 JWT access
# tokens /mcp and /a2a accept beside the farm's own (tenancy.idp.external_jwt; docs/tenancy.md):
# its "tenant" claim names the farm by code, "sub" the member by email.
if os.environ.get("CLUCK_EXTERNAL_JWT_ISSUER"):
    TENANCY_EXTERNAL_JWT = {
        "ISSUER": os.environ["CLUCK_EXTERNAL_JWT_ISSUER"],
        "JWKS_URI": os.environ.get("CLUCK_EXTERNAL_JWT_JWKS_URI") or None,
        "RESOURCE": f"{CLUCK_PUBLIC_URL}/mcp" if CLUCK_PUBLIC_URL else None,
        "AUDIENCE": os.environ.get("CLUCK_EXTERNAL_JWT_AUDIENCE") or None,
        "USER_LOOKUP": "email",
    }
if _env_bool("CLUCK_TRUST_PROXY_HEADERS", False):
    # Only behind a proxy that sets these headers itself (and strips clients' copies).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    USE_X_FORWARDED_HOST = True

# --- HTTPS (docs/deploying.md: the production environment) -----------------------------------
# Served at an https CLUCK_PUBLIC_URL, the farm is HTTPS only: secure cookies, plain-http
# requests redirected (the probes excepted: a load balancer asks them over http), and HSTS for a
# year on this host and its subdomains. Each is settable by its Django name in the environment.
_HTTPS = CLUCK_PUBLIC_URL.startswith("https://")
SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", _HTTPS)
CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", _HTTPS)
# Behind a TLS-terminating proxy this needs CLUCK_TRUST_PROXY_HEADERS (else every request looks
# like http and is redirected again).
SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", _HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 365 * 24 * 3600 if _HTTPS else 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = _env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", _HTTPS)
# Preloading commits every browser to HTTPS for the domain for months: asked for, never assumed.
SECURE_HSTS_PRELOAD = _env_bool("SECURE_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# Content-Security-Policy on every response (django-csp): CLUCK_CSP is the policy as the header
# spells it ("" sends none), CLUCK_CSP_REPORT_ONLY=1 sends it as Content-Security-Policy-Report-
# Only. The default fits the farm's pages: no inline script anywhere (Swagger UI loads its
# initialiser as a file), inline styles allowed (the OAuth pages, Swagger UI), never framed.
# No form-action: the consent form's answer is a redirect to the client's own callback.
# /api/redoc/ is exempt: Redoc starts from an inline script. So are /mcp and /a2a, whose JSON
# no browser renders (a header fewer on the hot path).
CLUCK_CSP = os.environ.get(
    "CLUCK_CSP",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
)


def _csp(policy: str) -> dict[str, Any] | None:
    directives = {
        name: sources
        for name, *sources in (part.split() for part in policy.split(";") if part.strip())
    }
    if not directives:
        return None
    return {"EXCLUDE_URL_PREFIXES": ["/api/redoc/", "/mcp", "/a2a"], "DIRECTIVES": directives}


if _env_bool("CLUCK_CSP_REPORT_ONLY", False):
    CONTENT_SECURITY_POLICY = None
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _csp(CLUCK_CSP)
else:
    CONTENT_SECURITY_POLICY = _csp(CLUCK_CSP)
# Test only (refused by system check tenancy_oauth.E001 on a public deployment).
TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS = _env_bool(
    "CLUCK_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS", False
)

# --- idempotency -----------------------------------------------------------------------------
IDEMPOTENCY_LEASE_SECONDS = float(os.environ.get("IDEMPOTENCY_LEASE_SECONDS", "30"))
IDEMPOTENCY_MAX_WAIT_SECONDS = float(os.environ.get("IDEMPOTENCY_MAX_WAIT_SECONDS", "30"))

IDEMPOTENCY_PROBLEM_TYPE_BASE_URL = "https://cluck.dev/problems/"

# --- mcp_tools -------------------------------------------------------------------------------
MCP_TOOLS_SERVER_NAME = "cluck"
MCP_TOOLS_REQUEST_THREADS = int(os.environ.get("CLUCK_REQUEST_THREADS", "32"))
MCP_TOOLS_SERVER_VERSION = "0.1.0"
MCP_TOOLS_ERROR_TRANSLATOR = "cluck.mcp_errors.translate_domain_error"
# Per membership (every token of one member shares it), django-ratelimit syntax ("300/m");
# shared by every replica.
MCP_TOOLS_RATE = os.environ.get("MCP_TOOLS_RATE", "300/m")
# A running task renews its lease; past it (its process was killed) the task reads as failed.
MCP_TOOLS_TASK_LEASE_SECONDS = float(os.environ.get("MCP_TOOLS_TASK_LEASE_SECONDS", "60"))
# Seconds a request body may take to arrive in full (mcp_tools.serving.asgi answers 408 after).
MCP_TOOLS_BODY_READ_SECONDS = float(os.environ.get("MCP_TOOLS_BODY_READ_SECONDS", "30"))
MCP_TOOLS_ALLOWED_ORIGINS = _env_list(
    "MCP_TOOLS_ALLOWED_ORIGINS",
    ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)

# --- observability (docs/operating.md) -------------------------------------------------------
# /metrics is a 404 unless a guard is set: the scraper's bearer token and/or its addresses.
MCP_TOOLS_METRICS_TOKEN = os.environ.get("MCP_TOOLS_METRICS_TOKEN") or None
MCP_TOOLS_METRICS_ALLOWED_IPS = _env_list("MCP_TOOLS_METRICS_ALLOWED_IPS", [])
# Optional fields of the per-call log record ("argument_names", "client", "email").
MCP_TOOLS_CALL_LOG_EXTRA_FIELDS = _env_list("MCP_TOOLS_CALL_LOG_EXTRA_FIELDS", [])
# The operator's kit (docs/operating.md): the stored call audit (purge it with
# `manage.py purge_mcp_audit --older-than 90d`), the switches a farm's admins set over REST
# (/api/v1/mcp/switches/), and who may read the audit and set them.
MCP_TOOLS_AUDIT = os.environ.get("MCP_TOOLS_AUDIT", "1") == "1"
MCP_TOOLS_TENANT_SWITCHES = (
    os.environ.get("MCP_TOOLS_TENANT_SWITCHES", "mcp_tools.operator.switches.stored_switches")
    or None
)
# A switch flipped over REST reaches every other process within this (its own at once).
MCP_TOOLS_TENANT_SWITCHES_CACHE_SECONDS = float(
    os.environ.get("MCP_TOOLS_TENANT_SWITCHES_CACHE_SECONDS", "1")
)
MCP_TOOLS_TENANT_RATE = os.environ.get("MCP_TOOLS_TENANT_RATE") or None
MCP_TOOLS_OPERATOR_POLICY = "cluck.roles.ADMIN_ONLY"
# subscriptions/listen (2026-07-28): a client hears a new daily entry of its flocks and days
# (cluck.resource_changes). Off by default until the farm's clients use it (docs/mcp_tools.md).
MCP_TOOLS_SUBSCRIPTIONS = _env_bool("MCP_TOOLS_SUBSCRIPTIONS", False)
# CLUCK_OTEL=1: OpenTelemetry traces of requests and tool calls (cluck/telemetry.py).
CLUCK_OTEL = _env_bool("CLUCK_OTEL", False)

_LOG_LEVEL = os.environ.get("LOG_LEVEL", "WARNING")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "mcp_tools.observability.JsonFormatter", "static": {"service": "cluck"}},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            # CLUCK_LOG_FORMAT=json: one JSON object per line (the per-call records included).
            **({"formatter": "json"} if os.environ.get("CLUCK_LOG_FORMAT") == "json" else {}),
        }
    },
    "root": {"handlers": ["console"], "level": _LOG_LEVEL},
    "loggers": {
        "django.server": {"handlers": ["console"], "level": "INFO", "propagate": False},
        # One record per tool call at INFO (WARNING: rate limited, overloaded, timed out).
        "mcp_tools.calls": {"level": os.environ.get("CLUCK_CALL_LOG_LEVEL", _LOG_LEVEL)},
    },
}
