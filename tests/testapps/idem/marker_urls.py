"""A URLconf that is *not* routed: unit tests of the marker walk use it explicitly."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views import View
from rest_framework.response import Response
from rest_framework.views import APIView

from cluck.api.base import MethodRoutes
from idempotency import handles_own_idempotency, never_replay


def plain(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


@never_replay("nested")
def nested_fn(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


@handles_own_idempotency
def own(request: HttpRequest) -> HttpResponse:
    return HttpResponse()


@never_replay("class-level marker on a DRF view")
class SecretApi(APIView):
    def post(self, request: Any) -> Response:
        return Response()


@never_replay("class-level marker on a Django CBV")
class SecretView(View):
    pass


class ReadApi(APIView):
    def get(self, request: Any) -> Response:
        return Response()


routes = MethodRoutes(get=("thing-list", ReadApi), post=("thing-secret", SecretApi))

urlpatterns = [
    path("plain/", plain, name="plain"),
    path("own/", own, name="own"),
    path("drf/", SecretApi.as_view(), name="drf"),
    path("cbv/", SecretView.as_view(), name="cbv"),
    path("nested/", include(([path("fn/", nested_fn, name="fn")], "ns"))),
    *routes.patterns("things/"),
]
