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

What runs the work is the task engine (``mcp_tools.tasks.engine``): by default a job of Django's
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
import logging
import time
from collections.abc import Mapping
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.db import transaction
from mcp_types.jsonrpc import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
)

from mcp_tools import conf
from mcp_tools.codes import OVERLOADED, TIMED_OUT
from mcp_tools.operator import scopes
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc.replies import Reply, error, render, result
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.tasks import engine
from mcp_tools.tasks.engine import task_engine
from mcp_tools.tasks.run import dispatch, owner_of, store
from mcp_tools.tasks.store import Owner, TaskView

logger = logging.getLogger(__name__)

RELATED_TASK_META: Final = "io.modelcontextprotocol/related-task"
MODERN_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
REMOVED_MODERN_METHODS: Final = frozenset({"tasks/result", "tasks/list"})
HANDSHAKE_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/cancel"})


# --- wire shapes ------------------------------------------------------------------------------


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _fields(view: TaskView, *, ttl: str = "ttlMs", poll: str = "pollIntervalMs") -> dict[str, Any]:
    """The task's own fields; 2025-11-25 named the two durations without their unit."""
    fields: dict[str, Any] = {
        "taskId": view.task_id,
        "status": view.status,
        "createdAt": _iso(view.created_at),
        "lastUpdatedAt": _iso(view.updated_at),
        ttl: view.ttl_ms,
        poll: int(conf.get("TASK_POLL_INTERVAL_MS")),
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
    return _fields(view, ttl="ttl", poll="pollInterval")


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
    local = engine.in_process()
    if local and not task_engine.reserve():
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
                dispatch(view.task_id)
            elif local:
                task_engine.release()
            return view

    try:
        view = await sync_to_async(answer)()
    except BaseException:
        if local:
            task_engine.release()
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
