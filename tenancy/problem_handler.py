"""tenancy's views answer RFC 9457 problem JSON with a stable ``code``, in any project.

A project with its own DRF ``EXCEPTION_HANDLER`` keeps it for tenancy's views too (one error
shape across its API); a project on DRF's default gets this one instead of DRF's bare
``{"detail": …}``, which carries no code a client can branch on.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from tenancy.challenges import bearer_challenge
from tenancy.problems import PROBLEM_CONTENT_TYPE, problem_type

# DRF's own exceptions carry snake_case codes ("not_found"); these are the stable ones.
DRF_CODES: dict[type[drf.APIException], str] = {
    drf.NotAuthenticated: "Auth.NotAuthenticated",
    drf.AuthenticationFailed: "Auth.InvalidToken",
    drf.PermissionDenied: "Auth.Forbidden",
    drf.NotFound: "Http.NotFound",
    drf.MethodNotAllowed: "Http.MethodNotAllowed",
    drf.NotAcceptable: "Http.NotAcceptable",
    drf.UnsupportedMediaType: "Http.UnsupportedMediaType",
    drf.ParseError: "Http.MalformedBody",
    drf.Throttled: "Http.RateLimited",
}


def drf_code_for(exc: drf.APIException) -> str:
    """The stable code of ``exc``: its own dotted ``default_code``, else DRF_CODES."""
    default = getattr(type(exc), "default_code", "")
    if isinstance(default, str) and "." in default:
        return default
    for cls, code in DRF_CODES.items():
        if isinstance(exc, cls):
            return code
    return "Http.Error"


def _errors(detail: Any, path: str = "") -> list[dict[str, str]]:
    if isinstance(detail, dict):
        found: list[dict[str, str]] = []
        for key, value in detail.items():
            found += _errors(value, f"{path}.{key}" if path else str(key))
        return found
    if isinstance(detail, list):
        found = []
        for item in detail:
            found += _errors(item, path)
        return found
    code = getattr(detail, "code", "invalid")
    return [{"field": path or "(body)", "code": str(code), "message": str(detail)}]


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF exceptions → problem JSON ``{type, title, status, code, detail, errors?}``."""
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    if not isinstance(exc, drf.APIException):
        return None
    set_rollback()
    request = context.get("request")
    status = exc.status_code
    headers: dict[str, str] = {}
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        status = 401
        headers["WWW-Authenticate"] = bearer_challenge()
    wait = getattr(exc, "wait", None)
    if wait:
        headers["Retry-After"] = str(max(int(wait), 1))
    if isinstance(exc, drf.ValidationError):
        code, title = "Validation.Failed", "The request is invalid."
        body: dict[str, Any] = {"errors": _errors(exc.detail)}
    else:
        code, title, body = drf_code_for(exc), str(exc.detail), {}
    problem = {
        "type": problem_type(code, request),
        "title": title,
        "status": status,
        "code": code,
        "detail": title,
        **body,
    }
    return Response(problem, status=status, headers=headers, content_type=PROBLEM_CONTENT_TYPE)


class ProblemsByDefault:
    """View mixin: the project's DRF exception handler if it set one, else tenancy's."""

    def get_exception_handler(self) -> Any:
        configured = api_settings.EXCEPTION_HANDLER
        if configured is drf_exception_handler:
            return problem_exception_handler
        return configured
