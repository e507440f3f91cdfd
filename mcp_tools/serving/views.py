"""``POST /mcp``: the one MCP endpoint, plus clean JSON 404s for OAuth discovery and registration.

Order of checks (each answered before the next runs): Origin (403) → authentication (401) →
method (405) → Content-Type (400) → Accept (406) → rate limit (429) → strict envelope
(400) → era ladder → dispatch. The body cap (413) runs earlier still: in the ASGI handler
before the body is read (``mcp_tools.serving.asgi``), else in ``BodyCapMiddleware``; both before
authentication.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_not_required
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from idempotency import handles_own_idempotency
from mcp_tools import conf, observability
from mcp_tools.codes import RATE_LIMITED, UNAUTHENTICATED
from mcp_tools.eras import Era
from mcp_tools.eras.handshake import DEFAULT_VERSION, Handshake
from mcp_tools.eras.modern import Modern
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.serving import streaming
from mcp_tools.serving.middleware import body_cap, jsonrpc_errors
from tenancy import (
    AuthenticationFailedError,
    NotAuthenticatedError,
    TenantContext,
    bearer_challenge,
    handles_own_transactions,
    ignores_ambient_credentials,
    renders_authentication_failure,
)
from tenancy.idp import external_jwt
from tenancy.rates.throttling import RateBudget, RateUsage, counted_usage, rate_budget, was_counted

logger = logging.getLogger(__name__)
security_logger = logging.getLogger("mcp_tools.security")

JSON: Final = "application/json"
RATE_GROUP: Final = "mcp_tools.mcp"


def _json(status: int, body: bytes | None, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(body or b"", status=status, content_type=JSON)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _error(status: int, code: int, message: str, **headers: str) -> HttpResponse:
    return _json(status, _jsonrpc.error_bytes(None, code, message), headers)


def origin_allowed(origin: str, patterns: list[str]) -> bool:
    """``origin`` matches one of ``patterns`` (``scheme://host[:port]``, port ``*`` = any)."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return False
    if not parts.scheme or not parts.hostname:
        return False
    for pattern in patterns:
        if pattern == origin:
            return True
        if pattern.endswith(":*"):
            base = urlsplit(pattern[:-2])
            if base.scheme == parts.scheme and base.hostname == parts.hostname:
                return True
        elif port is None and pattern.rstrip("/") == origin.rstrip("/"):
            return True
    return False


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def accepts_json(accept: str | None) -> bool:
    """An absent Accept admits anything (RFC 9110 §12.5.1)."""
    if accept is None:
        return True
    for item in accept.split(","):
        media, _, params = item.partition(";")
        media = media.strip().lower()
        if "q=0" in params.replace(" ", "") and "q=0." not in params.replace(" ", ""):
            continue
        if media in (JSON, "application/*", "*/*"):
            return True
    return False


def _rate(group: str, request: HttpRequest) -> str | None:
    rate: str | None = conf.get("RATE")
    return rate


# Per membership, not per token: minting more tokens buys no more calls. TenancyMiddleware
# counts it with the token check (on PostgreSQL in the same statement); the view answers it.
RATE_BUDGET: Final = RateBudget(group=RATE_GROUP, rate=_rate, methods=("POST",))


async def rate_usage(request: HttpRequest) -> RateUsage | None:
    """This request's count against ``MCP_TOOLS_RATE`` (counted once, by the middleware)."""
    if was_counted(request):
        return counted_usage(request, RATE_BUDGET)
    return await sync_to_async(counted_usage)(request, RATE_BUDGET)


def _unauthenticated(
    request: HttpRequest, failure: AuthenticationFailedError | None
) -> HttpResponse:
    """The one 401 of ``/mcp``: a JSON-RPC error with tenancy's stable code in ``data.code``.

    ``failure`` is the refused bearer ``tenancy`` recorded (``renders_authentication_failure``),
    or ``None`` when no credentials were sent. tenancy composes the challenge: with
    ``tenancy.oauth`` installed it names the RFC 9728 metadata (``resource_metadata``) and the
    scopes, so OAuth clients discover the authorization server from it.
    """
    if failure is None:
        code = str(NotAuthenticatedError.default_code)
        message = "Authentication required: send Authorization: Bearer <token>"
    else:
        code, message = str(failure.default_code), str(failure.detail)
    return _json(
        401,
        _jsonrpc.error_bytes(_request_id(request), UNAUTHENTICATED, message, {"code": code}),
        {
            "WWW-Authenticate": bearer_challenge(
                failure, request=request, realm=None if failure else "mcp"
            )
        },
    )


def parse_bounded(body: bytes) -> _jsonrpc.Message:
    """One JSON-RPC message within the configured bounds (``_jsonrpc.EnvelopeError`` if not)."""
    return _jsonrpc.parse_message(
        body,
        max_depth=int(conf.get("MAX_JSON_DEPTH")),
        max_nodes=int(conf.get("MAX_JSON_NODES")),
        max_id_length=int(conf.get("MAX_ID_LENGTH")),
    )


def _request_id(request: HttpRequest) -> Any:
    """The id of the JSON-RPC request a refused POST carries, so the 401 answers it (a client
    matches answers to requests by id); ``None`` for a GET, a notification or a body that is no
    acceptable message. The body is already within the cap (``body_cap``)."""
    if request.method != "POST":
        return None
    try:
        message = parse_bounded(request.body)
    except _jsonrpc.EnvelopeError:
        return None
    return message.request_id if message.kind == "request" else None


@login_not_required
@handles_own_transactions  # async: Django refuses ATOMIC_REQUESTS for it (500 on every call)
@csrf_exempt
@handles_own_idempotency
@renders_authentication_failure
@rate_budget(RATE_BUDGET)
@body_cap
@jsonrpc_errors
async def mcp_view(request: HttpRequest) -> HttpResponseBase:
    """Serve one MCP JSON-RPC message statelessly. Never issues ``Mcp-Session-Id``."""
    headers = _jsonrpc.RequestHeaders(request)  # by name from META: no dict of every header
    origin = headers.get("Origin")
    if origin is not None and not origin_allowed(origin, list(conf.get("ALLOWED_ORIGINS"))):
        security_logger.warning("MCP request from a foreign Origin refused: %s", origin)
        return _error(403, -32600, "Forbidden: Origin not allowed")
    tenant = getattr(request, "tenant", None)
    if not isinstance(tenant, TenantContext) or not tenant.is_resolved:
        # Before the method check: a client without valid credentials learns that first, on
        # GET too. mcp-remote's SSE fallback GETs /mcp; a 405 there would hide the 401.
        return _unauthenticated(request, getattr(request, "authentication_failure", None))
    if request.method != "POST":
        response = _error(405, -32600, "Method not allowed: this endpoint serves POST only")
        response["Allow"] = "POST"
        return response
    if _media_type(headers.get("Content-Type", "")) != JSON:
        return _error(400, -32600, "Invalid Content-Type header: expected application/json")
    if not accepts_json(headers.get("Accept")):
        return _error(406, -32600, "Not Acceptable: the client must accept application/json")
    usage = await rate_usage(request)
    if usage is not None and usage.should_limit:
        observability.rate_limited(request, group=RATE_GROUP)  # observability
        return _error(
            429,
            RATE_LIMITED,
            "Rate limit exceeded; retry later",
            **{"Retry-After": str(usage.retry_after)},
        )

    try:
        message = parse_bounded(request.body)
    except _jsonrpc.EnvelopeError as exc:
        # Malformed bodies are a 400 in both eras (the SDK does the same).
        return _json(400, _jsonrpc.error_bytes(exc.request_id, exc.code, exc.message))

    era = era_for(headers.get("MCP-Protocol-Version"), message)
    answer = await era.serve(
        request,
        message,
        tenant=tenant,
        headers=headers,
        # Streams need the ASGI handler's event loop to outlive the view (not WSGI).
        streamable=isinstance(request, ASGIRequest)
        and streaming.accepts_event_stream(headers.get("Accept")),
    )
    if isinstance(answer, streaming.StreamReply):
        return streaming.response(answer)
    if answer.required_scopes is not None:
        challenge = bearer_challenge(
            request=request, error_code="insufficient_scope", scope=answer.required_scopes
        )
        return _json(answer.status, answer.body, {"WWW-Authenticate": challenge})
    if answer.body is None:
        return HttpResponse(status=answer.status)
    return _json(answer.status, answer.body, dict(answer.headers))


def era_for(header_version: str | None, message: _jsonrpc.Message) -> Era:
    """Pick the era by the ``MCP-Protocol-Version`` header, as the SDK does (once per request).

    A request carrying the 2026-07-28 envelope is modern whatever its header says (a missing
    or disagreeing header is then -32020); an unknown header version is a modern-era
    question too (-32022 with the supported list).
    """
    meta = (message.params or {}).get("_meta")
    if isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta:
        return Modern(header_version or str(meta.get(PROTOCOL_VERSION_META_KEY)))
    if header_version is None:
        return Handshake(DEFAULT_VERSION)
    if header_version in HANDSHAKE_PROTOCOL_VERSIONS:
        return Handshake(header_version)
    return Modern(header_version)


# What a client sees at an OAuth path the project does not serve. mcp-remote (Claude Desktop's
# bridge) answers every 401, even one for a static token sent with --header, by trying OAuth: it
# probes the metadata documents, then registers a client at /register and gives up, quoting this
# text verbatim. With an OAuth server installed (tenancy.oauth) its own routes come first and
# only the paths it does not serve land here.
OAUTH_NOT_OFFERED: Final = (
    "No OAuth endpoint here. When this server offers OAuth sign-in, its metadata is at "
    "/.well-known/oauth-protected-resource/mcp; otherwise it takes a personal access token as "
    "'Authorization: Bearer <token>'. If that was sent and refused (HTTP 401), the token is "
    "invalid, expired or revoked: sign in again or issue a new one."
)


@login_not_required
@handles_own_transactions
@csrf_exempt
@ignores_ambient_credentials
def protected_resource_metadata(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    """RFC 9728 metadata of ``/mcp`` naming the external issuer (``tenancy.idp.external_jwt``);
    without one configured, the JSON 404 of ``oauth_not_offered``."""
    suffix = request.path.removeprefix("/.well-known/oauth-protected-resource")
    document = external_jwt.protected_resource_metadata(request)
    if document is None or suffix not in ("", "/mcp"):
        return oauth_not_offered(request)
    return _json(200, _jsonrpc.dumps(document))


@login_not_required
@handles_own_transactions
@csrf_exempt
@ignores_ambient_credentials
def oauth_not_offered(request: HttpRequest, **kwargs: Any) -> HttpResponse:
    """A JSON 404 for OAuth discovery and registration probes (any method).

    Claude Code probes the metadata even with a static bearer; mcp-remote also posts to
    ``/register``. A bearer sent along is not read: a revoked one must not turn these into
    401s, which would send such clients round the OAuth loop again.
    """
    return _json(
        404, _jsonrpc.dumps({"error": "not_found", "error_description": OAUTH_NOT_OFFERED})
    )
