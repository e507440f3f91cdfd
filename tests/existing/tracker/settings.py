"""Settings of the tracker: organizations, their members and their projects."""

import os
import sys
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = "django-insecure-the-trackers-own-development-key"
DEBUG = True
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "allauth",
    "allauth.account",
    "accounts",
    "orgs",
    "projects",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
]

ROOT_URLCONF = "tracker.urls"

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

WSGI_APPLICATION = "tracker.wsgi.application"

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": BASE_DIR / "db.sqlite3",
        # Every view runs in one transaction: the project's services count on it.
        "ATOMIC_REQUESTS": True,
    }
}
if os.environ.get("DATABASE_URL"):
    import dj_database_url

    DATABASES["default"].update(dj_database_url.parse(os.environ["DATABASE_URL"]))

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if sys.argv[1:2] == ["test"]:
    # The test suite hashes passwords cheaply.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# People sign in on allauth's pages, with their email.
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
ACCOUNT_EMAIL_VERIFICATION = "none"

# The API: simplejwt bearer tokens for scripts and the mobile app, the session for the web app.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework_simplejwt.authentication.JWTAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}
SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=15),
    "AUTH_HEADER_TYPES": ("Bearer",),
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cluck: the organizations' MCP tools (docs/existing-project.md) --------------------------
from tenancy.oauth.defaults import oauth2_provider_settings  # noqa: E402

# New lists, whether yours are lists or tuples; nothing of yours is reordered.
INSTALLED_APPS = [
    *INSTALLED_APPS,
    "django_ratelimit",
    "tenancy",
    "idempotency",
    "mcp_tools",
    "oauth2_provider",
    "tenancy.oauth",
]
# Oversized bodies are refused before anything reads them: right after SecurityMiddleware.
_after_security = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *MIDDLEWARE[:_after_security],
    "mcp_tools.serving.middleware.BodyCapMiddleware",
    *MIDDLEWARE[_after_security:],
    "tenancy.middleware.TenancyMiddleware",  # after AuthenticationMiddleware
    "idempotency.middleware.IdempotencyMiddleware",  # last
]
TENANCY_TENANT_MODEL = "orgs.Organization"
TENANCY_TENANT_CODE_FIELD = "slug"
TENANCY_TENANT_ACTIVE_FIELD = None  # organizations are never suspended
TENANCY_TENANT_NOUN = "organization"
TENANCY_MEMBERSHIP_MODEL = "orgs.Membership"
TENANCY_ROLES = "orgs.roles.ROLES"
# Cluck's tokens (ck_…) on the project's API too; any position works.
REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"] = [
    "tenancy.drf_authentication.TenancyAuthentication",
    *REST_FRAMEWORK["DEFAULT_AUTHENTICATION_CLASSES"],
]
# OAuth sign-in for MCP clients; people sign in on allauth's page (LOGIN_URL, unchanged).
OAUTH2_PROVIDER = oauth2_provider_settings()
