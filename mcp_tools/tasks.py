"""Tasks over MCP: the 2026-07-28 extension (``io.modelcontextprotocol/tasks``) and the
2025-11-25 core tasks (experimental in that revision), both projected from one store.

A tool declared ``task_support="optional"`` or ``"required"`` may hand its work to a task:

- **2026-07-28**, when the request declares the extension in its ``clientCapabilities``: the
  tool runs synchronously until it calls ``ctx.continue_as_task()`` (input requests before
  that are ordinary ``InputRequiredResult`` rounds); the call then answers a flat
  ``CreateTaskResult`` (``resultType: "task"``) once the task row is committed, and the tool is
  run again from the top in a task worker, with the answers it gathered. ``tasks/get`` answers
  the ``DetailedTask`` (the result or error inlined when terminal, ``inputRequests`` when the
  task waits for input), ``tasks/update`` delivers input answers (a task resumes when none is
  pending any more), ``tasks/cancel`` cancels. Each answers ``resultType: "complete"``; each
  needs the extension on the request (-32021 otherwise) and ``Mcp-Name: <taskId>`` (-32020).
  ``tasks/result`` and ``tasks/list`` do not exist in this revision (-32601).
- **2025-11-25**, when ``tools/call`` carries ``params.task``: the whole tool runs as a task
  (``CreateTaskResult`` ``{task: {...}}``); ``tasks/get``, ``tasks/result`` (waits, within the
  call deadline, for a terminal status) and ``tasks/cancel`` are served; ``tasks/list`` is not
  (not advertised). Input requests are not available in this era.

Without negotiation an ``optional`` tool simply runs synchronously (``continue_as_task()`` is
a no-op); a ``required`` one is refused (-32021 / -32602). A tool error inside a task is a
``completed`` task whose result has ``isError: true``; an internal failure, a missing client
capability or the task deadline is a ``failed`` task with a JSON-RPC ``error``. Tasks belong to
the tenant and the acting user that created them: anyone else's task id is unknown (-32602).

What runs the work is the task engine (``mcp_tools.taskrunner``): by default a job of Django's
tasks framework (``run_task``) that carries the task id only. The worker claims the stored
task (one attempt, a lease it renews), resolves the owner again from the store (the tenant,
the membership's current role and row scope, the credential's scopes as accepted), looks the
tool up on that role's prepared surface (gone or no longer allowed: the task fails) and runs
it from the top with the answers gathered, under the task deadline; the outcome goes to the
store. A write keeps its ``idempotencyKey`` (it is in the stored arguments), so a run again
after a lost worker replays what the lost run committed. Cancelling (``tasks/cancel``, A2A
``CancelTask``) flips the row; the running tool sees it at its next ``ctx.check_cancelled()``.

Another protocol serves the same tasks through three public functions (A2A does:
``a2a_tools.rpc``): ``run_as_task`` runs a call as a client that negotiated tasks would (the
same store, engine, owner, deadlines, leases and TTL), ``get_task`` and ``cancel_task`` read and
cancel by id for the caller. The protocol shapes the ``TaskView`` into its own wire form.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.db import connection, transaction
from mcp_types.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
)

from mcp_tools import _jsonrpc, conf, scopes, surfaces, taskrunner
from mcp_tools._own_connection import on_own_connection
from mcp_tools.callers import CallerGoneError, KeptCaller, live_context, unauthenticated_error
from mcp_tools.codes import CODE_CAPABILITY_REQUIRED, OVERLOADED, TIMED_OUT
from mcp_tools.context import CallContext
from mcp_tools.exceptions import UnknownSurfaceError
from mcp_tools.exchange import (
    ClientCapabilityMissing,
    ContinueAsTask,
    Exchange,
    InputRequired,
    TaskCancelled,
    TaskHooks,
)
from mcp_tools.execution.arguments import validate_arguments
from mcp_tools.execution.results import error_result, internal_error_result
from mcp_tools.execution.runner import run_tool
from mcp_tools.registry import ToolSpec
from mcp_tools.rpc.replies import Reply, error, render, result
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.taskrunner import runner
from mcp_tools.taskstore import Owner, TaskStore, TaskView
from tenancy import AuthenticationFailedError, evaluate, rls

try:  # Django 6.0 and later: the tasks framework is Django's own.
    from django.tasks import task as _engine_task
except ImportError:  # Django 5.2: the django-tasks backport, the same @task / enqueue API.
    from django_tasks import task as _engine_task  # type: ignore[no-redef]

logger = logging.getLogger(__name__)

RELATED_TASK_META: Final = "io.modelcontextprotocol/related-task"
MODERN_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
REMOVED_MODERN_METHODS: Final = frozenset({"tasks/result", "tasks/list"})
HANDSHAKE_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/cancel"})
ALL_METHODS: Final = MODERN_METHODS | REMOVED_MODERN_METHODS | HANDSHAKE_METHODS
# How often a waiting worker re-reads its task's status (cancellation) at most.
CANCEL_CHECK_SECONDS: Final = 0.25


def _requeue(task_id: str) -> bool:
    """The store's hook for a task queued again after its worker was lost."""
    if taskrunner.in_process() and not runner.reserve():
        return False  # no slot here: the store records the task failed instead
    _dispatch(task_id)
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
    local = taskrunner.in_process()
    if local and not runner.reserve():
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
            _dispatch(view.task_id)
    except BaseException:
        if local:
            runner.release()
        raise
    return view


def _dispatch(task_id: str) -> None:
    """Hand ``task_id`` to the engine (inside the transaction committing it; an in-process
    slot is already reserved)."""
    if taskrunner.in_process():
        transaction.on_commit(lambda: runner.start(task_id, lambda: execute(task_id)))
    else:
        taskrunner.enqueue(run_task, task_id)


