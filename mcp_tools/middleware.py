"""``BodyCapMiddleware``: refuse oversized MCP bodies with 413 before authentication.

It sits right after ``SecurityMiddleware``, so a 10 MB body never reaches the token lookup or
a JSON parser. It applies to views that carry the ``body_cap`` marker (metadata, never a path
list): the Content-Length is checked first, then the bytes actually read, so a chunked or
lying request cannot slip past the declared length.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from mcp_tools import _jsonrpc, conf

F = TypeVar("F", bound=Callable[..., Any])
MARKER: Final = "mcp_tools_body_cap"


def body_cap(view: F) -> F:
    """Mark ``view`` as capped at ``MCP_TOOLS_MAX_BODY_BYTES``."""
    setattr(view, MARKER, True)
    return view


def _too_large(limit: int) -> HttpResponse:
    body = _jsonrpc.error_bytes(None, -32600, f"Request body exceeds {limit} bytes")
    return HttpResponse(body, status=413, content_type="application/json")


def _capped(request: HttpRequest) -> bool:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    return bool(getattr(match.func, MARKER, False))


def check_body(request: HttpRequest) -> HttpResponse | None:
    """413 if the request's body is over the cap; otherwise buffer it (at most cap bytes)."""
    if request.method in ("GET", "HEAD", "OPTIONS", "DELETE") or not _capped(request):
        return None
    limit = int(conf.get("MAX_BODY_BYTES"))
    declared = request.META.get("CONTENT_LENGTH")
    if declared:
        try:
            if int(declared) > limit:
                return _too_large(limit)
        except ValueError:
            return _too_large(limit)
    data = request.read(limit + 1)
    if len(data) > limit:
        return _too_large(limit)
    # The stream is consumed; hand the bytes to request.body as Django would have.
    request._body = data
    request._stream = io.BytesIO(data)
    request._read_started = False  # type: ignore[attr-defined]
    return None


class BodyCapMiddleware:
    """Hybrid (sync and async) so it costs no thread hop under ASGI."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        refused = check_body(request)
        return refused if refused is not None else self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        refused = check_body(request)
        if refused is not None:
            return refused
        response: Awaitable[HttpResponse] = self.get_response(request)
        return await response
