"""Routed at the root for the test run only (``tests.pg_harness``)."""

from django.urls import path

from tests.testapps.idem import views

urlpatterns = [
    path("idem-test/effects/", views.effect, name="idem-test-effect"),
    path("idem-test/effects/<int:n>/", views.effect, name="idem-test-effect-n"),
    path("idem-test/empty/", views.empty, name="idem-test-empty"),
    path("idem-test/binary/", views.binary, name="idem-test-binary"),
    path("idem-test/async/", views.async_effect, name="idem-test-async"),
    # Under the user-scoped prefix: keys are per user here, not per tenant.
    path("api/v1/me/idem-test-notes/", views.effect, name="idem-test-me-note"),
]
