"""Resources, prompts, completions and ``logging/setLevel``: one handler per method.

Every lookup is in the caller's prepared surface and asks the live policy again, so a hidden
resource, template or prompt is exactly as unknown as one that does not exist (-32602, with
``data.uri`` for resources). User code runs through ``mcp_tools.execution`` (worker thread, call
bounds, the request's exchange; input requests work on ``resources/read`` and ``prompts/get``
as on ``tools/call``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_tools import conf
from mcp_tools.asking import requeststate
from mcp_tools.authoring.prompts import PromptSpec
from mcp_tools.authoring.resources import ResourceSpec, ResourceTemplateSpec, contents_of
from mcp_tools.call.context import CallContext
from mcp_tools.catalogue import paging
from mcp_tools.catalogue.surfaces import Catalogue, Surface
from mcp_tools.exceptions import ResourceNotFoundError
from mcp_tools.execution import bounds, runner
from mcp_tools.execution.results import translate
from mcp_tools.operator import scopes
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.rpc.replies import Reply, bound_refusal, error, render, result
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.serving.error_pages import database_unavailable
from tenancy import evaluate, rls

if TYPE_CHECKING:  # the era is above this layer: only its interface is named here
    from mcp_tools.eras import Era

logger = logging.getLogger(__name__)

LIST_METHODS: Final = {
    "resources/list": "resource_pages",
    "resources/templates/list": "template_pages",
    "prompts/list": "prompt_pages",
}
FEATURE_METHODS: Final = frozenset(
    {*LIST_METHODS, "resources/read", "prompts/get", "completion/complete"}
)


@dataclass(frozen=True)
class _Failed:
    code: int
    message: str
    data: Any = None


async def handle(req: RpcRequest) -> Reply:
    """Resources, resource templates, prompts and completions (listings and reads)."""
    method, params, rid, era = req.message.method, req.params, req.rid, req.era
    if method in LIST_METHODS:
        pages: paging.Listing = getattr(req.surface.features, LIST_METHODS[method])
        cursor = params.get("cursor")
        page = (
            pages.page(era.version, cursor) if cursor is None or isinstance(cursor, str) else None
        )
        if page is None:
            return error(era, rid, INVALID_PARAMS, "Invalid cursor")
        return Reply(200, _jsonrpc.result_bytes(rid, page))
    refused = scopes.refusal(req.ctx, read_only=True, what=str(method))
    if refused is not None:
        return render(req, refused)
    if method == "resources/read":
        return await _read(req)
    if method == "prompts/get":
        return await _get_prompt(req)
    return await _complete(req)


def _parts(
    req: RpcRequest,
) -> tuple[dict[str, Any], Any, Era, CallContext, Surface, Catalogue]:
    """What each handler here reads of its request, as locals."""
    return req.params, req.rid, req.era, req.ctx, req.surface, req.catalogue


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _visible(ctx: CallContext, spec: Any) -> Any:
    return spec if spec is not None and evaluate(spec.policy, ctx.actor) else None


def find_resource(
    surface: Surface, ctx: CallContext, uri: str
) -> tuple[ResourceSpec | ResourceTemplateSpec, Any] | None:
    """The caller's resource for ``uri`` and its bound variables (``None``: not theirs)."""
    static = _visible(ctx, surface.features.resources.get(uri))
    if static is not None:
        return static, None
    for template in surface.features.templates:
        variables = template.bind(uri)
        if variables is not None and _visible(ctx, template) is not None:
            return template, variables
    return None


def _scoped(ctx: CallContext, work: Callable[[], Any]) -> Callable[[], Any]:
    """``work`` in one read-only transaction under the tools' role (``tenancy.rls``), on the
    worker thread that runs it."""

    def run() -> Any:
        with rls.scoped(ctx.tenant_id, read_only=True):
            return work()

    return run


