"""A write tool's body: run inside ``idempotency.IdempotentUnit`` (claim → execute → publish)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel

from mcp_tools.codes import CODE_IN_PROGRESS, CODE_KEY_REUSED
from mcp_tools.context import CallContext
from mcp_tools.error_pages import database_unavailable
from mcp_tools.execution.results import (
    _invoke,
    _structured,
    error_result,
    failure_result,
    internal_error_result,
    structured_result,
    translate,
)
from mcp_tools.registry import IDEMPOTENCY_KEY_FIELD, REPLAYED_FIELD, ToolSpec

logger = logging.getLogger("mcp_tools.calls")


def run_write(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker-thread body of a write tool: inside the idempotent unit.

    Domain failures are ``Failure`` (never stored; the claim is released); a replay returns
    the stored result with ``replayed: true`` and runs nothing.
    """
    import idempotency as port

    key: str = getattr(validated, IDEMPOTENCY_KEY_FIELD)
    arguments = validated.model_dump(mode="json", by_alias=True, exclude={IDEMPOTENCY_KEY_FIELD})
    scope = port.IdempotencyScope(
        tenant_id=str(ctx.tenant_id),
        # The port's keys are at most 64 characters; tool names may be 128.
        operation_key=port.sha256_hex(spec.operation_key),
        # Tenant-scoped, exactly like the HTTP adapter's caller key (SHA-256 of the raw key):
        # one key space per tenant, namespaced per tool by the operation key. Keeping the two
        # adapters' caller keys identical is what makes guard 19 (HTTP and MCP never alias)
        # a real test of the operation-key namespaces.
        caller_key=port.sha256_hex(key),
        # The acting user is part of the request, bound exactly as the HTTP adapter binds it: a
        # second member reusing the key is refused (KeyReused), never handed the first
        # member's result.
        fingerprint=port.bound_fingerprint(
            port.fingerprint_json(arguments), user_id=str(ctx.user_id)
        ),
    )

    def work() -> Any:
        try:
            value = _invoke(spec, ctx, validated)
        except Exception as exc:
            failure = translate(exc)
            if failure is None:
                raise
            return port.Failure(failure)
        return port.Success(_structured(spec, value))

    try:
        outcome = port.IdempotentUnit().run(scope, work)
    except Exception as exc:
        if database_unavailable(exc):
            raise  # nothing committed; the client retries the same key after the 503
        logger.exception("MCP tool %s failed (request %s)", spec.name, ctx.request_id)
        return internal_error_result(spec, ctx.request_id)
    if isinstance(outcome, port.Executed):
        if isinstance(outcome.result, port.Failure):
            return failure_result(outcome.result.error)
        return structured_result({**outcome.result.result, REPLAYED_FIELD: False})
    if isinstance(outcome, port.Replayed):
        return structured_result({**outcome.result, REPLAYED_FIELD: True})
    if isinstance(outcome, port.KeyConflict):
        return error_result(
            CODE_KEY_REUSED,
            "This idempotencyKey was already used with different arguments; "
            "use a new key for a new write.",
        )
    if isinstance(outcome, port.InProgress):
        retry = max(float(outcome.retry_after), 0.0)
        return error_result(
            CODE_IN_PROGRESS,
            f"An identical call with this idempotencyKey is still running; retry in {retry:g} s.",
            {"retryAfterSeconds": retry},
        )
    raise TypeError(f"unexpected idempotency outcome {outcome!r}")
