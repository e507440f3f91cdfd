"""``initialize``, ``ping``, ``logging/setLevel`` (handshake era) and ``server/discover``
(2026-07-28): answered from what the catalogue prepared at start-up."""

from __future__ import annotations

from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcp_tools.call.exchange import LOG_LEVELS
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc.replies import Reply, error
from mcp_tools.rpc.request import RpcRequest


async def initialize(req: RpcRequest) -> Reply:
    requested = req.params.get("protocolVersion")
    negotiated = requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    return Reply(200, _jsonrpc.result_bytes(req.rid, req.catalogue.initialize_results[negotiated]))


async def ping(req: RpcRequest) -> Reply:
    return Reply(200, _jsonrpc.result_bytes(req.rid, b"{}"))


async def discover(req: RpcRequest) -> Reply:
    return Reply(200, _jsonrpc.result_bytes(req.rid, req.catalogue.discover_result))


async def set_level(req: RpcRequest) -> Reply:
    # Accepted, not remembered: a stateless server has no session to keep a level in, so
    # streamed log messages use MCP_TOOLS_LOG_LEVEL (see docs/mcp_tools.md).
    if req.params.get("level") not in LOG_LEVELS:
        return error(req.era, req.rid, INVALID_PARAMS, "Bad request")
    return Reply(200, _jsonrpc.result_bytes(req.rid, b"{}"))
