"""RFC 9457 problem responses produced outside DRF (middleware)."""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse

from tenancy import conf

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem_type(code: str, request: Any = None) -> str:
    """The problem ``type`` URI for ``code``: ``TENANCY_PROBLEM_TYPE_BASE_URL`` + code, or
    this server's own ``/problems/<code>`` (absolute when the request is known)."""
    base = conf.get("PROBLEM_TYPE_BASE_URL")
    if base:
        return f"{base}{code}"
    path = f"/problems/{code}"
    return request.build_absolute_uri(path) if request is not None else path


def problem_body(
    *, status: int, code: str, title: str, detail: str = "", request: Any = None
) -> dict[str, Any]:
    """The RFC 9457 members ``{type, title, status, code, detail}``."""
    return {
        "type": problem_type(code, request),
        "title": title,
        "status": status,
        "code": code,
        "detail": detail or title,
    }


def problem_response(
    *,
    status: int,
    code: str,
    title: str,
    detail: str = "",
    headers: dict[str, str] | None = None,
    request: Any = None,
) -> JsonResponse:
    body = problem_body(status=status, code=code, title=title, detail=detail, request=request)
    response = JsonResponse(body, status=status, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response
