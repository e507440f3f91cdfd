"""The shop's settings plus its REST API (``storefront``)."""

from shop.settings import *  # noqa: F403

INSTALLED_APPS: list[str] = [*INSTALLED_APPS, "storefront"]  # noqa: F405
ROOT_URLCONF = "storefront.urls"
