"""Farm routes under /api/v1/ (being built)."""

from django.urls import URLPattern, URLResolver, include, path

urlpatterns: list[URLPattern | URLResolver] = [
    path("", include("cluck.api.commerce_urls")),
]
