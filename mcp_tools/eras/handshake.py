"""The handshake era (2024-11-05 … 2025-11-25), served statelessly.

``initialize`` negotiates a version but creates no session: ``tools/list`` and ``tools/call``
work without it. JSON-RPC errors travel with HTTP 200. The client capabilities declared at
``initialize`` are kept per member (``mcp_tools.asking.mailbox``): a ``tools/call`` answered as a
stream may ask that client for input, sending the request on the stream; the client's answer
is a JSON-RPC response POSTed separately (202), delivered through the database. Log messages
stream at ``MCP_TOOLS_LOG_LEVEL`` (``logging/setLevel`` is accepted, not remembered). Tasks
are the 2025-11-25 core tasks: ``params.task`` on ``tools/call`` runs the whole tool as one;
``tasks/get``, ``tasks/result``, ``tasks/cancel``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_tools import conf
from mcp_tools.asking import mailbox
from mcp_tools.call import cancellation
from mcp_tools.call.exchange import Exchange
from mcp_tools.codes import CODE_CAPABILITY_REQUIRED
from mcp_tools.eras import Era
from mcp_tools.execution import runner
from mcp_tools.execution.results import error_result
from mcp_tools.methods import lifecycle, tasks
from mcp_tools.methods.table import shared_methods
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc import replies, router
from mcp_tools.rpc.replies import Reply
from mcp_tools.serving.streaming import StreamReply
from mcp_tools.tasks.store import TaskView

# Assumed when a handshake-era request carries no MCP-Protocol-Version (spec 2025-11-25).
DEFAULT_VERSION: Final = "2025-03-26"
ACCEPTED: Final = Reply(202, None)


class Handshake(Era):
    tasks_up_front = True
    cancelled_by_notification = True

    @property
    def label(self) -> str:
        return "handshake"

    statuses = MappingProxyType({})
    cache_fields = MappingProxyType({})
    can_ask = False
    asks_on_stream = True
    envelope = staticmethod(replies.plain)
    methods = MappingProxyType(
        {
            "initialize": (lifecycle.initialize, True),
            "ping": (lifecycle.ping, True),
            "logging/setLevel": (lifecycle.set_level, True),
            **shared_methods(tasks.HANDSHAKE_METHODS),
        }
    )

    async def serve(
        self,
        request: HttpRequest,
        message: _jsonrpc.Message,
        *,
        tenant: Any,
        headers: Mapping[str, str],
        streamable: bool,
    ) -> Reply | StreamReply:
        actor = getattr(request, "actor", None)
        if message.kind == "response":
            # The answer to a request a call sent on its stream (mcp_tools.asking.mailbox).
            return await _delivered(tenant.id, getattr(actor, "user_id", None), message)
        if message.kind != "request":
            if message.kind == "notification" and message.method == "notifications/cancelled":
                # Only this member's own call, and only on this process
                # (mcp_tools.call.cancellation).
                cancellation.cancel_notified(
                    tenant.id, getattr(actor, "user_id", None), message.params
                )
            return ACCEPTED
        params = message.params or {}
        if message.method == "initialize":
            # Kept per member in a jsonb column (mcp_tools.asking.mailbox): what it cannot hold is
            # refused here, before the reply is sent and the declaration remembered.
            refused = replies.unstorable(
                message.request_id, "capabilities", params.get("capabilities")
            )
            if refused is not None:
                return refused
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, Mapping) else None
        exchange = Exchange(
            can_ask=False,
            capabilities=None,
            progress_token=token if _is_token(token) else None,
            log_level=str(conf.get("LOG_LEVEL")),
        )
        reply = await router.serve(
            self,
            request,
            message,
            tenant=tenant,
            headers=headers,
            exchange=exchange,
            capabilities=None,
            task_requested=isinstance(params.get("task"), Mapping),
            streamable=streamable,
        )
        if message.method == "initialize" and isinstance(reply, Reply) and reply.status == 200:
            await sync_to_async(mailbox.remember_capabilities)(
                tenant.id, getattr(actor, "user_id", None), params.get("capabilities")
            )
        return reply

    def capability_outcome(self, outcome: runner.NeedsCapability) -> runner.Outcome:
        required = outcome.required
        if outcome.tool_message is None:
            return runner.Failed(
                INVALID_PARAMS, outcome.message, {"requiredCapabilities": required}
            )
        listed = list(required) if outcome.listed else required
        message = outcome.tool_message.replace("{version}", self.version)
        return runner.Done(
            error_result(CODE_CAPABILITY_REQUIRED, message, {"requiredCapabilities": listed})
        )

    def task_required(self, name: str) -> runner.Failed:
        return runner.Failed(INVALID_PARAMS, f"{name} runs only as a task: send params.task")

    def task_created(self, view: TaskView) -> dict[str, Any]:
        return {"task": tasks.task_v1(view)}

    def task_body(self, view: TaskView) -> dict[str, Any]:
        return tasks.task_v1(view)

    def task_cancelled(self, before: TaskView, after: TaskView | None) -> runner.Outcome | None:
        if after is None:
            if before.is_terminal:
                return runner.Failed(INVALID_PARAMS, f"The task is already {before.status}")
            return None
        return runner.Done(tasks.task_v1(after))

    def task_request_refusal(self, req: Any, task_id: str) -> Reply | None:
        return None

    def tool_call_refusal(self, req: Any, spec: Any, arguments: dict[str, Any]) -> Any:
        return None

    def raw_result(self, value: dict[str, Any]) -> dict[str, Any]:
        return value


async def _delivered(tenant_id: Any, user_id: Any, message: _jsonrpc.Message) -> Reply:
    """202 for an answer filed for its waiting call (or one whose id this server never hands
    out: nothing to match it to); 404 (unknown to this member) or 409 (answered before: a
    replay) otherwise, nothing delivered; 400 for an answer no jsonb column can hold."""
    raw = message.raw
    refused = replies.unstorable(
        None,
        "result" if "result" in raw else "error",
        raw.get("result", raw.get("error")),
        status=400,
    )
    if refused is not None:
        return refused
    delivery = await sync_to_async(mailbox.deliver)(tenant_id, user_id, message.raw)
    if delivery in ("accepted", "not ours"):
        return ACCEPTED
    status, text = _UNDELIVERED[delivery]
    return Reply(status, _jsonrpc.error_bytes(None, INVALID_PARAMS, text, {"reason": delivery}))


_UNDELIVERED: Final = {
    "unknown": (404, "No request with this id is waiting for your answer"),
    "answered": (409, "This request was answered already"),
}


def _is_token(token: Any) -> bool:
    return isinstance(token, str | int) and not isinstance(token, bool)
