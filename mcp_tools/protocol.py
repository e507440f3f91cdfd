"""Both MCP protocol eras over one stateless, single-exchange dispatch.

Handshake era (2024-11-05 … 2025-11-25): ``initialize`` negotiates a version but creates no
state; ``tools/list`` and ``tools/call`` work without it. JSON-RPC errors travel with HTTP 200.
2026-07-28: every request carries its ``_meta`` envelope and the ``MCP-Protocol-Version``/
``Mcp-Method``/``Mcp-Name`` headers (checked by the SDK's own ladder); errors map to HTTP
statuses by the SDK's table (-32601 → 404, -32602/-32020/-32022 → 400).

Nothing here keeps state between requests: the only inputs are the request and the prepared,
immutable catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    unsupported_protocol_version_rejection,
)
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types import methods as wire_methods
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError

from mcp_tools import _jsonrpc, handlers, tasks, toolcall
from mcp_tools.context import CallContext
from mcp_tools.replies import Era, Reply
from mcp_tools.replies import error as _error
from mcp_tools.replies import rejection as _rejection
from mcp_tools.streaming import StreamReply
from mcp_tools.surfaces import Catalogue, Surface

# Assumed when a handshake-era request carries no MCP-Protocol-Version (spec 2025-11-25).
DEFAULT_HANDSHAKE_VERSION: Final = "2025-03-26"
MODERN_VERSION: Final = MODERN_PROTOCOL_VERSIONS[-1]
_FEATURE_METHODS: Final = frozenset(
    {
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
_MODERN_METHODS: Final = frozenset(
    {"server/discover", "tools/list", "tools/call", *_FEATURE_METHODS}
)
_HANDSHAKE_METHODS: Final = frozenset(
    {"initialize", "ping", "tools/list", "tools/call", "logging/setLevel", *_FEATURE_METHODS}
)


def detect_era(header_version: str | None, message: _jsonrpc.Message) -> Era:
    """Route by the ``MCP-Protocol-Version`` header, as the SDK does.

    A request carrying the 2026-07-28 envelope is modern whatever its header says (a missing
    or disagreeing header is then -32020); an unknown header version is a modern-era
    question too (-32022 with the supported list).
    """
    meta = (message.params or {}).get("_meta")
    if isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta:
        # The body speaks 2026-07-28; its headers must agree (the ladder answers -32020).
        return Era(True, header_version or str(meta.get(PROTOCOL_VERSION_META_KEY)))
    if header_version is None:
        return Era(False, DEFAULT_HANDSHAKE_VERSION)
    return Era(header_version not in HANDSHAKE_PROTOCOL_VERSIONS, header_version)


def declared_capabilities(era: Era, message: _jsonrpc.Message) -> Mapping[str, Any] | None:
    """The client's capabilities as declared on this 2026-07-28 request; ``None`` (unknown) in
    the handshake era."""
    if not era.modern:
        return None
    meta = (message.params or {}).get("_meta")
    declared = meta.get(CLIENT_CAPABILITIES_META_KEY) if isinstance(meta, Mapping) else None
    return declared if isinstance(declared, Mapping) else {}


def routing_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The three routing headers, lower-cased names, as the SDK ladder expects them."""
    found = {}
    for name in (MCP_PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_NAME_HEADER):
        value = headers.get(name)
        if value is not None:
            found[name] = value
    return found


def modern_notification(era: Era, message: _jsonrpc.Message) -> Reply | None:
    """A 2026-07-28 notification at an unsupported version is refused; others → 202."""
    rejection = unsupported_protocol_version_rejection(era.version)
    return _rejection(None, rejection) if rejection is not None else None


def check_modern_envelope(message: _jsonrpc.Message, headers: Mapping[str, str]) -> Reply | None:
    """Run the SDK's ladder (envelope, header agreement, supported version) before dispatch."""
    verdict = classify_inbound_request(message.raw, headers=routing_headers(headers))
    if isinstance(verdict, InboundLadderRejection):
        return _rejection(message.request_id, verdict)
    return None


def _validate_params(era: Era, message: _jsonrpc.Message) -> Reply | None:
    assert message.method is not None
    try:
        wire_methods.validate_client_request(message.method, era.version, message.params)
    except KeyError:
        return _error(era, message.request_id, METHOD_NOT_FOUND, "Method not found")
    except ValidationError:
        return _error(era, message.request_id, INVALID_PARAMS, "Invalid request parameters")
    return None


def _served(era: Era, method: str) -> bool:
    return method in (_MODERN_METHODS if era.modern else _HANDSHAKE_METHODS)


async def dispatch(
    message: _jsonrpc.Message,
    *,
    era: Era,
    ctx: CallContext,
    surface: Surface,
    catalogue: Catalogue,
    headers: Mapping[str, str],
    streamable: bool = False,
) -> Reply | StreamReply:
    """Answer one JSON-RPC request for the caller's surface.

    ``streamable``: the transport may answer with an event stream (ASGI, and the client
    accepts ``text/event-stream``); only a ``tools/call`` that reports something uses it.
    """
    method = message.method
    assert method is not None
    request_id = message.request_id
    if tasks.served(era, method):
        # The tasks projections (mcp_tools.tasks): not in the SDK's method tables.
        return await tasks.handle(
            message, era=era, ctx=ctx, surface=surface, catalogue=catalogue, headers=headers
        )
    if not _served(era, method):
        return _error(era, request_id, METHOD_NOT_FOUND, "Method not found")
    invalid = _validate_params(era, message)
    if invalid is not None:
        return invalid
    params = message.params or {}

    if method == "initialize":
        requested = params.get("protocolVersion")
        negotiated = (
            requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        )
        return Reply(
            200, _jsonrpc.result_bytes(request_id, catalogue.initialize_results[negotiated])
        )
    if method == "ping":
        return Reply(200, _jsonrpc.result_bytes(request_id, b"{}"))
    if method == "server/discover":
        return Reply(200, _jsonrpc.result_bytes(request_id, catalogue.discover_result))
    if method == "tools/list":
        cursor = params.get("cursor")
        page = (
            surface.page(era.version, cursor) if cursor is None or isinstance(cursor, str) else None
        )
        if page is None:
            index = surface.page_index(cursor) if isinstance(cursor, str | None) else None
            template = surface.dynamic_pages.get(era.version, {}).get(index or 0)
            if index is None or template is None:
                return _error(era, request_id, INVALID_PARAMS, "Invalid cursor")
            # This page holds an identity factory's tool: its definition is built now.
            return await toolcall.list_page(
                template, era=era, ctx=ctx, surface=surface, request_id=request_id
            )
        return Reply(200, _jsonrpc.result_bytes(request_id, page))
    if method in handlers.METHODS:
        return await handlers.handle(
            message, era=era, ctx=ctx, surface=surface, catalogue=catalogue, headers=headers
        )
    return await toolcall.call_tool(
        message,
        era=era,
        ctx=ctx,
        surface=surface,
        catalogue=catalogue,
        headers=headers,
        streamable=streamable,
    )


def envelope_error(era_modern: bool, exc: _jsonrpc.EnvelopeError) -> Reply:
    """Malformed bodies are a 400 in both eras (the SDK does the same)."""
    del era_modern
    return Reply(400, _jsonrpc.error_bytes(exc.request_id, exc.code, exc.message))


INVALID_BODY_REPLY: Final = Reply(
    400,
    _jsonrpc.error_bytes(
        None, INVALID_REQUEST, "Body must be a single JSON-RPC request or notification object"
    ),
)
