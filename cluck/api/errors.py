"""The single translation point from exceptions to RFC 9457 problem JSON for the REST API.

Body: ``{type, title, status, code, detail}`` plus ``errors: [{field, code, message}]`` for
validation failures, listing every failing field.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django_ratelimit.exceptions import Ratelimited
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import set_rollback

from cluck.errors import CluckError, FieldError
from tenancy.problem_handler import drf_code_for

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem(
    *,
    status: int,
    code: str,
    title: str,
    detail: str | None = None,
    errors: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response:
    body: dict[str, Any] = {
        "type": f"https://cluck.dev/problems/{code}",
        "title": title,
        "status": status,
        "code": code,
        "detail": detail or title,
    }
    if errors is not None:
        body["errors"] = errors
    for key, value in extra.items():
        # Domain data never overwrites the problem's own members (type, status, code, ...).
        if key in body:
            body.setdefault("data", {})[key] = value
        else:
            body[key] = value
    response = Response(body, status=status, headers=headers, content_type=PROBLEM_CONTENT_TYPE)
    return response


def flatten_validation(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """DRF's nested error detail → ``[{field, code, message}]`` (every field, stable order)."""
    errors: list[dict[str, str]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = str(key) if key != "non_field_errors" else ""
            errors.extend(
                flatten_validation(value, f"{prefix}.{name}" if prefix and name else prefix or name)
            )
    elif isinstance(detail, list):
        if all(isinstance(item, drf.ErrorDetail) for item in detail):
            for item in detail:
                errors.append({"field": prefix, "code": str(item.code), "message": str(item)})
        else:
            for index, item in enumerate(detail):
                errors.extend(flatten_validation(item, f"{prefix}[{index}]"))
    elif isinstance(detail, drf.ErrorDetail):
        errors.append({"field": prefix, "code": str(detail.code), "message": str(detail)})
    else:
        errors.append({"field": prefix, "code": "invalid", "message": str(detail)})
    return errors


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, FieldError):
        set_rollback()
        return problem(status=400, code=exc.code, title=exc.message, errors=exc.errors)
    if isinstance(exc, CluckError):
        set_rollback()
        return problem(
            status=exc.http_status, code=exc.code, title=exc.message, **_public_data(exc)
        )
    if isinstance(exc, Ratelimited):
        return problem(
            status=429,
            code="Http.RateLimited",
            title="Too many requests. Slow down and retry shortly.",
            headers={"Retry-After": "60"},
        )
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    if isinstance(exc, drf.ValidationError):
        set_rollback()
        return problem(
            status=400,
            code="Validation.Failed",
            title="The request is invalid.",
            errors=flatten_validation(exc.detail),
        )
    if isinstance(exc, drf.APIException):
        set_rollback()
        headers: dict[str, str] = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header  # type: ignore[attr-defined]
        wait = getattr(exc, "wait", None)
        if isinstance(exc, drf.Throttled) and wait:
            headers["Retry-After"] = str(int(wait))
        code = _code_for(exc)
        status = exc.status_code
        if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
            status = 401
            headers.setdefault("WWW-Authenticate", 'Bearer realm="cluck"')
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return problem(status=status, code=code, title=str(detail), headers=headers or None)
    return None


def _code_for(exc: drf.APIException) -> str:
    # The farm's 404 code predates tenancy's neutral "Http.NotFound"; codes are never renamed.
    return "Cluck.NotFound" if isinstance(exc, drf.NotFound) else drf_code_for(exc)


def _public_data(exc: CluckError) -> dict[str, Any]:
    return {key: value for key, value in exc.data.items() if not key.startswith("_")}


API_PREFIX = "/api/"

_API_PROBLEMS: dict[int, tuple[str, str]] = {
    400: ("Http.BadRequest", "Bad request."),
    403: ("Auth.Forbidden", "Forbidden."),
    404: ("Cluck.NotFound", "Not found."),
    500: ("Http.InternalError", "Internal server error."),
    503: ("Http.DatabaseUnavailable", "The database cannot be reached; retry shortly."),
}


def _json_error_page(request: Any, status: int) -> Any:
    """The error page in the endpoint's own shape: JSON-RPC for ``/mcp``, problem JSON under
    ``/api/``; ``None`` elsewhere (the admin keeps Django's HTML pages)."""
    from mcp_tools.serving.error_pages import RETRY_AFTER_SECONDS, mcp_error_page, outage_status
    from tenancy.problems import problem_response

    page = mcp_error_page(request, status)
    if page is not None:
        return page
    if not request.path_info.startswith(API_PREFIX):
        return None
    status = outage_status(status)
    code, title = _API_PROBLEMS[status]
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else None
    return problem_response(status=status, code=code, title=title, headers=headers)


def bad_request_view(request: Any, exception: Exception | None = None) -> Any:
    """``handler400`` (a spoofed ``Host`` is ``DisallowedHost``, answered here)."""
    from django.views.defaults import bad_request

    return _json_error_page(request, 400) or bad_request(request, exception or Exception())


def permission_denied_view(request: Any, exception: Exception | None = None) -> Any:
    """``handler403``."""
    from django.views.defaults import permission_denied

    return _json_error_page(request, 403) or permission_denied(request, exception or Exception())


def not_found_view(request: Any, exception: Exception | None = None) -> Any:
    """``handler404``."""
    from django.views.defaults import page_not_found

    return _json_error_page(request, 404) or page_not_found(
        request, exception or Exception("not found")
    )


def server_error_view(request: Any) -> Any:
    """``handler500``: 503 with ``Retry-After`` when the database cannot be reached."""
    from django.views.defaults import server_error

    from mcp_tools.serving.error_pages import RETRY_AFTER_SECONDS, outage_status

    page = _json_error_page(request, 500)
    if page is not None:
        return page
    response = server_error(request)
    if outage_status(500) == 503:
        response.status_code = 503
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
