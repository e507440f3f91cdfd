"""OpenTelemetry: one span per tool call that continues the caller's trace, read back from the
SDK's in-memory exporter.

The tracer provider is process-wide and can be set once: the first test sets one whose
exporter only keeps spans while a test listens (``spans`` fixture).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_tools.execution import results as tool_results
from mcp_tools.observability.tracing import instrument_django
from mcp_tools.serving.asgi import SyncMiddlewareASGIHandler
from tests.mcp_tools.conftest import HANDSHAKE, MODERN, modern_meta
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db(transaction=True)

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
META_TRACE = "0af7651916cd43dd8448eb211c80319c"
META_SPAN = "b7ad6b7169203331"
SECRET = "s3cret-argument-value-0815"


def traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


class _WhileListening(SpanProcessor):
    """Hands finished spans to ``inner`` only while a test listens."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner
        self.listening = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.listening:
            self.inner.on_end(span)


EXPORTER = InMemorySpanExporter()
PROCESSOR = _WhileListening(SimpleSpanProcessor(EXPORTER))


def _provider() -> TracerProvider:
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(PROCESSOR)
        trace.set_tracer_provider(provider)
    current = trace.get_tracer_provider()
    assert isinstance(current, TracerProvider)
    return current


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    _provider()
    EXPORTER.clear()
    PROCESSOR.listening = True
    yield EXPORTER
    PROCESSOR.listening = False
    EXPORTER.clear()


@pytest.fixture
def asgi_app(spans: InMemorySpanExporter) -> Iterator[SyncMiddlewareASGIHandler]:
    """The farm's ASGI handler with Django instrumented (before it loads its middleware)."""
    instrument_django(tracer_provider=_provider())
    try:
        yield SyncMiddlewareASGIHandler(threads=4)
    finally:
        DjangoInstrumentor().uninstrument()


def _tool_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [
        span
        for span in exporter.get_finished_spans()
        if span.attributes and span.attributes.get("mcp.method.name") == "tools/call"
    ]


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


@mutation(
    "mcp_tools/observability/records.py",
    find="tracing.span_for(call, meta=meta, headers=headers) if tracing.recording() else None",
    replace="None",
)
def test_each_tool_call_is_one_server_span_after_the_mcp_conventions(mcp_client, spans):
    """Mutation: drop ``tracing.span_for`` from ``tool_call`` → red."""
    client = mcp_client()
    client.call("mcptest_whoami")
    (span,) = _tool_spans(spans)
    assert span.name == "tools/call mcptest_whoami"
    assert span.kind is SpanKind.SERVER
    expected = {
        "mcp.method.name": "tools/call",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "mcptest_whoami",
        "jsonrpc.request.id": "1",
        "mcp.protocol.version": HANDSHAKE,
        "mcp_tools.tenant_id": str(client.membership.tenant_id),
        "mcp_tools.role": "Owner",
        "mcp_tools.outcome": "ok",
        "mcp_tools.replayed": False,
    }
    assert expected.items() <= dict(span.attributes or {}).items()
    assert span.status.status_code is StatusCode.UNSET
    assert span.parent is None  # no caller trace, no instrumented request: a new trace


@mutation(
    "mcp_tools/observability/tracing.py",
    find="    return propagate.extract(headers, context=current), []\n",
    replace="    return current, []\n",
)
def test_the_span_continues_the_callers_trace_from_the_traceparent_header(mcp_client, spans):
    """No Django instrumentation: the header is read directly. Mutation: drop the header
    branch of ``tracing._parent`` → red (a new trace)."""
    client = mcp_client()
    client.rpc(
        "tools/call",
        {"name": "mcptest_whoami"},
        **{
            "MCP-Protocol-Version": HANDSHAKE,
            "traceparent": traceparent(CALLER_TRACE, CALLER_SPAN),
        },
    )
    (span,) = _tool_spans(spans)
    assert _hex(span.context.trace_id, 32) == CALLER_TRACE
    assert span.parent is not None and _hex(span.parent.span_id, 16) == CALLER_SPAN


@mutation(
    "mcp_tools/observability/tracing.py",
    find="        span.set_status(Status(StatusCode.ERROR, call.error_code))\n",
    replace="",
)
def test_a_tool_error_and_a_protocol_error_mark_the_span(mcp_client, spans):
    """Mutation: drop ``span.set_status`` from the ``tool_error`` branch of ``tracing.end``
    → red."""
    client = mcp_client()
    client.call("mcptest_refuse", {"text": SECRET, "idempotencyKey": "k"})
    client.call("no_such_tool")
    refused, unknown = _tool_spans(spans)
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.attributes is not None
    assert refused.attributes["error.type"] == "tool_error"
    assert refused.attributes["mcp_tools.error_code"] == "Test.Refused"
    assert unknown.name == "tools/call"  # a client-chosen name is never part of the span name
    assert unknown.attributes is not None
    assert "gen_ai.tool.name" not in unknown.attributes
    assert unknown.attributes["error.type"] == "-32602"
    assert unknown.attributes["rpc.response.status_code"] == "-32602"
    assert unknown.status.status_code is StatusCode.ERROR
    for span in (refused, unknown):
        assert SECRET not in json.dumps(dict(span.attributes or {}), default=str)


