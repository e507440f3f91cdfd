"""RFC 9457 problem responses produced outside DRF (middleware)."""

from __future__ import annotations

from django.http import JsonResponse

PROBLEM_CONTENT_TYPE = "application/problem+json"


def problem_response(
    *, status: int, code: str, title: str, detail: str = "", headers: dict[str, str] | None = None
) -> JsonResponse:
    body = {
        "type": f"https://cluck.dev/problems/{code}",
        "title": title,
        "status": status,
        "code": code,
        "detail": detail or title,
    }
    response = JsonResponse(body, status=status, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response
