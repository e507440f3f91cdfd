"""Routed at the root for the test run only (``tests.pg_harness``)."""

from django.urls import path

from tests.testapps.asgi_probe import views

urlpatterns = [
    path("asgi-probe/sync/", views.sync_probe, name="asgi-probe-sync"),
    path("asgi-probe/async/", views.async_probe, name="asgi-probe-async"),
]
