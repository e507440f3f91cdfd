"""``tools/call``: look the tool up in the caller's surface, then run it with its exchange.

Three kinds share the name space and the bounds: ``@tool`` (the protected path), identity
factories (``@tool_factory``: the definition is built for this request, then treated exactly
like a ``@tool``) and, only when enabled, ``@raw_tool`` (no ``CallContext``). Hidden and unknown
names are the same -32602. A ``@tool`` may ask the client for input (2026-07-28), report
progress and log messages (streamed), and hand its work to a task (``mcp_tools.tasks``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.shared.inbound import validate_mcp_param_headers
from mcp_types import methods as wire_methods
from mcp_types.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import ValidationError

from mcp_tools import (
    _jsonrpc,
    calls,
    cancellation,
    invoke,
    observability,
    raw,
    requeststate,
    scopes,
    tasks,
)
from mcp_tools.context import CallContext
from mcp_tools.exchange import ContinueAsTask
from mcp_tools.factories import ToolFactorySpec
from mcp_tools.registry import ToolSpec
from mcp_tools.replies import Era, Reply, bound_refusal, error, rejection, result
from mcp_tools.streaming import StreamReply
from mcp_tools.surfaces import Catalogue, Surface
from tenancy import evaluate

logger = logging.getLogger(__name__)


def _lookup(surface: Surface, ctx: CallContext, name: Any) -> Any:
    if not isinstance(name, str):
        return None
    spec: Any = surface.tools.get(name) or surface.factories.get(name)
    if spec is not None:
        # Defense in depth: the surface was built for the role; ask the live policy again.
        return spec if evaluate(spec.policy, ctx.actor) else None
    return surface.raw_tools.get(name)


def run_tool(spec: ToolSpec, ctx: CallContext, validated: Any) -> dict[str, Any]:
    body = calls.run_read if spec.read_only else calls.run_write
    return body(spec, ctx, validated)


@observability.observed_tool_call  # one log record, metric sample and span per call
async def call_tool(
    message: _jsonrpc.Message,
    *,
    era: Era,
    ctx: CallContext,
    surface: Surface,
    catalogue: Catalogue,
    headers: Mapping[str, str],
    streamable: bool = False,
) -> Reply | StreamReply:
    params = message.params or {}
    rid = message.request_id
    name = params.get("name")
    spec = _lookup(surface, ctx, name)
    if spec is None:
        # Hidden and unknown tools are indistinguishable: absence is not a hint.
        return error(era, rid, INVALID_PARAMS, f"Unknown tool: {name}")
    refused = scopes.refusal(ctx, rid, read_only=spec.read_only, what=f"the tool {spec.name}")
    if refused is not None:
        return refused
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        return error(era, rid, INVALID_PARAMS, "arguments must be an object")
    if isinstance(spec, raw.RawToolSpec):
        return await _call_raw(spec, arguments, era=era, rid=rid, catalogue=catalogue)
    if era.modern and isinstance(spec, ToolSpec) and spec.has_param_headers:
        mismatch = validate_mcp_param_headers(spec.input_schema, arguments, headers)
        if mismatch is not None:
            return rejection(rid, mismatch)

    validated: Any = None
    if isinstance(spec, ToolSpec):
        validated = calls.validate_arguments(spec, arguments)
        if isinstance(validated, dict):
            return result(era, rid, validated, catalogue.server_info)
        missing = [
            c for c in spec.required_client_capabilities if c not in (ctx.client_capabilities or {})
        ]
        if missing:
            # Declared at registration: refused before the tool runs.
            if era.modern:
                return error(
                    era,
                    rid,
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Tool {spec.name} requires client capabilities: {', '.join(missing)}",
                    {"requiredCapabilities": {c: {} for c in missing}},
                )
            unsupported = calls.error_result(
                calls.CODE_CAPABILITY_REQUIRED,
                f"This tool needs a client that supports {', '.join(missing)} "
                "(MCP 2026-07-28 declares it per request).",
                {"requiredCapabilities": missing},
            )
            return result(era, rid, unsupported, catalogue.server_info)
    exchange = invoke.build_exchange(era, params)
    task_support = spec.task_support if isinstance(spec, ToolSpec) else "forbidden"
    negotiated = (
        invoke.tasks_negotiated(era, params)
        if era.modern
        else isinstance(params.get("task"), Mapping)
    )
    if task_support == "forbidden":
        negotiated = False
    elif task_support == "required" and not negotiated:
        if era.modern:
            return error(
                era,
                rid,
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"{name} runs only as a task: declare the {tasks.TASKS_EXTENSION} extension",
                tasks.required_capability(),
            )
        return error(era, rid, INVALID_PARAMS, f"{name} runs only as a task: send params.task")
    exchange.tasks_negotiated = negotiated
    binding = requeststate.Binding.of(
        tenant=ctx.tenant_id,
        user=ctx.user_id,
        method="tools/call",
        name=spec.name,
        arguments=arguments,
    )
    try:
        inputs = invoke.open_inputs(era, params, binding)
    except requeststate.RequestStateRefusedError as bad_state:
        reason = {"reason": bad_state.reason}
        return error(era, rid, INVALID_PARAMS, "Invalid request state", reason)
    exchange.answers, exchange.loose_answers = inputs.answers, inputs.loose
    call_ctx = ctx._with_exchange(exchange)

    if isinstance(spec, ToolFactorySpec):
        factory = spec

        def build_and_run() -> Any:
            built = factory.build(call_ctx)
            validated = calls.validate_arguments(built, arguments)
            return (
                validated if isinstance(validated, dict) else run_tool(built, call_ctx, validated)
            )

        job = invoke.guarded(build_and_run, inputs)
        return await invoke.execute(
            exchange,
            job,
            _finisher(era, rid, catalogue, binding, exchange),
            streamable=streamable,
            cancel_key=_cancel_key(era, ctx, rid),
        )

    def to_task() -> Any:
        # In the worker: the task is committed and started before the call answers, so a
        # client that goes away mid-stream cannot strand a reserved task slot.
        task = tasks.create(call_ctx, spec, arguments, exchange.answers)
        if task is not None:
            tasks.start(
                task, spec, ctx, validated, capabilities=exchange.capabilities, modern=era.modern
            )
        return task

    def work() -> Any:
        if negotiated and not era.modern:
            # 2025-11-25: the client asked for a task up front; the whole tool runs as one.
            raise ContinueAsTask()
        return run_tool(spec, call_ctx, validated)

    job = invoke.guarded(work, inputs, on_task=to_task)
    finish = _finisher(era, rid, catalogue, binding, exchange)
    return await invoke.execute(
        exchange, job, finish, streamable=streamable, cancel_key=_cancel_key(era, ctx, rid)
    )


def _cancel_key(era: Era, ctx: CallContext, rid: Any) -> cancellation.Key | None:
    """Handshake era: ``notifications/cancelled`` from the same member may cancel the call
    (2026-07-28 cancels only by closing the stream)."""
    return None if era.modern else cancellation.key(ctx.tenant_id, ctx.user_id, rid)


def _finisher(
    era: Era,
    rid: Any,
    catalogue: Catalogue,
    binding: requeststate.Binding,
    exchange: Any,
) -> Any:
    info = catalogue.server_info

    def finish(outcome: invoke.Outcome) -> Reply:
        shared = invoke.shared_reply(
            outcome, era=era, rid=rid, binding=binding, exchange=exchange, server_info=info
        )
        if shared is not None:
            return shared
        if isinstance(outcome, invoke.NeedsCapability):
            if era.modern:
                return error(
                    era,
                    rid,
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    "This call needs a client capability the request did not declare",
                    {"requiredCapabilities": outcome.required},
                )
            body = calls.error_result(
                calls.CODE_CAPABILITY_REQUIRED,
                "This tool needs to ask the client for input (elicitation, sampling or roots), "
                "which needs protocol 2026-07-28; this request speaks "
                f"{era.version}.",
                {"requiredCapabilities": outcome.required},
            )
            return result(era, rid, body, info)
        if isinstance(outcome, invoke.ToTask):
            if outcome.task is None:
                return error(
                    era,
                    rid,
                    calls.OVERLOADED,
                    "Server overloaded: too many tasks running; retry shortly",
                    {"retryAfterSeconds": 1},
                )
            return result(era, rid, tasks.create_result(outcome.task, modern=era.modern), info)
        assert isinstance(outcome, invoke.Done)
        return result(era, rid, outcome.value, info)

    return finish


async def _call_raw(
    spec: raw.RawToolSpec, arguments: dict[str, Any], *, era: Era, rid: Any, catalogue: Catalogue
) -> Reply:
    try:
        value = await calls.run_bounded(lambda: raw.run_raw(spec, arguments))
        # The raw result is the tool's own: it must at least be a valid CallToolResult.
        shaped = {**value, "resultType": "complete"} if era.modern else value
        wire_methods.serialize_server_result("tools/call", era.version, shaped)
    except calls.BoundError as bound:
        return bound_refusal(era, rid, bound)
    except (ValidationError, TypeError, ValueError, KeyError):
        logger.exception("MCP raw tool %s returned an invalid result", spec.name)
        value = calls.error_result(calls.CODE_INTERNAL, f"Error executing tool {spec.name}")
    except Exception:
        logger.exception("MCP raw tool %s failed", spec.name)
        value = calls.error_result(calls.CODE_INTERNAL, f"Error executing tool {spec.name}")
    return result(era, rid, value, catalogue.server_info)


async def list_page(
    template: dict[str, Any], *, era: Era, ctx: CallContext, surface: Surface, request_id: Any
) -> Reply:
    """A ``tools/list`` page holding identity-factory tools, completed for this caller.

    The prepared page keeps a factory's name where its definition goes; the factories run in
    a worker (they may read the caller's data) and their definitions live only in this reply.
    """

    def build() -> dict[str, Any]:
        tools = []
        for entry in template["tools"]:
            if isinstance(entry, str):
                factory = surface.factories[entry]
                if not evaluate(factory.policy, ctx.actor):
                    continue
                entry = factory.build(ctx).wire_definition()
            tools.append(entry)
        page = {**template, "tools": tools}
        return wire_methods.serialize_server_result("tools/list", era.version, page)

    try:
        page = await calls.run_bounded(build)
    except calls.BoundError as bound:
        return bound_refusal(era, request_id, bound)
    return Reply(200, _jsonrpc.result_bytes(request_id, page))
