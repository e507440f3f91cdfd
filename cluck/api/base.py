"""Shared REST plumbing: list paging, the caller, and one path serving several named routes."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework import serializers

from cluck.caller import Caller
from cluck.errors import FieldError

LIST_LIMIT_DEFAULT = 100
LIST_LIMIT_MAX = 500


def caller_of(request: Any) -> Caller:
    return Caller.from_request(request, channel="http")


class ListQuerySerializer(serializers.Serializer[Any]):
    """``limit`` (1..500, default 100) and an opaque ``cursor`` on every list route."""

    limit = serializers.IntegerField(
        min_value=1, max_value=LIST_LIMIT_MAX, default=LIST_LIMIT_DEFAULT
    )
    cursor = serializers.CharField(required=False, allow_blank=False, max_length=512)


def encode_cursor(position: dict[str, Any]) -> str:
    """Keyset position → opaque url-safe string."""
    raw = json.dumps(position, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, *, keys: tuple[str, ...]) -> dict[str, Any] | None:
    """Opaque string → keyset position; anything malformed is a 400 on ``cursor``."""
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict) or set(value) != set(keys):
        raise FieldError(
            [{"field": "cursor", "code": "invalid", "message": "The cursor is not valid."}]
        )
    return value


def page_body(items: list[Any], *, next_cursor: str | None) -> dict[str, Any]:
    """The list envelope every list route answers with."""
    return {"items": items, "complete": next_cursor is None, "nextCursor": next_cursor}


def _method_not_allowed(allowed: str) -> HttpResponse:
    from tenancy.problems import problem_response

    return problem_response(
        status=405,
        code="Http.MethodNotAllowed",
        title="Method not allowed.",
        headers={"Allow": allowed},
    )


class MethodRoutes:
    """One URL path, one Django view, several *named* routes — one per HTTP method.

    ``POST /api/v1/daily-entries/`` (route ``daily-entry-record``) and
    ``GET /api/v1/daily-entries/`` (route ``daily-entry-list``) share a path but not a policy.
    Register with ``routes.patterns(path_str)``; ``routes.view_for(name)`` gives the view class
    behind a route name (parity guards evaluate its permission classes).
    """

    def __init__(self, **by_method: tuple[str, type[Any]]) -> None:
        self.by_method = {method.upper(): spec for method, spec in by_method.items()}
        self._views = {
            method: view_class.as_view() for method, (_, view_class) in self.by_method.items()
        }
        self.view = self._make_dispatcher()

    def _make_dispatcher(self) -> Callable[..., HttpResponse]:
        views = self._views

        def dispatch(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            view = views.get(request.method or "")
            if view is None:
                allowed = ", ".join([*views, "OPTIONS"])
                if request.method == "OPTIONS":
                    view = next(iter(views.values()))
                else:
                    return _method_not_allowed(allowed)
            return view(request, *args, **kwargs)

        dispatch.method_routes = self  # type: ignore[attr-defined]
        dispatch.csrf_exempt = True  # type: ignore[attr-defined]
        return dispatch

    def view_for_method(self, method: str) -> Any:
        spec = self.by_method.get(method.upper())
        return spec[1] if spec else None

    def view_for(self, name: str) -> type[Any] | None:
        for route_name, view_class in self.by_method.values():
            if route_name == name:
                return view_class
        return None

    def patterns(self, route: str) -> list[Any]:
        from django.urls import path

        return [path(route, self.view, name=name) for name, _ in self.by_method.values()]