async def _run(req: RpcRequest, binding: requeststate.Binding, work: Any, done: Any) -> Reply:
    """Run ``work`` bounded with the request's exchange; ``done(value)`` shapes a finished one."""
    opened = None
    if req.state_token is not None:
        try:
            inputs = requeststate.open_inputs(req.state_token, req.input_responses, binding)
        except requeststate.RequestStateRefusedError as refused:
            return render(req, runner.StateRefused(refused.reason))
        opened, req.exchange.answers = inputs.opened, inputs.answers
    else:
        req.exchange.loose_answers = req.input_responses
    req.binding = binding
    try:
        outcome = await bounds.run_bounded(
            functools.partial(runner.job, _scoped(req.ctx, work), opened=opened)
        )
    except bounds.BoundError as bound:
        outcome = bound
    if isinstance(outcome, runner.NeedsCapability):
        outcome = runner.NeedsCapability(
            outcome.required, message="This request needs a client capability it did not declare"
        )
    elif isinstance(outcome, runner.Done):
        if isinstance(outcome.value, _Failed):
            failed = outcome.value
            return error(req.era, req.rid, failed.code, failed.message, failed.data)
        return done(outcome.value)
    return render(req, outcome)


def _contents(
    spec: ResourceSpec | ResourceTemplateSpec, variables: Any, ctx: CallContext, uri: str
) -> Any:
    """Worker thread: the resource's contents, or the ``_Failed`` a read answers."""
    try:
        if variables is None:
            value = spec.fn(ctx)
        else:
            value = spec.fn(ctx, **{k: getattr(variables, k) for k in type(variables).model_fields})
        return contents_of(spec.body_kind, spec.mime_type, uri, value)
    except ResourceNotFoundError:
        return _Failed(INVALID_PARAMS, "Resource not found", {"uri": uri})
    except Exception as exc:
        if database_unavailable(exc):
            raise  # not the resource's failure: the endpoint answers 503
        failure = translate(exc)
        if failure is not None:
            # A domain "no such row" (another tenant's, outside the row scope, …) reads as
            # "no such resource": the same answer whichever it was.
            return _Failed(INVALID_PARAMS, "Resource not found", {"uri": uri})
        logger.exception("MCP resource %s failed (request %s)", uri, ctx.request_id)
        return _Failed(-32603, f"Internal error (request id {ctx.request_id})")


async def readable(surface: Surface, ctx: CallContext, uri: str) -> bool:
    """Whether ``resources/read`` of ``uri`` would answer ``ctx`` with contents now.

    The read path itself (policy, OAuth scope, the resource's own row-scope checks; under the
    call bounds), its contents thrown away: a subscription to ``uri`` is taken, and a change
    of it delivered, only when this holds. Anything short of contents (not found, a failure
    of the resource) is ``False``: a change is never told to a caller who could not read it.

    Raises:
        BoundError: the read could not run (overloaded, timed out): no verdict either way.
        Exception: the database is unavailable (as ``resources/read`` lets it through).
    """
    if scopes.refusal(ctx, read_only=True, what="resources/read") is not None:
        return False
    found = find_resource(surface, ctx, uri)
    if found is None:
        return False
    spec, variables = found
    work = functools.partial(_contents, spec, variables, ctx, uri)
    outcome = await bounds.run_bounded(functools.partial(runner.job, work))
    return isinstance(outcome, runner.Done) and not isinstance(outcome.value, _Failed)


async def _read(req: RpcRequest) -> Reply:
    params, rid, era, ctx, surface, catalogue = _parts(req)
    uri = params.get("uri")
    if not isinstance(uri, str):
        return error(era, rid, INVALID_PARAMS, "uri must be a string")
    found = find_resource(surface, ctx, uri)
    if found is None:
        # Unknown, hidden by policy, or not a valid instance of any template: one answer.
        return error(era, rid, INVALID_PARAMS, "Resource not found", {"uri": uri})
    spec, variables = found
    binding = requeststate.Binding.of(
        tenant=ctx.tenant_id, user=ctx.user_id, method="resources/read", name=uri, arguments={}
    )
    work = functools.partial(_contents, spec, variables, ctx, uri)

    def done(contents: list[dict[str, Any]]) -> Reply:
        body: dict[str, Any] = {"contents": contents}
        body.update(era.cache_fields)
        return result(era, rid, body, catalogue.server_info)

    return await _run(req, binding, work, done)


