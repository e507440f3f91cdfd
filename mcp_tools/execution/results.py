"""Running a tool's body and shaping what it returns (or raises) into a ``CallToolResult``.

A read tool runs here (``run_read``, on a worker thread or on the event loop); a write tool
in its idempotent unit (``mcp_tools.execution.writes.run_write``), which shapes its results
with the functions here; ``mcp_tools.execution.runner`` chooses between them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from django.utils.module_loading import import_string
from pydantic import BaseModel

from mcp_tools import conf
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.codes import CODE_INTERNAL, CODE_RESULT_NOT_MODEL
from mcp_tools.exceptions import ToolError, ToolFailure
from mcp_tools.rpc import jsonrpc as _jsonrpc
from mcp_tools.serving.error_pages import database_unavailable
from tenancy import rls

logger = logging.getLogger("mcp_tools.calls")


@functools.lru_cache(maxsize=8)
def _translator(path: str) -> Callable[[BaseException], ToolFailure | None]:
    return import_string(path)


def translate(exc: BaseException) -> ToolFailure | None:
    """``ToolError`` or what the configured translator makes of ``exc``; ``None`` if unknown."""
    if isinstance(exc, ToolError):
        return ToolFailure(exc.code, exc.message, exc.data)
    path = conf.get("ERROR_TRANSLATOR")
    if path:
        return _translator(path)(exc)
    return None


def error_result(code: str, message: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``isError`` result the model can read and act on, with a stable code.

    The error travels as one text block holding ``{"error": {"code", "message", "data"?}}``
    and never as ``structuredContent``: a tool that declares an ``outputSchema`` promises that
    every structured result conforms to it, and conforming clients (the TypeScript SDK that
    Claude Code, Claude Desktop and the Inspector are built on) validate it even when
    ``isError`` is true, so an error object there would be thrown away as a schema violation.
    """
    error: dict[str, Any] = {"code": code, "message": message}
    if data:
        error["data"] = data
    return {
        "content": [{"type": "text", "text": _jsonrpc.dumps({"error": error}).decode()}],
        "isError": True,
    }


def failure_result(failure: ToolFailure) -> dict[str, Any]:
    return error_result(failure.code, failure.message, failure.data)


def internal_error_result(spec: ToolSpec, request_id: str) -> dict[str, Any]:
    return error_result(
        CODE_INTERNAL,
        f"Error executing tool {spec.name}. Quote request id {request_id} to the operator.",
        {"requestId": request_id},
    )


def invoke(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> Any:
    """The tool's body called with the validated arguments in the shape it declares (a read's
    or a write's: a coroutine for an ``async def`` tool)."""
    if spec.write_unit is not None:
        return spec.fn(ctx, validated)  # the unit's own tool reads the arguments it needs
    if spec.call_style == "model":
        assert spec.user_model is not None
        if spec.read_only:
            return spec.fn(ctx, validated)
        values = {k: getattr(validated, k) for k in spec.user_model.model_fields}
        return spec.fn(ctx, spec.user_model.model_construct(**values))
    return spec.fn(ctx, **{name: getattr(validated, name) for name in spec.param_names})


class PlainJSON(dict[str, Any]):
    """A read's answer its adapter has checked to be plain JSON (``contrib.drf.plain_json``):
    with ``ToolSpec.plain_results`` it is the structured result as is, not validated into the
    declared model and dumped back (which would hand back an equal dict)."""

    __slots__ = ()


def model_payload(spec: ToolSpec, value: Any) -> dict[str, Any]:
    """The declared model's JSON; anything else (a dict that happens to fit included) is the
    tool error ``Tool.ResultNotModel``, raised inside a write's unit so the write rolls back.

    Only a call can tell: the annotation promises a model, the body may return anything."""
    model = spec.result_model
    assert model is not None
    if isinstance(value, model):
        return value.model_dump(mode="json", by_alias=True)
    returned = type(value).__name__
    logger.error(
        "MCP tool %s returned %s, not the %s it declares", spec.name, returned, model.__name__
    )
    raise ToolError(
        CODE_RESULT_NOT_MODEL,
        f"Tool {spec.name} is declared to return {model.__name__} but returned {returned}; "
        f"its code must return a {model.__name__} instance.",
        {"tool": spec.name, "declared": model.__name__, "returned": returned},
    )


def success_result(spec: ToolSpec, value: Any) -> dict[str, Any]:
    """Shape a read tool's return value into a ``CallToolResult``."""
    if spec.result_kind == "model":
        if spec.plain_results and type(value) is PlainJSON:
            return structured_result(value)  # checked by its adapter: no model to dump
        return structured_result(model_payload(spec, value))
    if spec.result_kind == "text":
        return {"content": [{"type": "text", "text": str(value)}], "isError": False}
    blocks = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(block, BaseModel)
        else block
        for block in value
    ]
    return {"content": blocks, "isError": False}


def structured_result(payload: dict[str, Any]) -> dict[str, Any]:
    # The text copy is for clients that ignore structuredContent (spec SHOULD); the payload
    # is encoded once, for it and for the response (``_jsonrpc.result_bytes`` splices it).
    structured = _jsonrpc.encoded(payload)
    return {
        "content": [{"type": "text", "text": structured.encoded.decode()}],
        "structuredContent": structured,
        "isError": False,
    }


def run_read(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker-thread body of a read tool (an ``async def`` one is awaited on a loop of its
    own here; on ``/mcp`` it runs on the server's loop, ``run_read_on_loop``)."""
    try:
        # The tool's queries, lazy ones its result reads included, run in one read-only
        # transaction under the tools' role (tenancy.rls); an async one's too: awaited here,
        # its sync_to_async queries run on this thread's connection.
        with rls.scoped(ctx.tenant.id, read_only=True):
            if spec.on_loop:
                return async_to_sync(run_read_on_loop)(spec, ctx, validated)
            return success_result(spec, invoke(spec, ctx, validated))
    except Exception as exc:
        return _read_failure(spec, ctx, exc)


async def run_read_on_loop(
    spec: ToolSpec, ctx: CallContext, validated: BaseModel
) -> dict[str, Any]:
    """Event-loop body of an ``async def`` read tool."""
    try:
        return success_result(spec, await invoke(spec, ctx, validated))
    except Exception as exc:
        return _read_failure(spec, ctx, exc)


def _read_failure(spec: ToolSpec, ctx: CallContext, exc: Exception) -> dict[str, Any]:
    """What a read tool that raised ``exc`` answers (or ``exc`` again: no tool's failure)."""
    if database_unavailable(exc):
        # Not the tool's failure: the endpoint answers 503 (mcp_tools.serving.error_pages).
        raise exc
    failure = translate(exc)
    if failure is not None:
        return failure_result(failure)
    logger.exception("MCP tool %s failed (request %s)", spec.name, ctx.request_id, exc_info=exc)
    return internal_error_result(spec, ctx.request_id)
