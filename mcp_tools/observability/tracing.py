"""OpenTelemetry: one span per tool call, following the MCP and GenAI semantic conventions.

Optional: without ``opentelemetry-api`` (the ``otel`` extra) every function here does nothing.
With the API and no SDK configured, spans are non-recording and cost next to nothing. The
project configures the SDK (a ``TracerProvider`` and an exporter) and, if it wants request
spans, instruments Django with ``instrument_django()`` before its handler loads middleware
(``AppConfig.ready`` is early enough).

The span (kind ``SERVER``, named ``tools/call <tool>``) continues the caller's trace:

1. from ``params._meta`` (``traceparent``/``tracestate``/``baggage``, unprefixed, SEP-414),
   which the MCP conventions prefer; the ambient (HTTP) span, if any, becomes a link;
2. else from the ambient context: Django's request span, itself continued from the HTTP
   ``traceparent`` header when Django is instrumented;
3. else from the HTTP ``traceparent`` header directly.

Attributes: ``mcp.method.name``, ``gen_ai.operation.name`` (``execute_tool``),
``gen_ai.tool.name``, ``jsonrpc.request.id``, ``mcp.protocol.version``, ``network.transport``,
``network.protocol.name``; on failure ``error.type`` (the JSON-RPC code, or ``tool_error``) and
``rpc.response.status_code``; and ``mcp_tools.tenant_id``, ``mcp_tools.role``,
``mcp_tools.request_id``, ``mcp_tools.outcome``, ``mcp_tools.error_code``,
``mcp_tools.replayed``. Argument values and results are never attributes.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeVar

try:
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
    from opentelemetry.trace import (
        Link,
        NoOpTracerProvider,
        ProxyTracerProvider,
        SpanKind,
        Status,
        StatusCode,
    )
except ImportError:  # the "otel" extra is not installed
    otel_context = None  # type: ignore[assignment]
    trace = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from mcp_tools.observability.records import ToolCall

TRACER_NAME: Final = "mcp_tools"
# Read once: a provider named in the environment is set at start-up, not mid-run.
_PROVIDER_FROM_ENVIRONMENT: Final = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
TRACEPARENT: Final = "traceparent"
T = TypeVar("T")


def available() -> bool:
    """``opentelemetry-api`` is installed."""
    return trace is not None


_UNKNOWN: Final = object()


def recording() -> bool:
    """A tracer provider is configured (an SDK): spans are worth starting."""
    if trace is None:
        return False
    # Until a provider is set, the API's get_tracer_provider reads os.environ on every call
    # (OTEL_PYTHON_TRACER_PROVIDER): two environment lookups per tool call, a tenth of what
    # the call record costs (bench/mcp_profile.py). The global it fills is read first; where
    # the API has no such global, or the environment names a provider, the API decides.
    provider = getattr(trace, "_TRACER_PROVIDER", _UNKNOWN)
    if provider is None and not _PROVIDER_FROM_ENVIRONMENT:
        return False
    if provider is _UNKNOWN or provider is None:
        provider = trace.get_tracer_provider()
    return not isinstance(provider, ProxyTracerProvider | NoOpTracerProvider)


@functools.lru_cache(maxsize=1)
def _tracer(provider: Any) -> Any:
    # One tracer per provider: the SDK builds a new one on every get_tracer call (about a tenth
    # of a span's cost, bench/observability_bench.py).
    return provider.get_tracer(TRACER_NAME)


def _parent(meta: Any, headers: Mapping[str, str] | None) -> tuple[Any, list[Any]]:
    """The context to start the call's span in, and the links to give it."""
    current = otel_context.get_current()
    ambient = trace.get_current_span(current).get_span_context()
    if isinstance(meta, Mapping) and isinstance(meta.get(TRACEPARENT), str):
        carrier = {key: meta[key] for key in (TRACEPARENT, "tracestate", "baggage") if key in meta}
        extracted = propagate.extract(carrier, context=current)
        remote = trace.get_current_span(extracted).get_span_context()
        if remote.is_valid:
            # The MCP client span is the parent; the transport's span is recorded as a link.
            links = [Link(ambient)] if ambient.is_valid and ambient != remote else []
            return extracted, links
    if ambient.is_valid or headers is None or headers.get(TRACEPARENT) is None:
        return current, []
    return propagate.extract(headers, context=current), []


