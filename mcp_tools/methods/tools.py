"""``tools/list`` and ``tools/call``.

``tools/call`` looks the tool up once in the caller's surface (the call record uses that
lookup), then runs it with its exchange. Three kinds share the name space and the bounds:
``@tool`` (the protected path), identity factories (``@tool_factory``: the definition is built
for this request, then treated exactly like a ``@tool``) and, only when enabled,
``@raw_tool`` (no ``CallContext``). Hidden and unknown names are the same -32602. A ``@tool``
may ask the client for input (2026-07-28), report progress and log messages (streamed), and
hand its work to a task (``mcp_tools.methods.tasks``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Hashable
from typing import Any

from mcp_types import methods as wire_methods
from mcp_types.jsonrpc import INVALID_PARAMS
from pydantic import ValidationError

from mcp_tools import conf, observability
from mcp_tools.asking import mailbox, requeststate
from mcp_tools.authoring import raw
from mcp_tools.authoring.factories import ToolFactorySpec, shared
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call import cancellation
from mcp_tools.call.context import CallContext
from mcp_tools.codes import CODE_INTERNAL
from mcp_tools.execution import arguments as tool_arguments
from mcp_tools.execution import bounds, runner
from mcp_tools.execution.results import error_result
from mcp_tools.operator import scopes, switches
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc.replies import Reply, bound_refusal, error, render
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.serving import streaming
from mcp_tools.serving.streaming import StreamReply
from mcp_tools.tasks import run as task_run
from tenancy import evaluate, rls

logger = logging.getLogger("mcp_tools.toolcall")


def lookup(req: RpcRequest, name: Any) -> Any:
    """The caller's tool named ``name`` (``@tool``, factory or served raw tool), or ``None``."""
    if not isinstance(name, str):
        return None
    surface = req.surface
    spec: Any = surface.tools.get(name) or surface.factories.get(name)
    if spec is not None:
        # Defense in depth: the surface was built for the role; ask the live policy again.
        return spec if evaluate(spec.policy, req.ctx.actor) else None
    return surface.raw_tools.get(name)


async def call_tool(req: RpcRequest) -> Reply | StreamReply:
    return await _call(req, lookup(req, req.params.get("name")))


@observability.observed_tool_call  # one log record, metric sample and span per call
async def _call(req: RpcRequest, spec: Any) -> Reply | StreamReply:
    params, ctx = req.params, req.ctx
    name = params.get("name")
    if spec is None:
        # Hidden and unknown tools are indistinguishable: absence is not a hint.
        return error(req.era, req.rid, INVALID_PARAMS, f"Unknown tool: {name}")
    if ctx.actor.scopes is not None:
        refused = scopes.refusal(ctx, read_only=spec.read_only, what=f"the tool {spec.name}")
        if refused is not None:
            return render(req, refused)
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        return error(req.era, req.rid, INVALID_PARAMS, "arguments must be an object")
    if isinstance(spec, raw.RawToolSpec):
        return await _call_raw(req, spec, arguments)
    if getattr(spec, "has_param_headers", False):
        mismatch = req.era.tool_call_refusal(req, spec, arguments)
        if mismatch is not None:
            return mismatch
    validated: Any = None
    if isinstance(spec, ToolSpec):
        validated = tool_arguments.validate_arguments(spec, arguments)
        if isinstance(validated, dict):
            return render(req, runner.Done(validated))
        missing = [
            c for c in spec.required_client_capabilities if c not in (req.capabilities or {})
        ]
        if missing:
            # Declared at registration: refused before the tool runs.
            listed = ", ".join(missing)
            return render(
                req,
                runner.NeedsCapability(
                    {c: {} for c in missing},
                    message=f"Tool {spec.name} requires client capabilities: {listed}",
                    tool_message=(
                        f"This tool needs a client that supports {listed} "
                        "(MCP 2026-07-28 declares it per request)."
                    ),
                    listed=True,
                ),
            )
    task_support = spec.task_support if isinstance(spec, ToolSpec) else "forbidden"
    if task_support == "required" and not req.task_requested:
        return render(req, req.era.task_required(str(name)))
    exchange = req.exchange
    exchange.tasks_negotiated = negotiated = req.task_requested and task_support != "forbidden"
    opened = None
    if req.state_token is not None:
        try:
            inputs = requeststate.open_inputs(
                req.state_token, req.input_responses, _binding(req, spec.name, arguments)
            )
        except requeststate.RequestStateRefusedError as bad_state:
            return render(req, runner.StateRefused(bad_state.reason))
        opened, exchange.answers = inputs.opened, inputs.answers
    else:
        exchange.loose_answers = req.input_responses

    limited = _limited(spec)
    # A declared non-blocking read (async def) is awaited on the loop, unless a request state
    # or a quota needs the database first, or its queries must run under the tools' role in
    # one transaction (tenancy.rls): then its worker thread awaits it (run_read).
    on_loop = (
        isinstance(spec, ToolSpec)
        and spec.on_loop
        and opened is None
        and not limited
        and not rls.enabled()
    )
    job: Callable[[], Any]
    if on_loop:
        job = functools.partial(runner.job_on_loop, spec, ctx, validated)
    elif isinstance(spec, ToolFactorySpec):
        build = switches.guarded(runner.run_factory) if limited else runner.run_factory
        job = functools.partial(runner.job, build, spec, ctx, arguments, opened=opened)
    else:

        def to_task() -> Any:
            # In the worker: the task and its job are committed before the call answers, so a
            # client that goes away mid-stream (or a web process killed) strands nothing.
            return task_run.create(
                ctx,
                spec,
                arguments,
                exchange.answers,
                capabilities=exchange.capabilities,
                can_ask=exchange.can_ask,
            )

        # 2025-11-25: a client that asked for a task up front has the whole tool run as one.
        work = runner.hand_over if negotiated and req.era.tasks_up_front else runner.run_tool
        if limited:  # quotas: counted in the worker, before the tool runs
            work = switches.guarded(work)
        job = functools.partial(
            runner.job, work, spec, ctx, validated, opened=opened, on_task=to_task
        )

    if req.streamable and req.era.asks_on_stream and not on_loop:
        # 2025-11-25: the tool may ask its client on this call's stream (mcp_tools.asking.mailbox);
        # its answer is waited for in the worker thread, so a tool on the loop cannot.
        exchange.asker = _asker(req, spec.name)
    if req.streamable and (
        exchange.progress_token is not None
        or exchange.log_level is not None
        or exchange.asker is not None
    ):
        streamed = _bounded(job, on_loop, exchange, outlives_view=True)
        return await _streamed(req, spec, arguments, streamed)
    try:
        # A closed response stream cancels the call (Django cancels this coroutine): the tool
        # is told, the slot freed (``bounds.run_bounded``).
        bounded = _bounded(job, on_loop, exchange)
        outcome: runner.Outcome
        if req.era.cancelled_by_notification:
            outcome = await cancellation.run(
                bounded, tenant_id=ctx.tenant_id, user_id=ctx.user_id, request_id=req.rid
            )
        else:
            outcome = await bounded
    except bounds.BoundError as bound:
        outcome = bound
    except cancellation.RequestCancelled:
        outcome = runner.Cancelled()
    return render(req, _settled(req, spec, arguments, outcome))


