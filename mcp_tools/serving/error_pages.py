"""Error pages in the MCP endpoint's shape, and the database-outage test every handler shares.

Django answers a spoofed ``Host`` (400), an unknown path (404) and an uncaught exception (500)
with HTML from the project's ``handler400``/``handler404``/``handler500``. An MCP client
understands none of it. A project's handlers call ``mcp_error_page`` first::

    def server_error(request):
        return mcp_error_page(request, 500) or <the project's own page>

For a request to the MCP endpoint — resolved to a view carrying ``jsonrpc_errors``, or an
unresolvable path under the endpoint's own path, compared case-insensitively (``/MCP``,
``/mcp/x``) — the answer is a JSON-RPC error with ``id: null``. A 500 caused by an unreachable
database (``database_unavailable``) becomes ``503`` with ``Retry-After``.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_REQUEST

from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.serving.middleware import wants_jsonrpc

MCP_ROUTE_NAME: Final = "mcp"
# Seconds a client should wait before retrying while the database is unreachable.
RETRY_AFTER_SECONDS: Final = 5
# SQLSTATE classes meaning "the server is not there for you right now": connection
# exceptions (08), insufficient resources such as too many connections (53), operator
# intervention such as shutdown, crash recovery or start-up (57P).
_UNAVAILABLE_SQLSTATES: Final = ("08", "53", "57P")

_MESSAGES: Final = {
    400: "Bad request",
    403: "Forbidden",
    404: "Not found: the MCP endpoint is POST /mcp",
    405: "Method not allowed",
    500: "Internal error",
    503: "Service unavailable: the database cannot be reached; retry later",
}


def database_unavailable(exc: BaseException | None) -> bool:
    """``exc`` says the database cannot be reached (down, restarting, out of connections).

    Connection-level errors carry no SQLSTATE (refused, closed, pool timeout); server-side
    ones carry a class above. A deadlock or a constraint violation is not an outage.
    """
    if not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None)
    return sqlstate is None or str(sqlstate).startswith(_UNAVAILABLE_SQLSTATES)


def current_exception() -> BaseException | None:
    """The exception Django is handling (``handler500`` runs inside its ``except`` block)."""
    return sys.exc_info()[1]


def is_mcp_request(request: HttpRequest) -> bool:
    """The request was for the MCP endpoint: by the resolved view's marker, else by path."""
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return wants_jsonrpc(match.func)
    try:
        endpoint = reverse(MCP_ROUTE_NAME).lower()
    except NoReverseMatch:
        return False
    path = request.path_info.lower()
    return path == endpoint or path.startswith(endpoint.rstrip("/") + "/")


def jsonrpc_error_page(status: int, message: str | None = None) -> HttpResponse:
    """A JSON-RPC error (``id: null``) with HTTP ``status``: -32603 (*Internal error*) for a
    5xx, -32600 (*Invalid Request*) for a 4xx: the request was fine when the server failed."""
    code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
    body = _jsonrpc.error_bytes(None, code, message or _MESSAGES.get(status, "Error"))
    response = HttpResponse(body, status=status, content_type="application/json")
    if status == 503:
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def outage_status(status: int, exc: BaseException | None = None) -> int:
    """``503`` for a 500 caused by an unreachable database, else ``status``."""
    if status == 500 and database_unavailable(exc if exc is not None else current_exception()):
        return 503
    return status


def mcp_error_page(request: HttpRequest, status: int, **kwargs: Any) -> HttpResponse | None:
    """The JSON-RPC error page for ``request`` if it was for the MCP endpoint, else ``None``."""
    if not is_mcp_request(request):
        return None
    return jsonrpc_error_page(outage_status(status))
