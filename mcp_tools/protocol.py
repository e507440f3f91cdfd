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
from dataclasses import dataclass, replace
from typing import Any, Final

from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    unsupported_protocol_version_rejection,
    validate_mcp_param_headers,
)
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
)
from mcp_types import methods as wire_methods
from mcp_types.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
)
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)
from pydantic import ValidationError

from mcp_tools import _jsonrpc, calls, conf, observability
from mcp_tools.context import CallContext
from mcp_tools.registry import ToolSpec
from mcp_tools.surfaces import Catalogue, Surface
from tenancy import evaluate

# Assumed when a handshake-era request carries no MCP-Protocol-Version (spec 2025-11-25).
DEFAULT_HANDSHAKE_VERSION: Final = "2025-03-26"
MODERN_VERSION: Final = MODERN_PROTOCOL_VERSIONS[-1]
_MODERN_METHODS: Final = frozenset({"server/discover", "tools/list", "tools/call"})
_HANDSHAKE_METHODS: Final = frozenset({"initialize", "ping", "tools/list", "tools/call"})


@dataclass(frozen=True)
class Era:
    """Which era a request speaks and at which version."""

    modern: bool
    version: str


@dataclass(frozen=True)
class Reply:
    """An HTTP status and a JSON body (``None`` → empty body).

    ``required_scopes`` marks a 403 step-up: the view adds the ``insufficient_scope``
    challenge naming them. ``headers`` go on the HTTP response (``Retry-After`` of an
    overloaded refusal).
    """

    status: int
    body: bytes | None
    required_scopes: tuple[str, ...] | None = None
    headers: tuple[tuple[str, str], ...] = ()


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


def _missing_capabilities(spec: ToolSpec, ctx: CallContext) -> list[str]:
    declared = ctx.client_capabilities or {}
    return [name for name in spec.required_client_capabilities if name not in declared]


def _error(era: Era, request_id: Any, code: int, message: str, data: Any = None) -> Reply:
    status = ERROR_CODE_HTTP_STATUS.get(code, 200) if era.modern else 200
    return Reply(status, _jsonrpc.error_bytes(request_id, code, message, data))


def _rejection(request_id: Any, rejection: InboundLadderRejection) -> Reply:
    return Reply(
        ERROR_CODE_HTTP_STATUS.get(rejection.code, 400),
        _jsonrpc.error_bytes(request_id, rejection.code, rejection.message, rejection.data),
    )


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


def _modern_result(result: dict[str, Any], catalogue: Catalogue) -> dict[str, Any]:
    return {
        **result,
        "resultType": "complete",
        "_meta": {SERVER_INFO_META_KEY: dict(catalogue.server_info)},
    }


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
) -> Reply:
    """Answer one JSON-RPC request for the caller's surface."""
    method = message.method
    assert method is not None
    request_id = message.request_id
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
            return _error(era, request_id, INVALID_PARAMS, "Invalid cursor")
        return Reply(200, _jsonrpc.result_bytes(request_id, page))
    return await _call_tool(
        message, era=era, ctx=ctx, surface=surface, catalogue=catalogue, headers=headers
    )


def required_scopes(spec: ToolSpec) -> tuple[str, ...]:
    """Every scope a call of ``spec`` needs (sorted): read, and write for a write tool."""
    needed = {str(conf.get("READ_SCOPE"))}
    if not spec.read_only:
        needed.add(str(conf.get("WRITE_SCOPE")))
    return tuple(sorted(needed))


def _scope_refusal(spec: ToolSpec, ctx: CallContext, request_id: Any) -> Reply | None:
    """403 ``insufficient_scope`` when the credential's scopes do not cover the call.

    The role decided the tool is visible; the scopes narrow what this credential may do with
    it (role ∩ scopes). Never a silent failure: the client can step up with the named scopes.
    """
    granted = ctx.actor.scopes
    if granted is None:
        return None
    needed = required_scopes(spec)
    if set(needed) <= granted:
        return None
    return Reply(
        403,
        _jsonrpc.error_bytes(
            request_id,
            calls.FORBIDDEN,
            f"Forbidden: this tool needs the scopes {' '.join(needed)}; authorize them again",
            {"requiredScopes": list(needed)},
        ),
        required_scopes=needed,
    )


def _visible(surface: Surface, ctx: CallContext, name: Any) -> ToolSpec | None:
    spec = surface.tools.get(name) if isinstance(name, str) else None
    # Defense in depth: the surface was built for the role; ask the live policy again.
    if spec is None or not evaluate(spec.policy, ctx.actor):
        return None
    return spec


@observability.observed_tool_call  # observability: one log record, metric sample, span per call
async def _call_tool(
    message: _jsonrpc.Message,
    *,
    era: Era,
    ctx: CallContext,
    surface: Surface,
    catalogue: Catalogue,
    headers: Mapping[str, str],
) -> Reply:
    params = message.params or {}
    request_id = message.request_id
    name = params.get("name")
    spec = _visible(surface, ctx, name)
    if spec is None:
        # Hidden and unknown tools are indistinguishable: absence is not a hint.
        return _error(era, request_id, INVALID_PARAMS, f"Unknown tool: {name}")
    refused = _scope_refusal(spec, ctx, request_id)
    if refused is not None:
        return refused
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        return _error(era, request_id, INVALID_PARAMS, "arguments must be an object")
    if era.modern and spec.has_param_headers:
        mismatch = validate_mcp_param_headers(spec.input_schema, arguments, headers)
        if mismatch is not None:
            return _rejection(request_id, mismatch)
    validated = calls.validate_arguments(spec, arguments)
    missing = _missing_capabilities(spec, ctx)
    if isinstance(validated, dict):
        result = validated
    elif missing:
        if era.modern:
            return _error(
                era,
                request_id,
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Tool {spec.name} requires client capabilities: {', '.join(missing)}",
                {"requiredCapabilities": {name: {} for name in missing}},
            )
        result = calls.error_result(
            calls.CODE_CAPABILITY_REQUIRED,
            f"This tool needs a client that supports {', '.join(missing)} "
            "(MCP 2026-07-28 declares it per request).",
            {"requiredCapabilities": missing},
        )
    else:
        body = calls.run_read if spec.read_only else calls.run_write
        try:
            result = await calls.run_bounded(lambda: body(spec, ctx, validated))
        except calls.BoundError as exc:
            refused = _error(era, request_id, exc.code, exc.message, exc.data)
            retry_after = calls.retry_after_header(exc)
            if retry_after is not None:
                refused = replace(refused, headers=(("Retry-After", retry_after),))
            return refused
    observability.note_result(result)  # observability
    if era.modern:
        result = _modern_result(result, catalogue)
    return Reply(200, _jsonrpc.result_bytes(request_id, result))


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