async def _get_prompt(req: RpcRequest) -> Reply:
    params, rid, era, ctx, surface, catalogue = _parts(req)
    name = params.get("name")
    spec: PromptSpec | None = _visible(
        ctx, surface.features.prompts.get(name) if isinstance(name, str) else None
    )
    if spec is None:
        return error(era, rid, INVALID_PARAMS, f"Unknown prompt: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        return error(era, rid, INVALID_PARAMS, "arguments must be an object")
    validated = spec.validate(arguments)
    if isinstance(validated, list):
        return error(era, rid, INVALID_PARAMS, "Invalid prompt arguments", {"errors": validated})
    binding = requeststate.Binding.of(
        tenant=ctx.tenant_id,
        user=ctx.user_id,
        method="prompts/get",
        name=spec.name,
        arguments=arguments,
    )
    call_ctx = ctx
    fields = type(validated).model_fields

    def work() -> Any:
        try:
            value = spec.fn(call_ctx, **{k: getattr(validated, k) for k in fields})
            return spec.messages(value)
        except Exception as exc:
            if database_unavailable(exc):
                raise  # not the prompt's failure: the endpoint answers 503
            failure = translate(exc)
            if failure is not None:
                detail: dict[str, Any] = {"code": failure.code, "message": failure.message}
                if failure.data:
                    detail["data"] = failure.data
                return _Failed(INVALID_PARAMS, failure.message, {"error": detail})
            logger.exception("MCP prompt %s failed (request %s)", name, ctx.request_id)
            return _Failed(-32603, f"Internal error (request id {ctx.request_id})")

    def done(messages: list[dict[str, Any]]) -> Reply:
        body: dict[str, Any] = {"description": spec.description, "messages": messages}
        return result(era, rid, body, catalogue.server_info)

    return await _run(req, binding, work, done)


async def _complete(req: RpcRequest) -> Reply:
    params, rid, era, ctx, surface, catalogue = _parts(req)
    ref = _mapping(params.get("ref"))
    argument = _mapping(params.get("argument"))
    known = _mapping(_mapping(params.get("context")).get("arguments"))
    target: Any = None
    if ref.get("type") == "ref/prompt":
        target = _visible(ctx, surface.features.prompts.get(str(ref.get("name"))))
    elif ref.get("type") == "ref/resource":
        target = _visible(ctx, surface.features.template_by_uri_template(str(ref.get("uri"))))
    if target is None:
        return error(era, rid, INVALID_PARAMS, "Unknown completion reference", {"ref": dict(ref)})
    completer = target.completers.get(str(argument.get("name")))
    value = argument.get("value")
    unstorable = _jsonrpc.unstorable_strings({"value": value, "context": known})
    if unstorable:
        problems = {"errors": unstorable}
        return error(era, rid, INVALID_PARAMS, "Invalid completion argument", problems)
    if completer is None or not isinstance(value, str):
        return result(
            era, rid, {"completion": {"values": [], "hasMore": False}}, catalogue.server_info
        )
    limit = min(int(conf.get("MAX_COMPLETIONS")), 100)
    arguments = {str(k): str(v) for k, v in known.items()}

    def work() -> Any:
        try:
            values = [str(v) for v in completer(ctx, value, arguments)]
        except Exception as exc:
            if database_unavailable(exc):
                raise
            if translate(exc) is not None:
                return []
            logger.exception("MCP completer failed (request %s)", ctx.request_id)
            return _Failed(-32603, f"Internal error (request id {ctx.request_id})")
        return values

    try:
        values = await bounds.run_bounded(_scoped(ctx, work))
    except bounds.BoundError as bound:
        return bound_refusal(era, rid, bound)
    if isinstance(values, _Failed):
        return error(era, rid, values.code, values.message)
    completion = {"values": values[:limit], "total": len(values), "hasMore": len(values) > limit}
    return result(era, rid, {"completion": completion}, catalogue.server_info)