def _settled(req: RpcRequest, spec: Any, arguments: Any, outcome: runner.Outcome) -> runner.Outcome:
    """What a tool's outcome still needs before it is rendered: the binding of a request state
    to ask with, or the tool's own wording of a missing capability."""
    if isinstance(outcome, runner.NeedsInput):
        req.binding = _binding(req, spec.name, arguments)
    elif isinstance(outcome, runner.NeedsCapability):
        return runner.NeedsCapability(outcome.required, tool_message=_ASKS_INPUT)
    return outcome


_ASKS_INPUT = (
    "This tool needs to ask the client for input (elicitation, sampling or roots): declare it "
    "at initialize and accept text/event-stream (protocol {version}), or use protocol "
    "2026-07-28."
)


def _asker(req: RpcRequest, tool: str) -> mailbox.StreamAsker:
    ctx, exchange = req.ctx, req.exchange
    return mailbox.StreamAsker(
        tenant=ctx.tenant_id,
        owner=ctx.user_id,
        tool=tool,
        call_id=req.rid,
        send=exchange.send,
        cancelled=lambda: exchange.cancelled,
        deadline=time.monotonic() + float(conf.get("CALL_TIMEOUT_SECONDS")),
    )


def _binding(req: RpcRequest, name: str, arguments: Any) -> requeststate.Binding:
    ctx = req.ctx
    return requeststate.Binding.of(
        tenant=ctx.tenant_id, user=ctx.user_id, method="tools/call", name=name, arguments=arguments
    )


def _bounded(
    job: Callable[[], Any], on_loop: bool, exchange: Any, *, outlives_view: bool = False
) -> Coroutine[Any, Any, runner.Outcome]:
    if on_loop:
        return bounds.run_on_loop(job, outlives_view=outlives_view)
    return bounds.run_bounded(job, on_cancel=exchange.cancel)


async def _streamed(
    req: RpcRequest, spec: Any, arguments: Any, bounded: Coroutine[Any, Any, runner.Outcome]
) -> Reply | StreamReply:
    """Await ``bounded``; answer JSON, or a stream if the call reports before it returns.

    When the client goes away (Django cancels the view, or the stream's iteration) the call is
    cancelled with it (``bounds.run_bounded``: the tool is told, the slot freed). In the
    handshake era a ``notifications/cancelled`` may cancel it too; its request is then answered
    ``REQUEST_CANCELLED`` (``mcp_tools.call.cancellation``).
    """
    channel = streaming.Channel(asyncio.get_running_loop())
    exchange, ctx = req.exchange, req.ctx
    exchange.sink = channel.put
    call = asyncio.ensure_future(bounded)
    call.add_done_callback(_retrieve)
    if req.era.cancelled_by_notification:
        cancellation.register(cancellation.key(ctx.tenant_id, ctx.user_id, req.rid), call)

    async def final() -> bytes:
        outcome: runner.Outcome
        try:
            outcome = await cancellation.awaited(call)
        except bounds.BoundError as bound:
            outcome = bound
        except cancellation.RequestCancelled:
            outcome = runner.Cancelled()
        body = render(req, _settled(req, spec, arguments, outcome)).body
        assert body is not None
        return body

    try:
        first = await channel.first(call)
        if first is not None:
            return streaming.stream(channel, first, call, final)
        return Reply(200, await final())
    except asyncio.CancelledError:
        call.cancel()  # the client went away: nobody will read the answer
        raise


