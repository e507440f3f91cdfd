"""The order of steps for one JSON-RPC request, after its era admitted it.

The caller's ``CallContext`` (refused → 500), the caller's prepared surface (none → 403), the
``RpcRequest``, then the era's method table (a missing method is -32601; params are validated
against the SDK's models, -32602), the method, and its outcome rendered in one place
(``mcp_tools.rpc.replies.render``).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, Final

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from mcp_types import methods as wire_methods
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from pydantic import ValidationError

from mcp_tools.call import context
from mcp_tools.call.exchange import Exchange
from mcp_tools.codes import FORBIDDEN
from mcp_tools.exceptions import CallContextRefusedError, UnknownSurfaceError
from mcp_tools.operator import switches
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc.replies import Reply, error, render
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.serving.streaming import StreamReply
from tenancy import load_permissions

if TYPE_CHECKING:
    from mcp_tools.eras import Era

logger = logging.getLogger("mcp_tools.serving.views")
# The methods a tenant's switches narrow the surface for (mcp_tools.operator.switches).
NARROWED_METHODS: Final = frozenset({"tools/list", "tools/call"})
security_logger = logging.getLogger("mcp_tools.security")


async def serve(
    era: Era,
    request: HttpRequest,
    message: _jsonrpc.Message,
    *,
    tenant: Any,
    headers: Mapping[str, str],
    exchange: Exchange,
    capabilities: Mapping[str, Any] | None,
    task_requested: bool = False,
    state_token: Any = None,
    input_responses: dict[str, Any] | None = None,
    streamable: bool = False,
) -> Reply | StreamReply:
    """Answer one admitted JSON-RPC request in ``era`` for the caller's surface."""
    request_id = secrets.token_hex(16)  # 32 hex digits, as a uuid4's (cheaper to make)
    with ExitStack() as serving:
        try:
            ctx = serving.enter_context(
                context.serving(
                    request,
                    tenant=tenant,
                    request_id=request_id,
                    protocol_version=era.version,
                    client_capabilities=capabilities,
                    exchange=exchange,
                )
            )
        except CallContextRefusedError:
            logger.exception("MCP call context refused (request %s)", request_id)
            return Reply(
                500, _jsonrpc.error_bytes(None, -32603, f"Internal error (request id {request_id})")
            )
        method = message.method
        try:
            # Tenant switches: discovery and calls see one (narrowed) surface.
            catalogue, surface = await switches.caller_surface(
                ctx, switched=method in NARROWED_METHODS
            )
        except UnknownSurfaceError:
            security_logger.warning("MCP caller without a surface refused: %r", ctx.role)
            body = _jsonrpc.error_bytes(
                None, FORBIDDEN, "Forbidden: no tools are available to this role"
            )
            return Reply(403, body)
        if catalogue.per_user:
            # A has_perm policy: the user's permissions, read once for this request in a
            # thread (they may need the database), before any policy asks for them.
            await sync_to_async(load_permissions)(ctx.actor)
        req = RpcRequest(
            message=message,
            era=era,
            ctx=ctx,
            surface=surface,
            catalogue=catalogue,
            headers=headers,
            exchange=exchange,
            capabilities=capabilities,
            task_requested=task_requested,
            state_token=state_token,
            input_responses=input_responses or {},
            streamable=streamable,
        )
        assert method is not None
        entry = era.methods.get(method)
        if entry is None:
            return error(era, message.request_id, METHOD_NOT_FOUND, "Method not found")
        handler, validate = entry
        if validate:
            try:
                wire_methods.validate_client_request(method, era.version, message.params)
            except KeyError:
                return error(era, message.request_id, METHOD_NOT_FOUND, "Method not found")
            except ValidationError:
                return error(era, message.request_id, INVALID_PARAMS, "Invalid request parameters")
        outcome = await handler(req)
        if isinstance(outcome, Reply | StreamReply):
            return outcome
        return render(req, outcome)
