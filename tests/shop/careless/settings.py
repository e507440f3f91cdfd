"""The shop's settings, plus the careless tools' app (tests/shop/test_rls.py)."""

from shop.settings import *  # noqa: F403
from shop.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "careless"]
ROOT_URLCONF = "careless.urls"
