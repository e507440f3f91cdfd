"""A write tool's run: its idempotency scope and its idempotent unit (claim → execute → publish).

``run_write`` is the one entry for a write (``mcp_tools.execution.runner`` chooses it); the
tool's body and the ``CallToolResult`` shapes are ``mcp_tools.execution.results``'.
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from django.db import DEFAULT_DB_ALIAS, connections
from pydantic import BaseModel

from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_FIELD, REPLAYED_FIELD, ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.codes import CODE_IN_PROGRESS, CODE_KEY_REUSED
from mcp_tools.exceptions import ToolError, ToolFailure
from mcp_tools.execution import results
from mcp_tools.serving.error_pages import database_unavailable
from tenancy import rls

if TYPE_CHECKING:
    from idempotency import IdempotencyScope

logger = logging.getLogger("mcp_tools.calls")


def scope_for(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> IdempotencyScope:
    """The idempotent unit's scope of one write call (tenant, tool, caller's key, request)."""
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
    return scope


def _write_scope(ctx: CallContext) -> AbstractContextManager[None]:
    """The tools' role for a write, inside its idempotent unit's transaction: one statement
    when that transaction is the outermost (the worker thread's own), else ``rls.scoped``."""
    connection = connections[DEFAULT_DB_ALIAS]
    if len(connection.atomic_blocks) == 1 and rls.enabled():
        rls.take(ctx.tenant.id)
        return nullcontext()
    return rls.scoped(ctx.tenant.id)


def run_write(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker-thread body of a write tool: inside the idempotent unit.

    Domain failures are ``Failure`` (never stored; the claim is released); a replay returns
    the stored result with ``replayed: true`` and runs nothing.
    """
    import idempotency as port

    unit = spec.write_unit
    try:
        scope = scope_for(spec, ctx, validated) if unit is None else unit.scope(ctx, validated)
    except ToolError as refused:  # a shared unit's authorization, before any claim or replay
        return results.error_result(refused.code, refused.message, refused.data)

    def work() -> Any:
        try:
            with _write_scope(ctx):
                value = results.invoke(spec, ctx, validated)
        except Exception as exc:
            failure = results.translate(exc)
            if failure is None:
                raise
            return port.Failure(failure)
        if unit is not None:
            return port.Success(unit.published(value))
        try:
            return port.Success(results.model_payload(spec, value))
        except ToolError as refused:  # not the declared model: the write rolls back
            return port.Failure(ToolFailure(refused.code, refused.message, refused.data))

    try:
        outcome = port.IdempotentUnit().run(scope, work)
    except Exception as exc:
        if database_unavailable(exc):
            raise  # nothing committed; the client retries the same key after the 503
        logger.exception("MCP tool %s failed (request %s)", spec.name, ctx.request_id)
        return results.internal_error_result(spec, ctx.request_id)
    if isinstance(outcome, port.Executed):
        if isinstance(outcome.result, port.Failure):
            return results.failure_result(outcome.result.error)
        published = outcome.result.result
        payload = published if unit is None else unit.structured(published)
        return results.structured_result({**payload, REPLAYED_FIELD: False})
    if isinstance(outcome, port.Replayed):
        payload = outcome.result if unit is None else unit.structured(outcome.result)
        return results.structured_result({**payload, REPLAYED_FIELD: True})
    if isinstance(outcome, port.KeyConflict):
        return results.error_result(
            CODE_KEY_REUSED,
            "This idempotencyKey was already used with different arguments; "
            "use a new key for a new write.",
        )
    if isinstance(outcome, port.InProgress):
        retry = max(float(outcome.retry_after), 0.0)
        return results.error_result(
            CODE_IN_PROGRESS,
            f"An identical call with this idempotencyKey is still running; retry in {retry:g} s.",
            {"retryAfterSeconds": retry},
        )
    raise TypeError(f"unexpected idempotency outcome {outcome!r}")
