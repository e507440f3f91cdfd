"""Request body caps per route, and ``BodyCapMiddleware`` that enforces them under WSGI.

Every route has a cap: a view carrying the ``body_cap`` marker (metadata, never a path list)
has its own — ``/mcp`` takes ``MCP_TOOLS_MAX_BODY_BYTES`` (32 KiB) — and every other route,
REST included, ``MCP_TOOLS_DEFAULT_MAX_BODY_BYTES`` (1 MiB).

Under ``mcp_tools.serving.asgi`` the cap is enforced by the ASGI handler *before* Django reads the
body: a declared ``Content-Length`` over the cap is refused at once, a chunked body is cut off
at the cap. The handler marks the request, and this middleware then has nothing to do. Under
WSGI (``runserver``) or Django's own ASGI handler the body has already been buffered by the
server; the middleware still refuses it with 413, by Content-Length first and then by the
bytes actually read, before anything reads the token or parses JSON.
"""

from __future__ import annotations

import io
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar, overload

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, ResolverMatch, get_resolver, get_urlconf

from mcp_tools import conf
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy.problems import problem_body

F = TypeVar("F", bound=Callable[..., Any])
MARKER: Final = "mcp_tools_body_cap"
# The view answers its errors as JSON-RPC (``/mcp``); any other route answers problem JSON.
JSONRPC_ERRORS: Final = "mcp_tools_jsonrpc_errors"
# Set in the ASGI scope by mcp_tools.serving.asgi once it has enforced the route's cap.
SCOPE_KEY: Final = "mcp_tools.body_cap"


@overload
def body_cap(view: F) -> F: ...
@overload
def body_cap(*, max_bytes: int) -> Callable[[F], F]: ...
def body_cap(view: F | None = None, *, max_bytes: int | None = None) -> Any:
    """Cap ``view``'s request body: bare, at ``MCP_TOOLS_MAX_BODY_BYTES``; or at ``max_bytes``.

    Unmarked views get ``MCP_TOOLS_DEFAULT_MAX_BODY_BYTES``.
    """

    def mark(target: F) -> F:
        setattr(target, MARKER, True if max_bytes is None else int(max_bytes))
        return target

    return mark(view) if view is not None else mark


def jsonrpc_errors(view: F) -> F:
    """Mark ``view`` as a JSON-RPC endpoint: refusals before it runs are JSON-RPC errors."""
    setattr(view, JSONRPC_ERRORS, True)
    return view


def _marker(view: Any, name: str) -> Any:
    value = getattr(view, name, None)
    if value is None:
        view_class = getattr(view, "cls", None) or getattr(view, "view_class", None)
        value = getattr(view_class, name, None)
    return value


def view_body_cap(view: Any) -> int:
    """The body cap of ``view`` (``None``: an unresolvable path) in bytes."""
    marked = _marker(view, MARKER) if view is not None else None
    if marked is True:
        return int(conf.get("MAX_BODY_BYTES"))
    if isinstance(marked, int) and not isinstance(marked, bool):
        return marked
    return int(conf.get("DEFAULT_MAX_BODY_BYTES"))


def wants_jsonrpc(view: Any) -> bool:
    return view is not None and bool(_marker(view, JSONRPC_ERRORS))


def resolve_path(path_info: str) -> ResolverMatch:
    """``django.urls.resolve(path_info)``, remembered for paths that carry no arguments.

    Every request is resolved twice (its body cap, then Django's own dispatch), and walking
    the URL patterns to ``/mcp`` past the OAuth routes cost more than the rest of the
    routing. A match without arguments depends only on the path and the URLconf, so it is
    kept per resolver (a new URLconf, as ``override_settings`` makes, starts afresh);
    paths with arguments (ids) are resolved every time, so the memory stays bounded.

    Raises:
        Resolver404: nothing serves ``path_info`` (never remembered).
    """
    resolver = get_resolver(get_urlconf())
    known = _matches.get(resolver)
    if known is None:
        known = _matches.setdefault(resolver, {})
    match = known.get(path_info)
    if match is None:
        match = resolver.resolve(path_info)
        if not match.args and not match.kwargs:
            if len(known) >= MAX_REMEMBERED_ROUTES:
                known.clear()
            known[path_info] = match
    return match


_matches: weakref.WeakKeyDictionary[Any, dict[str, ResolverMatch]] = weakref.WeakKeyDictionary()
MAX_REMEMBERED_ROUTES: Final = 512


def route_of(path_info: str) -> Any:
    """The view serving ``path_info``, or ``None``."""
    try:
        return resolve_path(path_info).func
    except Resolver404:
        return None


def refusal(status: int, code: str, message: str, *, jsonrpc: bool) -> tuple[bytes, str]:
    """``(body, content type)`` of a refusal in the endpoint's own shape."""
    if jsonrpc:
        return _jsonrpc.error_bytes(None, -32600, message), "application/json"
    body = problem_body(status=status, code=code, title=message)
    return _jsonrpc.dumps(body), "application/problem+json"


def too_large(limit: int) -> tuple[int, str, str]:
    """``(status, code, message)`` of a body over ``limit``."""
    return 413, "Http.BodyTooLarge", f"Request body exceeds {limit} bytes"


def _refuse(status: int, code: str, message: str, *, jsonrpc: bool) -> HttpResponse:
    body, content_type = refusal(status, code, message, jsonrpc=jsonrpc)
    return HttpResponse(body, status=status, content_type=content_type)


def check_body(request: HttpRequest) -> HttpResponse | None:
    """413 if the request's body is over its route's cap; otherwise buffer it (≤ cap bytes)."""
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and SCOPE_KEY in scope:
        return None  # mcp_tools.serving.asgi enforced the cap before the body was read
    if request.method in ("GET", "HEAD", "OPTIONS", "DELETE"):
        return None
    view = route_of(request.path_info)
    limit = view_body_cap(view)
    jsonrpc = wants_jsonrpc(view)
    declared = request.META.get("CONTENT_LENGTH")
    if declared:
        try:
            length = int(declared)
        except ValueError:
            return _refuse(
                400, "Http.InvalidContentLength", "Invalid Content-Length", jsonrpc=jsonrpc
            )
        if length > limit:
            return _refuse(*too_large(limit), jsonrpc=jsonrpc)
    data = request.read(limit + 1)
    if len(data) > limit:
        return _refuse(*too_large(limit), jsonrpc=jsonrpc)
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
