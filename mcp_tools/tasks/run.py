"""The run of one task: create it, hand it to the engine, claim it in a worker, resolve its
owner and tool again, run it from the top, record the outcome; and the same tasks for another
protocol (``run_as_task``, ``get_task``, ``cancel_task``).

Protocol-neutral: the MCP wire shapes of a task are in ``mcp_tools.methods.tasks``; the store is
``mcp_tools.tasks.store``, the in-process pool and the queue ``mcp_tools.tasks.engine``.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db import connection, transaction
from mcp_types.jsonrpc import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
)

from mcp_tools import conf
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call.callers import CallerGoneError, KeptCaller, live_context, unauthenticated_error
from mcp_tools.call.context import CallContext
from mcp_tools.call.exchange import (
    ClientCapabilityMissing,
    ContinueAsTask,
    Exchange,
    InputRequired,
    TaskCancelled,
    TaskHooks,
)
from mcp_tools.call.own_connection import on_own_connection
from mcp_tools.catalogue import surfaces
from mcp_tools.codes import CODE_CAPABILITY_REQUIRED, TIMED_OUT
from mcp_tools.exceptions import UnknownSurfaceError
from mcp_tools.execution.arguments import validate_arguments
from mcp_tools.execution.results import error_result, internal_error_result
from mcp_tools.execution.runner import run_tool
from mcp_tools.tasks import engine, run_task
from mcp_tools.tasks.engine import task_engine
from mcp_tools.tasks.store import Owner, TaskStore, TaskView
from tenancy import AuthenticationFailedError, evaluate, rls

logger = logging.getLogger(__name__)
# How often a waiting worker re-reads its task's status (cancellation) at most.
CANCEL_CHECK_SECONDS: Final = 0.25


def _requeue(task_id: str) -> bool:
    """The store's hook for a task queued again after its worker was lost."""
    if engine.in_process() and not task_engine.reserve():
        return False  # no slot here: the store records the task failed instead
    dispatch(task_id)
    return True


store = TaskStore(on_requeue=_requeue)


def owner_of(ctx: CallContext) -> Owner:
    return Owner(tenant_key=str(ctx.tenant_id), owner_key=str(ctx.user_id))


# --- creating and running -----------------------------------------------------------------


def create(
    ctx: CallContext,
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    answers: Any,
    *,
    context_id: str = "",
    capabilities: Mapping[str, Any] | None = None,
    can_ask: bool = False,
) -> TaskView | None:
    """Worker thread: commit a ``working`` task and hand it to the engine, in one transaction.

    ``None`` when the in-process engine has no free slot (the engine's queue has no such
    bound). The task keeps what its run needs: ``arguments`` (with a write's
    ``idempotencyKey``), the ``answers`` gathered so far, the client's ``capabilities`` and
    whether it can answer input requests (``can_ask``).
    """
    local = engine.in_process()
    if local and not task_engine.reserve():
        return None
    try:
        with transaction.atomic():
            view = store.create(
                owner_of(ctx),
                operation=spec.name,
                arguments=arguments,
                answers=answers,
                ttl_seconds=float(conf.get("TASK_TTL_SECONDS")),
                request_id=ctx.request_id,
                context_id=context_id,
                membership_key=str(ctx.actor.membership_id),
                scopes=ctx.actor.scopes,
                credential_epoch=ctx.actor.credential_epoch,
                token_id=ctx.actor.token_id,
                protocol_version=ctx.protocol_version,
                capabilities=capabilities,
                can_ask=can_ask,
                max_attempts=1 + spec.task_retry,
            )
            dispatch(view.task_id)
    except BaseException:
        if local:
            task_engine.release()
        raise
    return view


def dispatch(task_id: str) -> None:
    """Hand ``task_id`` to the engine (inside the transaction committing it; an in-process
    slot is already reserved)."""
    if engine.in_process():
        transaction.on_commit(lambda: task_engine.start(task_id, lambda: execute(task_id)))
    else:
        engine.enqueue(run_task, task_id)


