"""OpenTelemetry for the farm (``CLUCK_OTEL=1``; the ``otel`` extra): an SDK tracer provider and
Django's request spans. ``mcp_tools`` adds one span per tool call on its own.

Spans go to ``OTEL_EXPORTER_OTLP_ENDPOINT`` when it is set (install
``opentelemetry-exporter-otlp-proto-http``), else to the console. The service is named by
``OTEL_SERVICE_NAME`` (default ``cluck``).
"""

from __future__ import annotations

import os
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from mcp_tools.observability.tracing import instrument_django


def _exporter() -> Any:
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise ImproperlyConfigured(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set: "
                "pip install opentelemetry-exporter-otlp-proto-http"
            ) from exc
        return OTLPSpanExporter()
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    return ConsoleSpanExporter()


def configure() -> None:
    """Install the tracer provider and instrument Django (before any handler is built)."""
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    service = os.environ.get("OTEL_SERVICE_NAME", "cluck")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(_exporter()))
    trace.set_tracer_provider(provider)
    instrument_django()
