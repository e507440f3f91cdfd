"""What a dispatch answers: the era of the request and a reply (status and JSON body).

Shared by ``mcp_tools.protocol`` and the feature handlers (resources, prompts, completions,
tasks) so that every answer is shaped by the same few functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundLadderRejection
from mcp_types import SERVER_INFO_META_KEY

from mcp_tools import _jsonrpc, calls


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


def bound_refusal(era: Era, request_id: Any, bound: calls.BoundError) -> Reply:
    """A call refused by its bounds (overloaded, timed out), with ``Retry-After`` when the
    refusal carries a retry hint."""
    refused = error(era, request_id, bound.code, bound.message, bound.data)
    retry_after = calls.retry_after_header(bound)
    if retry_after is None:
        return refused
    return Reply(refused.status, refused.body, headers=(("Retry-After", retry_after),))


def error(era: Era, request_id: Any, code: int, message: str, data: Any = None) -> Reply:
    """A JSON-RPC error: HTTP 200 in the handshake era, the SDK's status table in 2026-07-28."""
    status = ERROR_CODE_HTTP_STATUS.get(code, 200) if era.modern else 200
    return Reply(status, _jsonrpc.error_bytes(request_id, code, message, data))


def rejection(request_id: Any, refused: InboundLadderRejection) -> Reply:
    return Reply(
        ERROR_CODE_HTTP_STATUS.get(refused.code, 400),
        _jsonrpc.error_bytes(request_id, refused.code, refused.message, refused.data),
    )


def modern_result(
    result: dict[str, Any], server_info: Mapping[str, Any], result_type: str = "complete"
) -> dict[str, Any]:
    """A 2026-07-28 result: ``resultType`` and the server info in ``_meta``."""
    meta = {**result.get("_meta", {}), SERVER_INFO_META_KEY: dict(server_info)}
    return {**result, "resultType": result_type, "_meta": meta}


def result(
    era: Era, request_id: Any, body: dict[str, Any], server_info: Mapping[str, Any]
) -> Reply:
    """A success, with the 2026-07-28 envelope when the request speaks it."""
    if era.modern:
        body = modern_result(body, server_info, body.get("resultType", "complete"))
    return Reply(200, _jsonrpc.result_bytes(request_id, body))
