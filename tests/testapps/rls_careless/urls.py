"""Routed at the root for the test run only (``tests.pg_harness``)."""

from django.urls import path

from tests.testapps.rls_careless import views

urlpatterns = [
    path(
        "rls-careless/customers/",
        views.CarelessCustomersApi.as_view(),
        name="rls-careless-customers",
    ),
]
