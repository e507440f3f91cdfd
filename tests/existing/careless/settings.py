"""The tracker's settings, plus the careless app (tests/existing/test_rls.py)."""

from tracker.settings import *  # noqa: F403
from tracker.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "careless"]
ROOT_URLCONF = "careless.urls"
