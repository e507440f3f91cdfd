"""One record per tool call: its log line, its metric samples and its span, from one object.

A ``ToolCall`` opens when a ``tools/call`` (or an A2A skill invocation) starts and is finished
once, when its answer is known. What it answered is noted on it — the ``CallToolResult``
(``result``), a JSON-RPC error code (``error``) or, failing both, the reply bytes (``reply``) —
and ``finish`` turns that into one outcome:

=================  ======================================================================
``ok``             the tool answered (``replayed`` says whether a write was a replay)
``tool_error``     ``isError: true``; ``error_code`` is the tool error code
``protocol_error`` a JSON-RPC error; ``error_code`` is its code (``"-32602"``)
``rate_limited``   -32012, refused before the message was read (no tool, no request id)
``overloaded``     -32010, every concurrency slot was busy
``timed_out``      -32011, the call missed its deadline (the tool may still finish)
=================  ======================================================================

The log record goes to the ``mcp_tools.calls`` logger with its fields as record attributes
(``JsonFormatter`` writes them as JSON keys). Argument values are never part of it.
"""

from __future__ import annotations

import contextvars
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from contextlib import AbstractContextManager
from typing import Any, Final, TypeVar

from mcp_types import CLIENT_INFO_META_KEY

from mcp_tools import conf
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_ALIAS, REPLAYED_FIELD
from mcp_tools.observability import audit, metrics, tracing
from tenancy import rate_limited as rate_limited_signal

logger = logging.getLogger(__name__)
CALL_LOGGER: Final = logging.getLogger("mcp_tools.calls")
R = TypeVar("R")

OK: Final = "ok"
TOOL_ERROR: Final = "tool_error"
PROTOCOL_ERROR: Final = "protocol_error"
RATE_LIMITED: Final = "rate_limited"
OVERLOADED: Final = "overloaded"
TIMED_OUT: Final = "timed_out"
# Metric label and span name for a name that is no tool of the caller's surface: client-chosen
# strings must never become label values (unbounded series).
UNKNOWN_TOOL: Final = "_unknown"
# The optional fields MCP_TOOLS_CALL_LOG_EXTRA_FIELDS may name.
EXTRA_FIELDS: Final = frozenset({"argument_names", "client", "email"})
# Client-chosen strings are cut to this length before they reach a log record.
_MAX_TEXT: Final = 128
_MAX_ARGUMENT_NAMES: Final = 64
# Outcomes an operator should see at WARNING (the rest are INFO).
_WARNING_OUTCOMES: Final = frozenset({RATE_LIMITED, OVERLOADED, TIMED_OUT})
_WARNING_CODES: Final = frozenset({"Tool.InternalError", "-32603"})

_current: contextvars.ContextVar[ToolCall | None] = contextvars.ContextVar(
    "mcp_tools_tool_call", default=None
)


def _text(value: Any) -> str | None:
    return value[:_MAX_TEXT] if isinstance(value, str) else None


def outcome_for_code(code: int) -> str:
    """The outcome a JSON-RPC error code stands for."""
    # Imported here: mcp_tools.calls imports this package for its hooks.
    from mcp_tools import codes as calls

    return {
        calls.OVERLOADED: OVERLOADED,
        calls.TIMED_OUT: TIMED_OUT,
        calls.RATE_LIMITED: RATE_LIMITED,
    }.get(code, PROTOCOL_ERROR)


def _tool_error_code(result: Mapping[str, Any]) -> str | None:
    """The code inside an ``isError`` result's ``{"error": {"code": ...}}`` text block."""
    content = result.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[0], Mapping):
        return None
    text = content[0].get("text")
    if not isinstance(text, str) or not text.startswith('{"error"'):
        return None
    try:
        code = json.loads(text)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return None
    return _text(code)