class _Unavailable(Exception):
    """The task's owner or tool cannot be resolved any more (the task fails)."""


def execute(task_id: str) -> None:
    """Run the stored task ``task_id`` in this process (a worker of the engine, or a thread of
    the in-process one): claim it, resolve its owner and tool again, run, record the outcome.
    Nothing happens when the task is not queued (finished, cancelled, claimed by a live worker,
    out of attempts)."""
    store.reap_lapsed()  # tasks whose worker was lost are requeued (or failed) by any worker
    view = store.claim(task_id, lease_seconds=float(conf.get("TASK_LEASE_SECONDS")))
    if view is None:
        return
    with task_engine.holding(task_id):
        try:
            spec, ctx, validated = _resolve(view)
        except _Unavailable as gone:
            store.finish(task_id, error={"code": INVALID_PARAMS, "message": str(gone)})
            return
        except AuthenticationFailedError as refused:
            store.finish(task_id, error=unauthenticated_error(refused))
            return
        _job(
            task_id,
            spec,
            ctx,
            validated,
            dict(view.answers),
            view.capabilities,
            view.can_ask,
        )


def _resolve(view: TaskView) -> tuple[ToolSpec, CallContext, Any]:
    """The task's ``CallContext`` and tool, from the store only: the owner's live membership
    in the task's tenant (its role and row scope as they are now), the scopes the credential
    had when the task was accepted, the tool on that role's prepared surface."""
    kept = KeptCaller(
        tenant_key=view.tenant_key,
        owner_key=view.owner_key,
        membership_key=view.membership_key,
        credential_epoch=view.credential_epoch,
        token_id=view.token_id,
        scopes=None if view.scopes is None else frozenset(view.scopes),
    )
    # The request path's own rule (token revoked or expired, credentials superseded, user or
    # member disabled, tenant suspended): the task fails with the code its owner's next
    # request with that credential gets, before any of its work runs.
    try:
        ctx = live_context(
            kept,
            request_id=view.request_id or f"task-{view.task_id}",
            protocol_version=view.protocol_version,
            client_capabilities=view.capabilities,
        )
    except CallerGoneError as gone:
        raise _Unavailable("The task's owner is no longer a member of its tenant") from gone
    actor = ctx.actor
    try:
        _catalogue, surface = surfaces.surface_for(actor.role)
    except UnknownSurfaceError as exc:
        raise _Unavailable("The task's tool is no longer available") from exc
    spec = surface.tools.get(view.operation)
    if spec is None or not evaluate(spec.policy, actor):
        raise _Unavailable("The task's tool is no longer available")
    validated = validate_arguments(spec, view.arguments)
    if isinstance(validated, dict):
        raise _Unavailable("The task's tool is no longer available")
    return spec, ctx, validated


class _Hooks(TaskHooks):
    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        self._checked = 0.0
        self._gone = False

    def progress(self, message: str) -> None:
        lease = float(conf.get("TASK_LEASE_SECONDS"))
        record = functools.partial(store.progress, self.task_id, message, lease_seconds=lease)
        # Under row-level security the tool's queries run in one transaction (tenancy.rls), a
        # read's read-only: the progress is written beside it, as the mailbox is, so that it
        # is written at all and shows at once. Off, exactly as before.
        if rls.enabled() and connection.in_atomic_block:
            recorded = on_own_connection(record, name="mcp-task-progress")
        else:
            recorded = record()
        if not recorded:
            self._gone = True

    def cancelled(self) -> bool:
        now = time.monotonic()
        if not self._gone and now - self._checked >= CANCEL_CHECK_SECONDS:
            self._checked = now
            self._gone = not store.is_working(self.task_id)
        return self._gone