@mutation(
    "mcp_tools/execution/bounds.py",
    find="_pool().submit(observability.carry(in_thread))",
    replace="_pool().submit(in_thread)",
)
def test_spans_a_tool_starts_are_children_of_its_call_span(mcp_client, spans, monkeypatch):
    """Tools run in worker threads. Mutation: submit ``in_thread`` without
    ``observability.carry`` in ``execution.bounds.run_bounded`` → red (the tool's span starts a
    trace)."""
    invoke = tool_results.invoke

    def traced(spec: Any, ctx: Any, validated: Any) -> Any:
        with trace.get_tracer("test").start_as_current_span("inside the tool"):
            return invoke(spec, ctx, validated)

    monkeypatch.setattr(tool_results, "invoke", traced)
    mcp_client().call("mcptest_whoami")
    inner = next(s for s in spans.get_finished_spans() if s.name == "inside the tool")
    (call_span,) = _tool_spans(spans)
    assert inner.parent is not None and inner.parent.span_id == call_span.context.span_id
    assert inner.context.trace_id == call_span.context.trace_id


@mutation(
    Edit(
        "mcp_tools/observability/tracing.py",
        find="import functools\n",
        replace="import contextvars\nimport functools\n",
    ),
    Edit(
        "mcp_tools/observability/tracing.py",
        find="    captured = otel_context.get_current()\n",
        replace=(
            "    captured = otel_context.get_current()\n    copied = contextvars.copy_context()\n"
        ),
    ),
    Edit(
        "mcp_tools/observability/tracing.py",
        find="            return work()\n",
        replace="            return copied.run(work)\n",
    ),
)
def test_the_context_carried_into_the_thread_is_only_opentelemetrys(mcp_client, spans, monkeypatch):
    """The call context guard (a context built outside the request is refused) still holds in
    the worker thread: ``carry`` moves no other context variable there. Mutation: run
    ``work`` in ``contextvars.copy_context()`` in ``carry`` → red."""
    from mcp_tools.call.context import _request_in_flight

    seen: list[Any] = []
    invoke = tool_results.invoke

    def peek(spec: Any, ctx: Any, validated: Any) -> Any:
        seen.append(_request_in_flight.get())
        return invoke(spec, ctx, validated)

    monkeypatch.setattr(tool_results, "invoke", peek)
    mcp_client().call("mcptest_whoami")
    assert seen == [None]


def _asgi_post(app: Any, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
    async def post() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await http.post("/mcp", json=body, headers=headers)

    return asyncio.run(post())


def _bearer_headers(client: Any, **extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {client.bearer}",
        "Accept": "application/json, text/event-stream",
        **extra,
    }


@mutation(
    "mcp_tools/observability/tracing.py",
    find="    if ambient.is_valid or headers is None or headers.get(TRACEPARENT) is None:\n",
    replace="    if headers is None or headers.get(TRACEPARENT) is None:\n",
)
def test_under_asgi_the_tool_span_is_a_child_of_the_request_span(mcp_client, asgi_app, spans):
    """Django instrumented, served by the farm's ASGI handler: the request span continues the
    header's trace and the tool call's span is its child. Mutation: read the HTTP header in
    ``tracing._parent`` even when a request span is current → red (the caller's span becomes
    the parent)."""
    client = mcp_client()
    response = _asgi_post(
        asgi_app,
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "mcptest_whoami"}},
        _bearer_headers(
            client,
            **{
                "MCP-Protocol-Version": HANDSHAKE,
                "traceparent": traceparent(CALLER_TRACE, CALLER_SPAN),
            },
        ),
    )
    assert response.status_code == 200, response.text
    (call_span,) = _tool_spans(spans)
    (request_span,) = [
        s for s in spans.get_finished_spans() if s.kind is SpanKind.SERVER and s is not call_span
    ]
    assert _hex(request_span.context.trace_id, 32) == CALLER_TRACE
    assert request_span.parent is not None and _hex(request_span.parent.span_id, 16) == CALLER_SPAN
    assert call_span.parent is not None
    assert call_span.parent.span_id == request_span.context.span_id
    assert call_span.context.trace_id == request_span.context.trace_id


@mutation(
    "mcp_tools/observability/tracing.py",
    find="    if isinstance(meta, Mapping) and isinstance(meta.get(TRACEPARENT), str):\n",
    replace="    if False:\n",
)
def test_in_2026_the_span_continues_the_trace_in_params_meta_and_links_the_request(
    mcp_client, asgi_app, spans
):
    """The MCP conventions: the client's span in ``params._meta`` is the parent, the transport's
    span a link. Mutation: ignore ``meta`` in ``tracing._parent`` → red (the header's trace)."""
    client = mcp_client()
    meta = {**modern_meta(), "traceparent": traceparent(META_TRACE, META_SPAN)}
    body = {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {"name": "mcptest_whoami", "arguments": {}, "_meta": meta},
    }
    headers = _bearer_headers(
        client,
        **{
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "mcptest_whoami",
            "traceparent": traceparent(CALLER_TRACE, CALLER_SPAN),
        },
    )
    response = _asgi_post(asgi_app, body, headers)
    assert response.status_code == 200, response.text
    (call_span,) = _tool_spans(spans)
    assert _hex(call_span.context.trace_id, 32) == META_TRACE
    assert call_span.parent is not None and _hex(call_span.parent.span_id, 16) == META_SPAN
    assert call_span.attributes is not None
    assert call_span.attributes["mcp.protocol.version"] == MODERN
    (link,) = call_span.links
    assert _hex(link.context.trace_id, 32) == CALLER_TRACE  # the instrumented HTTP request