class ToolCall:
    """One call being observed. Built by ``tool_call``; finished exactly once."""

    def __init__(
        self,
        *,
        protocol: str,
        method: str | None,
        era: str | None,
        protocol_version: str | None,
        request_id: str | None,
        rpc_id: Any,
        tenant_id: Any,
        actor_id: Any,
        role: str | None,
        tool: Any,
        known: bool,
        extras: Mapping[str, Any] | None = None,
    ) -> None:
        self.protocol = protocol
        self.method = method
        self.era = era
        self.protocol_version = protocol_version
        self.request_id = request_id
        self.rpc_id = rpc_id if isinstance(rpc_id, int | str) else None
        self.tenant_id = tenant_id
        self.actor_id = actor_id
        self.role = role
        self.tool = _text(tool)
        self.known = known and self.tool is not None
        self.extras = dict(extras or {})
        self.outcome: str | None = None
        self.error_code: str | None = None
        self.error_message: str | None = None
        self.replayed = False
        self.duration_seconds: float | None = None
        self.span: Any = None  # while open (mcp_tools.observability.tracing)
        self.trace_id: str | None = None
        self.span_id: str | None = None
        self.parent_trace_id: str | None = None
        # What the stored call audit keeps beside the record's fields
        # (mcp_tools.observability.audit.note); None: not audited.
        self.audit: dict[str, Any] | None = None
        self._started = time.perf_counter()

    @property
    def tool_label(self) -> str:
        """The tool's name when it is a tool of the caller's surface, else ``_unknown``."""
        return self.tool if self.known and self.tool else UNKNOWN_TOOL

    # --- what the call answered ---------------------------------------------------------------

    def result(self, result: Mapping[str, Any]) -> None:
        """Note the ``CallToolResult`` the call answers with (the first note wins)."""
        if self.outcome is not None:
            return
        kind = result.get("resultType")
        if isinstance(kind, str) and kind != "complete":
            self.outcome = kind  # a 2026-07-28 interim result (input_required, task)
        elif result.get("isError") is True:
            self.outcome, self.error_code = TOOL_ERROR, _tool_error_code(result)
        else:
            structured = result.get("structuredContent")
            self.outcome = OK
            self.replayed = (
                isinstance(structured, Mapping) and structured.get(REPLAYED_FIELD) is True
            )

    def error(self, code: int, message: str | None = None) -> None:
        """Note a JSON-RPC error answer (the first note wins)."""
        if self.outcome is not None:
            return
        self.outcome, self.error_code, self.error_message = (
            outcome_for_code(code),
            str(code),
            message,
        )

    def reply(self, reply: Any) -> None:
        """Note a reply whose result or error was not noted: read its JSON-RPC body."""
        body = getattr(reply, "body", None)
        if self.outcome is not None or not isinstance(body, bytes) or not body:
            return
        try:
            decoded = json.loads(body)
        except ValueError:
            return
        if not isinstance(decoded, Mapping):
            return
        error = decoded.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("code"), int):
            self.error(error["code"], _text(error.get("message")))
        elif isinstance(decoded.get("result"), Mapping):
            self.result(decoded["result"])

    # --- the record -----------------------------------------------------------------------------

    def fields(self) -> dict[str, Any]:
        """The log record's fields (attributes of the ``logging.LogRecord``)."""
        duration = self.duration_seconds
        return {
            "request_id": self.request_id,
            "protocol": self.protocol,
            "era": self.era,
            "protocol_version": self.protocol_version,
            "method": self.method,
            "rpc_id": self.rpc_id,
            "tenant_id": self.tenant_id,
            "actor_id": self.actor_id,
            "role": self.role,
            "tool": self.tool,
            "outcome": self.outcome,
            "error_code": self.error_code,
            "replayed": self.replayed,
            "duration_ms": None if duration is None else round(duration * 1000, 3),
            "trace_id": self.trace_id or self.parent_trace_id,
            "span_id": self.span_id,
            **self.extras,
        }

    def finish(self) -> None:
        """Stop the clock; write the log record, the metric samples and end the span (once)."""
        if self.duration_seconds is not None:
            return
        self.duration_seconds = time.perf_counter() - self._started
        if self.outcome is None:
            # Nothing was noted: the handler raised (the endpoint answers a 5xx).
            self.outcome, self.error_code = PROTOCOL_ERROR, "-32603"
        # Observing must never fail the call it observes.
        try:
            tracing.end(self)
            metrics.observe_call(self)
            _log(self)
            audit.record(self)  # the stored call audit: queued, written off the request's path
        except Exception:
            logger.exception("recording a tool call failed (request %s)", self.request_id)