def _job(
    task_id: str,
    spec: ToolSpec,
    ctx: CallContext,
    validated: Any,
    answers: dict[str, Any],
    capabilities: Mapping[str, Any] | None,
    can_ask: bool,
) -> None:
    exchange = Exchange(
        can_ask=can_ask,
        capabilities=capabilities,
        answers=answers,
        tasks_negotiated=True,
        task=_Hooks(task_id),
        deadline=time.monotonic() + float(conf.get("TASK_TIMEOUT_SECONDS")),
    )
    task_ctx = ctx._with_exchange(exchange)
    try:
        outcome = run_tool(spec, task_ctx, validated)
    except InputRequired as needed:
        store.park(task_id, needed.requests, exchange.answers)
        return
    except TaskCancelled:
        # Cancelled by the client (the row says so already) or past the task deadline.
        timeout = float(conf.get("TASK_TIMEOUT_SECONDS"))
        store.finish(
            task_id,
            error={
                "code": TIMED_OUT,
                "message": f"The task exceeded its {timeout:g} s deadline",
                "data": {"timeoutSeconds": timeout},
            },
        )
        return
    except ClientCapabilityMissing as missing:
        store.finish(
            task_id,
            error={
                "code": MISSING_REQUIRED_CLIENT_CAPABILITY,
                "message": "The task needs a client capability this client did not declare",
                "data": {"requiredCapabilities": missing.required},
            },
        )
        return
    except Exception:
        logger.exception("MCP task %s (%s) failed", task_id, spec.name)
        outcome = internal_error_result(spec, ctx.request_id)
    if outcome == internal_error_result(spec, ctx.request_id):
        # An internal failure is a protocol-level error: the task failed (not a tool error).
        store.finish(
            task_id,
            error={
                "code": -32603,
                "message": f"Internal error (request id {ctx.request_id})",
                "data": {"requestId": ctx.request_id},
            },
        )
        return
    store.finish(task_id, result=outcome)


# --- the same tasks for another protocol ----------------------------------------------------


@dataclass(frozen=True)
class Handover:
    """What ``run_as_task`` did: the tool finished before it handed over (``result``, a
    ``CallToolResult``, possibly ``isError``), or a task now runs (``task``). Neither: no task
    slot was free (answer "overloaded", as ``tools/call`` does)."""

    result: dict[str, Any] | None = None
    task: TaskView | None = None


def run_as_task(
    ctx: CallContext,
    spec: ToolSpec,
    validated: Any,
    *,
    arguments: Mapping[str, Any],
    context_id: str = "",
) -> Handover:
    """Worker thread (inside ``bounds.run_bounded``): run ``spec`` as for a client that
    negotiated tasks and declared no other capability.

    The tool runs synchronously until ``ctx.continue_as_task()`` (argument and domain errors
    before it are its result); from there it is a task of the caller (tenant + acting user) in
    this store and runner, re-run from the top in a task worker under the task deadline, with
    ``arguments`` (as validated into ``validated``) kept on the row. A tool that asks the client
    for input before handing over gets ``Client.CapabilityRequired``: the caller has no way to
    answer here.
    """
    exchange = Exchange(can_ask=True, tasks_negotiated=True)
    call_ctx = ctx._with_exchange(exchange)
    try:
        return Handover(result=run_tool(spec, call_ctx, validated))
    except ContinueAsTask:
        pass
    except (InputRequired, ClientCapabilityMissing):
        return Handover(
            result=error_result(
                CODE_CAPABILITY_REQUIRED,
                "This tool asks the client for input (elicitation, sampling or roots), "
                "which only an MCP client can answer.",
            )
        )
    return Handover(
        task=create(
            call_ctx, spec, arguments, exchange.answers, context_id=context_id, can_ask=True
        )
    )


def get_task(ctx: CallContext, task_id: str) -> TaskView | None:
    """The caller's task (a lapsed lease reads as failed), or ``None``: unknown, expired or
    another actor's — the three are indistinguishable."""
    return store.get(owner_of(ctx), task_id)


def cancel_task(ctx: CallContext, task_id: str) -> TaskView | None:
    """Cancel the caller's task unless it is terminal already; the task as it now is
    (``None`` as for ``get_task``). The worker sees the cancellation at its next check."""
    return store.cancel(owner_of(ctx), task_id)
