"""Settings of the shop: what ``django-admin startproject shop`` wrote, plus the toolkit.

Every line the toolkit needs is marked ``# toolkit``; the rest is Django's default.
"""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "django-insecure-only-for-local-development"
DEBUG = True
ALLOWED_HOSTS: list[str] = []

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",  # toolkit
    "django_ratelimit",  # toolkit (its system checks vet the rate-limit cache)
    "tenancy",  # toolkit
    "idempotency",  # toolkit
    "mcp_tools",  # toolkit
    "catalog",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "mcp_tools.serving.middleware.BodyCapMiddleware",  # toolkit: refuses oversized bodies first
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "tenancy.middleware.TenancyMiddleware",  # toolkit: bearer token → tenant, actor
    "idempotency.middleware.IdempotencyMiddleware",  # toolkit: last
]

TENANCY_TENANT_MODEL = "catalog.Store"  # toolkit: before the first migrate
# toolkit: row-level security. Under a tool call PostgreSQL itself refuses another store's
# products, whatever the query (step 12); on SQLite `check --deploy` warns that it cannot.
TENANCY_RLS_MODELS = {"catalog.Product": "store"}

ROOT_URLCONF = "shop.urls"

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

WSGI_APPLICATION = "shop.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "db.sqlite3",
    }
}
if os.environ.get("DATABASE_URL"):  # PostgreSQL: pip install dj-database-url "psycopg[binary]"
    import dj_database_url

    DATABASES["default"].update(dj_database_url.parse(os.environ["DATABASE_URL"]))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