def _log(call: ToolCall) -> None:
    warn = call.outcome in _WARNING_OUTCOMES or call.error_code in _WARNING_CODES
    level = logging.WARNING if warn else logging.INFO
    if not CALL_LOGGER.isEnabledFor(level):
        return
    fields = call.fields()
    CALL_LOGGER.log(
        level,
        "%s %s -> %s%s in %.1f ms (request %s, tenant %s, actor %s, role %s, %s %s%s)",
        call.method or "request",
        call.tool or "-",
        call.outcome,
        f" {call.error_code}" if call.error_code else "",
        fields["duration_ms"] or 0.0,
        call.request_id or "-",
        call.tenant_id,
        call.actor_id,
        call.role,
        call.protocol,
        call.era or "-",
        ", replayed" if call.replayed else "",
        extra=fields,
    )


@functools.lru_cache(maxsize=8)
def _wanted(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(names) & EXTRA_FIELDS


def _extras(
    *,
    email: str | None,
    arguments: Any,
    declared: Collection[str],
    meta: Any,
    headers: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The optional fields the project asked for (``MCP_TOOLS_CALL_LOG_EXTRA_FIELDS``)."""
    wanted = _wanted(tuple(conf.get("CALL_LOG_EXTRA_FIELDS")))
    extras: dict[str, Any] = {}
    if not wanted:
        return extras
    if "argument_names" in wanted:
        # Names only, and only the tool's own: what the client sent is data, and a name the
        # schema does not declare is data too (it is written as "?").
        sent = list(arguments)[:_MAX_ARGUMENT_NAMES] if isinstance(arguments, Mapping) else []
        extras["argument_names"] = sorted(name if name in declared else "?" for name in sent)
    if "client" in wanted:
        info = meta.get(CLIENT_INFO_META_KEY) if isinstance(meta, Mapping) else None
        client: str | None = (headers or {}).get("User-Agent")
        if isinstance(info, Mapping):
            client = f"{info.get('name')}/{info.get('version')}"
        extras["client"] = _text(client)
    if "email" in wanted:
        extras["email"] = email
    return extras


def tool_call(
    ctx: Any,
    *,
    tool: Any,
    known: bool,
    protocol: str = "mcp",
    method: str = "tools/call",
    era: str | None = None,
    rpc_id: Any = None,
    meta: Any = None,
    headers: Mapping[str, str] | None = None,
    arguments: Any = None,
    declared: Collection[str] = (),
) -> _Observing:
    """Observe one tool call made with ``ctx`` (a ``CallContext``) for the block's duration.

    ``known``: ``tool`` names a tool of the caller's surface (only then is the name a metric
    label and part of the span name). ``meta`` (the request's ``params._meta``) and
    ``headers`` carry the caller's trace context; ``meta`` wins (OpenTelemetry's MCP
    conventions). ``arguments`` are read for their names only, and only when the project asks
    for ``argument_names``; a name not in ``declared`` (the tool's parameters) is written "?".
    The block's span is current inside it; ``note_result`` reaches the call from code the
    block runs (not from worker threads: hand those the ``ToolCall``).
    """
    call = ToolCall(
        protocol=protocol,
        method=method,
        era=era,
        protocol_version=ctx.protocol_version,
        request_id=ctx.request_id,
        rpc_id=rpc_id,
        tenant_id=ctx.tenant_id,
        actor_id=ctx.user_id,
        role=ctx.role.label,
        tool=tool,
        known=known,
        extras=_extras(
            email=ctx.email, arguments=arguments, declared=declared, meta=meta, headers=headers
        ),
    )
    # No span to start (no SDK): no generator context for it either.
    span = tracing.span_for(call, meta=meta, headers=headers) if tracing.recording() else None
    return _Observing(call, span)


class _Observing:
    """``tool_call``'s block: the call current (and its span, if any) until it is finished.

    A class, not a generator context: it wraps every tool call, and a generator's frame and
    its suspended ``yield`` cost more than these two methods."""

    __slots__ = ("call", "_span", "_token")

    def __init__(self, call: ToolCall, span: AbstractContextManager[None] | None) -> None:
        self.call, self._span = call, span
        self._token: contextvars.Token[ToolCall | None] | None = None

    def __enter__(self) -> ToolCall:
        self._token = _current.set(self.call)
        if self._span is not None:
            try:
                self._span.__enter__()
            except BaseException:
                _current.reset(self._token)
                raise
        return self.call

    def __exit__(self, *exc_info: Any) -> None:
        try:
            if self._span is None:
                self.call.finish()
                return
            try:
                self.call.finish()
            finally:
                self._span.__exit__(*exc_info)
        finally:
            assert self._token is not None
            _current.reset(self._token)


def note_result(result: Mapping[str, Any]) -> None:
    """Note ``result`` on the tool call being observed in this context (if any)."""
    call = _current.get()
    if call is not None:
        call.result(result)


def observed_tool_call(
    handler: Callable[[Any, Any], Awaitable[R]],
) -> Callable[[Any, Any], Awaitable[R]]:
    """Decorate the MCP ``tools/call`` runner: one ``ToolCall`` around each invocation.

    The runner is called as ``handler(req, spec)``: the ``RpcRequest`` and the tool the caller's
    surface holds under the requested name (``None``: unknown or hidden), looked up once by
    the caller; the record names the tool (a metric label) exactly when it is one. It returns
    a reply with a JSON-RPC ``body``; a result it notes with ``note_result`` spares reading
    that body back.
    """

    @functools.wraps(handler)
    async def observed(req: Any, spec: Any) -> R:
        params = req.params
        schema = getattr(spec, "input_schema", None) or {}
        with tool_call(
            req.ctx,
            tool=params.get("name"),
            known=spec is not None,
            era=req.era.label,
            rpc_id=req.rid,
            meta=params.get("_meta"),
            headers=req.headers,
            arguments=params.get("arguments"),
            declared=schema.get("properties", {}),
        ) as call:
            audit.note(call, req.ctx, spec, params.get("arguments"), _key(params))
            reply = await handler(req, spec)
            call.reply(reply)
            return reply

    return observed


def _key(params: Mapping[str, Any]) -> Any:
    arguments = params.get("arguments")
    return arguments.get(IDEMPOTENCY_KEY_ALIAS) if isinstance(arguments, Mapping) else None


def rate_limited(request: Any, *, group: str, protocol: str = "mcp") -> None:
    """Record a request refused for its rate before its message was read.

    One call record (outcome ``rate_limited``; no tool, no request id) and one
    ``tenancy.rate_limited`` signal for the refusal counter.
    """
    rate_limited_signal.send(sender=rate_limited, request=request, group=group)
    tenant, actor = getattr(request, "tenant", None), getattr(request, "actor", None)
    call = ToolCall(
        protocol=protocol,
        method=None,
        era=None,
        protocol_version=None,
        request_id=None,
        rpc_id=None,
        tenant_id=getattr(tenant, "id", None) if getattr(tenant, "is_resolved", False) else None,
        actor_id=getattr(actor, "user_id", None),
        role=getattr(getattr(actor, "role", None), "label", None),
        tool=None,
        known=False,
    )
    call.outcome, call.error_code = RATE_LIMITED, str(_rate_limited_code())
    call.finish()


def _rate_limited_code() -> int:
    # Imported here: mcp_tools.calls imports this package for its hooks.
    from mcp_tools import codes as calls

    return calls.RATE_LIMITED
