"""``POST /a2a`` (the A2A v1.0 JSON-RPC binding) and ``GET /.well-known/agent-card.json``.

The JSON-RPC view runs behind the same middleware as ``/mcp`` (body cap before
authentication, ``tenancy``'s bearer resolution) and answers in this order: method (405) →
Origin (403) → authentication (401) → Content-Type (415) → rate limit (429, the token's budget
shared with ``/mcp``) → strict envelope → method, params, ``A2A-Version`` → dispatch. Refusals
before the JSON-RPC message is read are HTTP statuses; everything after is a JSON-RPC error
with HTTP 200, as the binding requires. Nothing is kept between requests and no ASGI lifespan
is needed: it works under uvicorn and ``manage.py runserver`` alike.

The view is synchronous and enters the event loop only to dispatch (a skill call awaits its
tool under the deadline, exactly as ``tools/call`` does); the rate count and the finished
task's row are written on the request's own thread and connection.
"""

from __future__ import annotations

import functools
import logging
import uuid
from typing import Final

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_not_required
from django.db import connections
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

from a2a_tools import conf, errors, params, rpc
from a2a_tools.skills import projection
from idempotency import handles_own_idempotency
from mcp_tools import CallContext, CallContextRefusedError, adapter
from mcp_tools.adapter import RATE_BUDGET, body_cap, jsonrpc_errors, request_in_flight
from mcp_tools.adapter import switches as mcp_switches
from tenancy import (
    NotAuthenticatedError,
    TenantContext,
    bearer_challenge,
    handles_own_transactions,
    renders_authentication_failure,
)
from tenancy.rates.throttling import counted_usage, rate_budget

logger = logging.getLogger(__name__)
security_logger = logging.getLogger("a2a_tools.security")

JSON: Final = "application/json"
# The JSON-RPC binding uses application/json; a2a+json (the HTTP+JSON binding's type) is
# accepted too, since some clients send it everywhere.
JSON_TYPES: Final = frozenset({JSON, "application/a2a+json"})
# CallContext.protocol_version on this channel (MCP revisions are dates; this is not one).
PROTOCOL_LABEL: Final = "a2a/1.0"


def _json(status: int, body: bytes, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type=JSON)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def interface_url(request: HttpRequest) -> str:
    """The JSON-RPC endpoint's absolute URL as clients must call it."""
    return str(conf.get("PUBLIC_URL") or request.build_absolute_uri(reverse("a2a")))


@login_not_required
@handles_own_transactions
@require_safe
def agent_card_view(request: HttpRequest) -> HttpResponse:
    """The public Agent Card: who this agent is, where and how to call it, and no skills of
    any tenant or role (those come from the authenticated extended card)."""
    body = projection().public_card.render(interface_url(request))
    response = _json(200, body, {"Cache-Control": "public, max-age=300"})
    response["Access-Control-Allow-Origin"] = "*"
    return response


def _unauthenticated(request: HttpRequest) -> HttpResponse:
    """The one 401 of ``/a2a``, in JSON-RPC form: ``ErrorInfo`` reason ``UNAUTHENTICATED`` with
    tenancy's stable code in ``metadata.code``, for a missing bearer and a refused one alike.

    A refused bearer is the one tenancy recorded (``renders_authentication_failure``): an
    unknown, expired or revoked token, or an OAuth access token, which is issued for ``/mcp``
    only (RFC 8707 audience) and so is ``Auth.InvalidAudience`` here.
    """
    failure = getattr(request, "authentication_failure", None)
    if failure is None:
        code = str(NotAuthenticatedError.default_code)
        message = "Authentication required: send Authorization: Bearer <token>"
    else:
        code, message = str(failure.default_code), str(failure.detail)
    return _json(
        401,
        errors.system_error(
            None, errors.REASON_UNAUTHENTICATED, message, {"code": code}, code=-32600
        ),
        {
            "WWW-Authenticate": bearer_challenge(
                failure, request=request, realm=None if failure else "a2a"
            )
        },
    )


def _release_idle_connections() -> None:
    """Hand this thread's database connections back to the pool while the skill runs.

    The tool runs in a worker thread with a connection of its own; the one the token check
    used would sit checked out, idle, for the whole call (as ``mcp_tools.serving.asgi`` does before
    ``/mcp``). Under load those idle connections emptied the pool and tools waited for one
    (bench/a2a_bench.py: 8-way throughput −11 % → −3 % against ``/mcp``). Only a pooled
    connection is handed back (closing a persistent unpooled one would cost a reconnect), and
    never inside a caller's transaction (``ATOMIC_REQUESTS``).
    """
    for connection in connections.all(initialized_only=True):
        if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
            connection.close()


