"""With these settings, tests run faster."""

from .base import *  # noqa: F403

# GENERAL
# ------------------------------------------------------------------------------
SECRET_KEY = "django-insecure-harbors-own-test-key"
TEST_RUNNER = "django.test.runner.DiscoverRunner"

# PASSWORDS
# ------------------------------------------------------------------------------
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# EMAIL
# ------------------------------------------------------------------------------
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
