"""The settings every peer project shares: Cluck's middleware chain and token check in front
of the peer's MCP view, on the same PostgreSQL options as ``cluck/settings.py``.

Each peer's ``settings.py`` star-imports this and adds its app and URLs. ``DATABASE_URL``
names the peer's own database on the bench's embedded PostgreSQL (``bench/mcp_bench.py``).
"""

import os

import dj_database_url

SECRET_KEY = "bench-peers-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "django_ratelimit",
    "tenancy",
    "idempotency",
    "bench.peers.project.shops",
]
# cluck/settings.py's chain without mcp_tools' BodyCapMiddleware (mcp_tools needs mcp 2.x):
# the same token check and rate count (TenancyMiddleware), the same idempotency pass.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "tenancy.middleware.TenancyMiddleware",
    "idempotency.middleware.IdempotencyMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": []},
    }
]

DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0)}
# cluck/settings.py's options: a per-process psycopg pool and server-side binding.
if "postgresql" in DATABASES["default"]["ENGINE"]:
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        pool={"min_size": 2, "max_size": 20, "timeout": 5, "reconnect_timeout": 0.5},
        server_side_binding=True,
        prepare_threshold=5,
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

TENANCY_TENANT_MODEL = "peer_shops.Shop"
TENANCY_TENANT_NOUN = "shop"
# The bench sends thousands of calls from one token; the count still runs on every request.
BENCH_PEER_RATE = "10000000/m"
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]
# A project's own logging, as Cluck's servers run (LOG_LEVEL=ERROR). With a handler on the root
# logger, the basicConfig that mcp 1.x's FastMCP calls at import (a rich handler at INFO,
# logging every request) does nothing, as in any project that configures its logging.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["stderr"], "level": "ERROR"},
}

# bench/instr_bench.py: time-driven work out of the instruction count (bench/steady.py).
from bench.steady import steady  # noqa: E402

globals().update(steady(("BENCH_PEER_RATE", "TENANCY_API_RATE")))