def _retrieve(future: asyncio.Future[Any]) -> None:
    # A stream whose client went away never awaits its call: read the exception here so it is
    # not reported as "never retrieved".
    if not future.cancelled():
        future.exception()


async def _call_raw(req: RpcRequest, spec: raw.RawToolSpec, arguments: dict[str, Any]) -> Reply:
    try:
        value = await bounds.run_bounded(lambda: raw.run_raw(spec, arguments))
        # The raw result is the tool's own: it must at least be a valid CallToolResult.
        wire_methods.serialize_server_result(
            "tools/call", req.era.version, req.era.raw_result(value)
        )
    except bounds.BoundError as bound:
        return bound_refusal(req.era, req.rid, bound)
    except (ValidationError, TypeError, ValueError, KeyError):
        logger.exception("MCP raw tool %s returned an invalid result", spec.name)
        value = error_result(CODE_INTERNAL, f"Error executing tool {spec.name}")
    except Exception:
        logger.exception("MCP raw tool %s failed", spec.name)
        value = error_result(CODE_INTERNAL, f"Error executing tool {spec.name}")
    return render(req, runner.Done(value))


async def list_tools(req: RpcRequest) -> Reply:
    """The caller's prepared ``tools/list`` page (a page holding an identity factory's tool is
    completed for this caller)."""
    cursor = req.params.get("cursor")
    surface, version = req.surface, req.era.version
    page = surface.page(version, cursor) if cursor is None or isinstance(cursor, str) else None
    if page is not None:
        return Reply(200, _jsonrpc.result_bytes(req.rid, page))
    index = surface.page_index(cursor) if isinstance(cursor, str | None) else None
    template = surface.dynamic_pages.get(version, {}).get(index or 0)
    if index is None or template is None:
        return error(req.era, req.rid, INVALID_PARAMS, "Invalid cursor")
    return await _list_page(req, template)


async def _list_page(req: RpcRequest, template: dict[str, Any]) -> Reply:
    """A ``tools/list`` page holding identity-factory tools, completed for this caller.

    The prepared page keeps a factory's name where its definition goes; the factories run in
    a worker (they may read the caller's data) and their definitions live only in this reply,
    unless every factory on the page declares what its definition depends on (``varies_by``):
    then the completed page (a page with only has-perm tools too) is serialized once per
    surface, era, those keys and the user's has-perm decisions, and shared.
    """
    ctx: CallContext = req.ctx
    surface, version = req.surface, req.era.version

    def build() -> bytes:
        shown: list[ToolFactorySpec | dict[str, Any]] = []
        # What this caller's completion depends on; None: a factory declares nothing.
        key: list[Hashable] | None = []
        for entry in template["tools"]:
            if isinstance(entry, str):
                factory = surface.factories[entry]
                admitted = evaluate(factory.policy, ctx.actor)
                if admitted:
                    shown.append(factory)
                if not admitted:
                    if key is not None:
                        key.append((entry, False, None))
                elif factory.cache_key is None:
                    key = None
                elif key is not None:
                    key.append((entry, True, factory.cache_key(ctx)))
                continue
            spec = surface.tools.get(entry["name"])
            if spec is not None and spec.policy.per_user:
                admitted = evaluate(spec.policy, ctx.actor)
                if key is not None:
                    key.append((entry["name"], admitted))
                if not admitted:
                    continue  # a has_perm policy this user does not meet
            shown.append(entry)

        def complete() -> bytes:
            tools = [
                item.definition(ctx, surface.digest) if isinstance(item, ToolFactorySpec) else item
                for item in shown
            ]
            page = {**template, "tools": tools}
            return _jsonrpc.dumps(wire_methods.serialize_server_result("tools/list", version, page))

        if key is None:
            return complete()
        return shared((surface.digest, "tools/list", version, tuple(key)), template, complete)

    try:
        page = await bounds.run_bounded(build)
    except bounds.BoundError as bound:
        return bound_refusal(req.era, req.rid, bound)
    return Reply(200, _jsonrpc.result_bytes(req.rid, page))


def _limited(spec: Any) -> bool:
    """A call of ``spec`` counts against a quota (its own rate or the tenant budget): only then
    does the route go through ``switches`` (mcp_tools.operator.switches.limited says the same)."""
    return bool(getattr(spec, "rate", None) or conf.get("TENANT_RATE"))
