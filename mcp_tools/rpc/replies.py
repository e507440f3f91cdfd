"""What a request is answered with: an HTTP status and a JSON body, made in one place.

``render`` turns a method's outcome into its reply; the era supplies its differences as data
(its HTTP status table, its result envelope) or, off the common path, by one method
(``capability_outcome``). ``error`` and ``result`` are the two shapes everything ends in.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundLadderRejection
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST

from mcp_tools import observability
from mcp_tools.asking import requeststate
from mcp_tools.codes import FORBIDDEN, REQUEST_CANCELLED
from mcp_tools.execution import bounds, runner
from mcp_tools.rpc import jsonrpc as _jsonrpc

if TYPE_CHECKING:
    from mcp_tools.eras import Era
    from mcp_tools.rpc.request import RpcRequest

logger = logging.getLogger("mcp_tools.invoke")


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


def plain(result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
    """A handshake-era result: as the method made it."""
    return result


def error(era: Era, request_id: Any, code: int, message: str, data: Any = None) -> Reply:
    """A JSON-RPC error, with the era's HTTP status for ``code`` (200 if it has none)."""
    return Reply(era.statuses.get(code, 200), _jsonrpc.error_bytes(request_id, code, message, data))


def unstorable(request_id: Any, field: str, value: Any, *, status: int = 200) -> Reply | None:
    """-32602 (``reason: "unstorable"``) when ``value``, which the server stores (a mailbox
    answer, declared capabilities, a task's capabilities), holds a NUL, a lone surrogate or a
    non-finite number (``1e999``): PostgreSQL would refuse it, as a 500, after the reply."""
    problems = _jsonrpc.unstorable_values(value, (field,))
    return unstorable_reply(request_id, field, problems, status=status) if problems else None


def unstorable_reply(
    request_id: Any, field: str, problems: list[dict[str, str]], *, status: int = 200
) -> Reply:
    """The -32602 of :func:`unstorable` for ``problems`` already found
    (``_jsonrpc.unstorable_values``): a caller on every call's path asks ``_jsonrpc`` itself
    and enters this module only to refuse."""
    text = f"Invalid {field}: text or numbers that cannot be stored"
    # A field is named by the keys on its path, themselves possibly lone surrogates.
    named = [
        {**p, "field": p["field"].encode("utf-8", "backslashreplace").decode()} for p in problems
    ]
    data = {"reason": "unstorable", "errors": named}
    return Reply(status, _jsonrpc.error_bytes(request_id, INVALID_PARAMS, text, data))


def result(
    era: Era, request_id: Any, body: dict[str, Any], server_info: Mapping[str, Any]
) -> Reply:
    """A success, in the era's envelope."""
    return Reply(200, _jsonrpc.result_bytes(request_id, era.envelope(body, server_info)))


def rejection(request_id: Any, refused: InboundLadderRejection) -> Reply:
    """A refusal by the SDK's inbound ladder (2026-07-28 envelope and headers)."""
    return Reply(
        ERROR_CODE_HTTP_STATUS.get(refused.code, 400),
        _jsonrpc.error_bytes(request_id, refused.code, refused.message, refused.data),
    )


def bound_refusal(era: Era, request_id: Any, bound: bounds.BoundError) -> Reply:
    """A call refused by its bounds (overloaded, timed out), with ``Retry-After`` when the
    refusal carries a retry hint."""
    refused = error(era, request_id, bound.code, bound.message, bound.data)
    retry_after = bounds.retry_after_header(bound)
    if retry_after is None:
        return refused
    return Reply(refused.status, refused.body, headers=(("Retry-After", retry_after),))


def scopes_required(request_id: Any, scopes: tuple[str, ...], message: str) -> Reply:
    """403 ``insufficient_scope``: the view adds the challenge naming ``scopes``."""
    body = _jsonrpc.error_bytes(request_id, FORBIDDEN, message, {"requiredScopes": list(scopes)})
    return Reply(403, body, required_scopes=scopes)


def render(req: RpcRequest, outcome: runner.Outcome | Reply) -> Reply:
    """The reply to ``outcome`` (the one place outcomes become replies)."""
    era, rid = req.era, req.rid
    if isinstance(outcome, runner.Done):
        observability.note_result(outcome.value)  # observability: spares reading the body back
        return Reply(
            200, _jsonrpc.result_bytes(rid, era.envelope(outcome.value, req.catalogue.server_info))
        )
    if isinstance(outcome, Reply):
        return outcome
    if isinstance(outcome, runner.Failed):
        return error(era, rid, outcome.code, outcome.message, outcome.data)
    if isinstance(outcome, bounds.BoundError):
        return bound_refusal(era, rid, outcome)
    if isinstance(outcome, runner.Cancelled):
        return error(era, rid, REQUEST_CANCELLED, "Request cancelled")
    if isinstance(outcome, runner.StateRefused):
        return error(era, rid, INVALID_PARAMS, "Invalid request state", {"reason": outcome.reason})
    if isinstance(outcome, runner.ScopesRequired):
        return scopes_required(rid, outcome.scopes, outcome.message)
    if isinstance(outcome, runner.NeedsInput):
        assert req.binding is not None, "the method binds the request state it asks with"
        return _input_required(req, req.binding, outcome.requests)
    if isinstance(outcome, runner.NeedsCapability):
        return render(req, era.capability_outcome(outcome))
    assert isinstance(outcome, runner.ToTask)
    if outcome.task is None:
        return error(
            era,
            rid,
            bounds.OVERLOADED,
            "Server overloaded: too many tasks running; retry shortly",
            {"retryAfterSeconds": 1},
        )
    return result(era, rid, era.task_created(outcome.task), req.catalogue.server_info)


def _input_required(
    req: RpcRequest, binding: requeststate.Binding, requests: dict[str, Any]
) -> Reply:
    """The ``InputRequiredResult`` asking ``requests``, with a fresh signed request state that
    carries every answer so far (a state too large to carry is an internal error, logged)."""
    try:
        state = requeststate.issue(binding, answers=req.exchange.answers, pending=list(requests))
    except ValueError:
        logger.exception("MCP request state too large (%s %s)", binding.method, binding.name)
        return error(req.era, req.rid, -32603, "Internal error: the answers are too large to carry")
    body = {"resultType": "input_required", "inputRequests": requests, "requestState": state}
    return result(req.era, req.rid, body, req.catalogue.server_info)


INVALID_BODY_REPLY: Final = Reply(
    400,
    _jsonrpc.error_bytes(
        None, INVALID_REQUEST, "Body must be a single JSON-RPC request or notification object"
    ),
)
