"""The 2026-07-28 era: every request carries its ``_meta`` envelope and the routing headers.

The SDK's own inbound ladder checks the envelope, the ``MCP-Protocol-Version``/``Mcp-Method``/
``Mcp-Name`` headers and the version (-32020/-32022); errors map to HTTP statuses by the SDK's
table (-32601 → 404, -32602/-32020/-32022 → 400). Client capabilities, the log level (SEP-2577:
log messages only when the request opts in) and the request state of an input round are
declared per request; tasks are the ``io.modelcontextprotocol/tasks`` extension, negotiated per
request.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from django.http import HttpRequest
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_NAME_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    decode_header_value,
    unsupported_protocol_version_rejection,
    validate_mcp_param_headers,
)
from mcp_types import CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY
from mcp_types.jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY

from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call.exchange import LOG_LEVELS, Exchange
from mcp_tools.catalogue.surfaces import TASKS_EXTENSION
from mcp_tools.eras import Era
from mcp_tools.eras.envelope import CACHE_SCOPE, LIST_TTL_MS, modern_envelope
from mcp_tools.execution import runner
from mcp_tools.methods import lifecycle, subscriptions, tasks
from mcp_tools.methods.table import shared_methods
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc import replies, router
from mcp_tools.rpc.replies import INVALID_BODY_REPLY, Reply, rejection
from mcp_tools.serving.streaming import StreamReply
from mcp_tools.tasks.store import TaskView

ACCEPTED: Final = Reply(202, None)
_NO_CAPABILITIES: Final[Mapping[str, Any]] = MappingProxyType({})


def task_extension_required() -> dict[str, Any]:
    return {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}


class Modern(Era):
    tasks_up_front = False
    cancelled_by_notification = False
    statuses = ERROR_CODE_HTTP_STATUS
    cache_fields = MappingProxyType({"ttlMs": LIST_TTL_MS, "cacheScope": CACHE_SCOPE})
    can_ask = True
    envelope = staticmethod(modern_envelope)
    methods = MappingProxyType(
        {
            "server/discover": (lifecycle.discover, True),
            **shared_methods(tasks.MODERN_METHODS),
            # Optional (MCP_TOOLS_SUBSCRIPTIONS); -32601 while off.
            "subscriptions/listen": (subscriptions.listen, True),
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
        if message.kind == "notification":
            refused = unsupported_protocol_version_rejection(self.version)
            return rejection(None, refused) if refused is not None else ACCEPTED
        if message.kind == "response":
            return INVALID_BODY_REPLY  # 2026-07-28 clients never send responses
        # ``headers`` answers ``get`` by any spelling of a name (``RequestHeaders`` reads
        # ``META``): the ladder reads its three lower-cased names from it, no copy per call.
        verdict = classify_inbound_request(message.raw, headers=headers)
        if isinstance(verdict, InboundLadderRejection):
            return rejection(message.request_id, verdict)
        params = message.params or {}
        meta = params.get("_meta")
        meta = meta if isinstance(meta, Mapping) else _NO_CAPABILITIES
        declared = meta.get(CLIENT_CAPABILITIES_META_KEY)
        capabilities = declared if isinstance(declared, Mapping) else _NO_CAPABILITIES
        # A task keeps them in a jsonb column (mcp_tools.tasks.store): refused before any work.
        # ``{}`` (what most clients declare) holds nothing to refuse: no walk for it.
        unstorable = (
            _jsonrpc.unstorable_values(capabilities, ("capabilities",)) if capabilities else []
        )
        if unstorable:
            return replies.unstorable_reply(
                message.request_id, "capabilities", unstorable, status=400
            )
        extensions = capabilities.get("extensions")
        token = meta.get("progressToken")
        level = meta.get(LOG_LEVEL_META_KEY)
        exchange = Exchange(
            can_ask=True,
            capabilities=capabilities,
            progress_token=None
            if isinstance(token, bool) or not isinstance(token, str | int)
            else token,
            log_level=level if level in LOG_LEVELS else None,
        )
        responses = params.get("inputResponses")
        return await router.serve(
            self,
            request,
            message,
            tenant=tenant,
            headers=headers,
            exchange=exchange,
            capabilities=capabilities,
            task_requested=isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions,
            state_token=params.get("requestState"),
            input_responses=dict(responses) if isinstance(responses, Mapping) else {},
            streamable=streamable,
        )

    def capability_outcome(self, outcome: runner.NeedsCapability) -> runner.Outcome:
        required = {"requiredCapabilities": outcome.required}
        return runner.Failed(MISSING_REQUIRED_CLIENT_CAPABILITY, outcome.message, required)

    def task_required(self, name: str) -> runner.Failed:
        return runner.Failed(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"{name} runs only as a task: declare the {TASKS_EXTENSION} extension",
            task_extension_required(),
        )

    def task_created(self, view: TaskView) -> dict[str, Any]:
        return tasks.create_result(view)

    def task_body(self, view: TaskView) -> dict[str, Any]:
        return tasks.detailed(view)

    def task_cancelled(self, before: TaskView, after: TaskView | None) -> runner.Outcome | None:
        return None if after is None else runner.Done({})

    def task_request_refusal(self, req: Any, task_id: str) -> Reply | None:
        if not req.task_requested:
            return replies.error(
                self,
                req.rid,
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"tasks/* needs the {TASKS_EXTENSION} extension in clientCapabilities",
                task_extension_required(),
            )
        # SEP-2663 extends SEP-2243's routing headers to tasks/*: Mcp-Name is the taskId.
        if decode_header_value(req.headers.get(MCP_NAME_HEADER)) != task_id:
            return Reply(
                400,
                _jsonrpc.error_bytes(
                    req.rid, HEADER_MISMATCH, "Mcp-Name header does not match the request's taskId"
                ),
            )
        return None

    def tool_call_refusal(self, req: Any, spec: Any, arguments: dict[str, Any]) -> Any:
        if isinstance(spec, ToolSpec) and spec.has_param_headers:
            mismatch = validate_mcp_param_headers(spec.input_schema, arguments, req.headers)
            if mismatch is not None:
                return rejection(req.rid, mismatch)
        return None

    def raw_result(self, value: dict[str, Any]) -> dict[str, Any]:
        return {**value, "resultType": "complete"}