# Outside ATOMIC_REQUESTS: the request thread hands its connection back while the skill runs,
# which it cannot inside a transaction, and a tool's write commits in its own IdempotentUnit.
@login_not_required
@handles_own_transactions
@csrf_exempt
@handles_own_idempotency
@renders_authentication_failure
@rate_budget(RATE_BUDGET)
@body_cap
@jsonrpc_errors
def a2a_view(request: HttpRequest) -> HttpResponse:
    """Serve one A2A JSON-RPC request statelessly.

    A synchronous view on purpose: the checks, the rate answer and the finished task's row run
    on the request's own thread and database connection, and only the dispatch (which awaits a
    tool under its deadline, like ``/mcp``) runs on the event loop — one thread hop per skill
    call, where an async view would add one for each database step.
    """
    if request.method != "POST":
        response = _json(405, adapter.error_bytes(None, -32600, "Method not allowed: POST only"))
        response["Allow"] = "POST"
        return response
    origin = request.headers.get("Origin")
    if origin is not None and not adapter.allowed_origin(origin):
        security_logger.warning("A2A request from a foreign Origin refused: %s", origin)
        return _json(403, adapter.error_bytes(None, -32600, "Forbidden: Origin not allowed"))
    tenant = getattr(request, "tenant", None)
    if not isinstance(tenant, TenantContext) or not tenant.is_resolved:
        return _unauthenticated(request)
    media = request.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    if media not in JSON_TYPES:
        return _json(
            415, adapter.error_bytes(None, -32600, "Content-Type must be application/json")
        )
    # One budget with /mcp, counted by TenancyMiddleware with the token check.
    usage = counted_usage(request, RATE_BUDGET)
    if usage is not None and usage.should_limit:
        retry_after = str(usage.retry_after)
        return _json(
            429,
            errors.system_error(
                None,
                errors.REASON_RATE_LIMITED,
                "Rate limit exceeded; retry later",
                {"retryAfterSeconds": retry_after},
            ),
            {"Retry-After": retry_after},
        )
    try:
        message = adapter.parse_message(request.body)
    except adapter.EnvelopeError as exc:
        return _json(200, adapter.error_bytes(exc.request_id, exc.code, exc.message))
    if message.kind != "request":
        # Every A2A method has a result; a notification or a posted response has no place.
        return _json(
            200,
            adapter.error_bytes(
                None, -32600, "Invalid request: an A2A request carries an id and a method"
            ),
        )
    assert message.method is not None
    request_id = uuid.uuid4().hex
    current = projection()
    with request_in_flight(request):
        try:
            ctx = CallContext.from_request(
                request, tenant=tenant, request_id=request_id, protocol_version=PROTOCOL_LABEL
            )
        except CallContextRefusedError:
            logger.exception("A2A call context refused (request %s)", request_id)
            return _json(
                200,
                errors.system_error(
                    message.request_id,
                    errors.REASON_INTERNAL,
                    f"Internal error (request id {request_id})",
                ),
            )
        surface = current.surface_for(ctx.role)
        if surface is None:
            security_logger.warning("A2A caller without a surface refused: %r", ctx.role)
            return _json(
                403,
                errors.system_error(
                    message.request_id,
                    errors.REASON_FORBIDDEN,
                    "Forbidden: no skills are available to this role",
                    code=-32600,
                ),
            )
        dispatcher = rpc.Dispatcher(
            ctx=ctx, surface=surface, interface_url=functools.partial(interface_url, request)
        )
        version = request.headers.get(params.VERSION_HEADER) or request.GET.get(
            params.VERSION_HEADER
        )
        dispatcher.switches = mcp_switches.resolve(ctx)  # tenant switches (none: no query)
        _release_idle_connections()
        reply = async_to_sync(dispatcher.dispatch)(
            message.request_id, message.method, message.params, version
        )
        # Before the reply leaves: a client may ask for the task as soon as it has the id.
        reply = dispatcher.store_finished_task() or reply
    return _json(reply.status, reply.body, dict(reply.headers))