def _start_attributes(call: ToolCall) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "mcp_tools.protocol": call.protocol,
    }
    if call.protocol == "mcp":
        attributes["mcp.method.name"] = call.method
        if call.protocol_version:
            attributes["mcp.protocol.version"] = call.protocol_version
    if call.known and call.tool:
        attributes["gen_ai.tool.name"] = call.tool
    if call.rpc_id is not None:
        attributes["jsonrpc.request.id"] = str(call.rpc_id)
    for name, value in (
        ("mcp_tools.request_id", call.request_id),
        ("mcp_tools.tenant_id", call.tenant_id),
        ("mcp_tools.role", call.role),
    ):
        if value is not None:
            attributes[name] = str(value)
    return attributes


@contextmanager
def span_for(call: ToolCall, *, meta: Any, headers: Mapping[str, str] | None) -> Iterator[None]:
    """Start ``call``'s span, current for the block; ``end`` (via ``call.finish``) ends it."""
    if not recording():
        yield  # no SDK: every span would be a no-op, and its trace would reach no one
        return
    parent, links = _parent(meta, headers)
    parent_context = trace.get_current_span(parent).get_span_context()
    if parent_context.is_valid:
        call.parent_trace_id = format(parent_context.trace_id, "032x")
    method = call.method or "request"
    name = f"{method} {call.tool}" if call.known and call.tool else method
    span = _tracer(trace.get_tracer_provider()).start_span(
        name,
        context=parent,
        kind=SpanKind.SERVER,
        attributes=_start_attributes(call),
        links=links,
    )
    call.span = span
    call.trace_id, call.span_id = ids(span)
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    try:
        yield
    finally:
        otel_context.detach(token)
        end(call)


def end(call: ToolCall) -> None:
    """Record the outcome on ``call``'s span and end it (once)."""
    span, call.span = call.span, None
    if span is None:
        return
    span.set_attribute("mcp_tools.outcome", str(call.outcome))
    span.set_attribute("mcp_tools.replayed", call.replayed)
    if call.outcome == "tool_error":
        span.set_attribute("error.type", "tool_error")
        if call.error_code:
            span.set_attribute("mcp_tools.error_code", call.error_code)
        span.set_status(Status(StatusCode.ERROR, call.error_code))
    elif call.error_code is not None:
        span.set_attribute("error.type", call.error_code)
        span.set_attribute("rpc.response.status_code", call.error_code)
        span.set_attribute("mcp_tools.error_code", call.error_code)
        span.set_status(Status(StatusCode.ERROR, call.error_message or call.error_code))
    span.end()


def ids(span: Any) -> tuple[str | None, str | None]:
    """``(trace_id, span_id)`` of ``span`` in hex, or ``(None, None)``."""
    if span is None or trace is None:
        return None, None
    context = span.get_span_context()
    if not context.is_valid:
        return None, None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def carry(work: Callable[[], T]) -> Callable[[], T]:
    """``work``, to run in another thread inside the caller's OpenTelemetry context.

    Only OpenTelemetry's context travels (spans a tool starts become children of its call's
    span); no other context variable does.
    """
    if not recording():
        return work
    captured = otel_context.get_current()

    def in_context() -> T:
        token = otel_context.attach(captured)
        try:
            return work()
        finally:
            otel_context.detach(token)

    return in_context


def instrument_django(**kwargs: Any) -> None:
    """Instrument Django's request handling (``opentelemetry-instrumentation-django``).

    Call once, before the handler loads its middleware (``AppConfig.ready`` is early enough).
    ``kwargs`` go to ``DjangoInstrumentor().instrument`` (``tracer_provider=`` …).
    """
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    instrumentor = DjangoInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.instrument(**kwargs)