@_engine_task()
def run_task(task_id: str) -> None:
    """The engine's job for one MCP/A2A task: everything else is read from the task store."""
    execute(task_id)


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
    with runner.holding(task_id):
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


# --- wire shapes ------------------------------------------------------------------------------


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fields(view: TaskView) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": _iso(view.created_at),
        "lastUpdatedAt": _iso(view.updated_at),
        "ttlMs": view.ttl_ms,
        "pollIntervalMs": int(conf.get("TASK_POLL_INTERVAL_MS")),
    }
    if view.status_message:
        fields["statusMessage"] = view.status_message
    return fields


def create_result(view: TaskView) -> dict[str, Any]:
    """2026 ``CreateTaskResult``: flat, with ``resultType: "task"``."""
    return {**_fields(view), "resultType": "task"}


def detailed(view: TaskView) -> dict[str, Any]:
    """2026 ``tasks/get``: the task, with its result, error or input requests inlined."""
    body = _fields(view)
    if view.status == "completed" and view.result is not None:
        body["result"] = view.result
    elif view.status == "failed" and view.error is not None:
        body["error"] = view.error
    elif view.status == "input_required" and view.input_requests:
        body["inputRequests"] = view.input_requests
    return body


def task_v1(view: TaskView) -> dict[str, Any]:
    """2025-11-25 ``Task``."""
    task: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": _iso(view.created_at),
        "lastUpdatedAt": _iso(view.updated_at),
        "ttl": view.ttl_ms,
        "pollInterval": int(conf.get("TASK_POLL_INTERVAL_MS")),
    }
    if view.status_message:
        task["statusMessage"] = view.status_message
    return task


# --- tasks/* requests -------------------------------------------------------------------------


async def handle(req: RpcRequest) -> Reply:
    """``tasks/*`` in the request's era (its method table lists the ones it serves)."""
    method, rid, params, era, ctx = req.message.method, req.rid, req.params, req.era, req.ctx
    if not req.catalogue.tasks_enabled:
        return error(era, rid, METHOD_NOT_FOUND, "Method not found")
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id or len(task_id) > 128:
        return error(era, rid, INVALID_PARAMS, "taskId must be a non-empty string")
    refused = era.task_request_refusal(req, task_id)
    if refused is not None:
        return refused
    scoped = scopes.refusal(ctx, read_only=True, what=str(method))
    if scoped is not None:
        return render(req, scoped)
    owner = owner_of(ctx)
    info = req.catalogue.server_info
    if method == "tasks/get":
        view = await sync_to_async(store.get)(owner, task_id)
        if view is None:
            return error(era, rid, INVALID_PARAMS, "Unknown task", {"taskId": task_id})
        return result(era, rid, era.task_body(view), info)
    if method == "tasks/cancel":
        before = await sync_to_async(store.get)(owner, task_id)
        if before is None:
            return error(era, rid, INVALID_PARAMS, "Unknown task", {"taskId": task_id})
        early = era.task_cancelled(before, None)
        if early is not None:
            return render(req, early)
        view = await sync_to_async(store.cancel)(owner, task_id)
        assert view is not None
        answer = era.task_cancelled(before, view)
        assert answer is not None
        return render(req, answer)
    if method == "tasks/update":
        return await _update(req)
    return await _result_v1(req, owner=owner, task_id=task_id)


async def _update(req: RpcRequest) -> Reply:
    rid, params, era, ctx, catalogue = req.rid, req.params, req.era, req.ctx, req.catalogue
    task_id = params["taskId"]
    responses = params.get("inputResponses")
    if not isinstance(responses, Mapping):
        return error(era, rid, INVALID_PARAMS, "inputResponses must be an object")
    owner = owner_of(ctx)
    local = taskrunner.in_process()
    if local and not runner.reserve():
        return error(
            era,
            rid,
            OVERLOADED,
            "Server overloaded: too many tasks running; retry shortly",
            {"retryAfterSeconds": 1},
        )

    def answer() -> TaskView | None:
        # The answers and, when none is pending any more, the task's job: one transaction.
        with transaction.atomic():
            view, resume = store.answer(owner, task_id, dict(responses))
            if resume and view is not None:
                _dispatch(view.task_id)
            elif local:
                runner.release()
            return view

    try:
        view = await sync_to_async(answer)()
    except BaseException:
        if local:
            runner.release()
        raise
    if view is None:
        return error(era, rid, INVALID_PARAMS, "Unknown task", {"taskId": task_id})
    return result(era, rid, {}, catalogue.server_info)


async def _result_v1(req: RpcRequest, *, owner: Owner, task_id: str) -> Reply:
    """2025-11-25 ``tasks/result``: the outcome once terminal (waits within the deadline)."""
    rid, era = req.rid, req.era
    deadline = time.monotonic() + float(conf.get("CALL_TIMEOUT_SECONDS"))
    while True:
        view = await sync_to_async(store.get)(owner, task_id)
        if view is None:
            return error(era, rid, INVALID_PARAMS, "Unknown task", {"taskId": task_id})
        if view.is_terminal:
            break
        if time.monotonic() > deadline:
            return error(era, rid, TIMED_OUT, "The task is still running; poll tasks/get")
        await asyncio.sleep(int(conf.get("TASK_POLL_INTERVAL_MS")) / 1000)
    if view.status == "completed" and view.result is not None:
        meta = {RELATED_TASK_META: {"taskId": view.task_id}}
        return Reply(200, _jsonrpc.result_bytes(rid, {**view.result, "_meta": meta}))
    if view.status == "failed" and view.error is not None:
        failure = view.error
        return error(era, rid, failure["code"], failure["message"], failure.get("data"))
    return error(era, rid, INVALID_PARAMS, f"The task was {view.status}")
