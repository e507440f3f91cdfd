"""Farm routes under /api/v1/ (being built)."""

from django.urls import URLPattern

urlpatterns: list[URLPattern] = []
