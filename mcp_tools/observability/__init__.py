"""What ``mcp_tools`` shows an operator: call records, metrics, traces and health.

- ``records``: one ``ToolCall`` per ``tools/call`` (or A2A skill invocation) → one log record
  on ``mcp_tools.calls``, metric samples and a span (``tool_call``, ``observed_tool_call``,
  ``note_result``, ``rate_limited``).
- ``jsonlog.JsonFormatter``: JSON lines for any ``logging`` handler.
- ``metrics``: Prometheus (``prometheus-client``, optional), multiprocess-aware, and the
  guarded ``/metrics`` view.
- ``tracing``: OpenTelemetry (optional) spans after the MCP/GenAI semantic conventions.
- ``health``: ``/healthz`` and ``/readyz``; ``mcp_tools.observability.urls`` routes all three.

The rest of ``mcp_tools`` reaches this package through a handful of one-line hooks, each marked
``# observability`` (listed in docs/operating.md); ``tenancy`` and ``idempotency`` only send
signals. Guide: docs/operating.md.
"""

from __future__ import annotations

from mcp_tools.observability.jsonlog import JsonFormatter
from mcp_tools.observability.metrics import bound_refused
from mcp_tools.observability.records import (
    ToolCall,
    note_result,
    observed_tool_call,
    rate_limited,
    tool_call,
)
from mcp_tools.observability.tracing import carry

__all__ = [
    "JsonFormatter",
    "ToolCall",
    "bound_refused",
    "carry",
    "connect",
    "note_result",
    "observed_tool_call",
    "rate_limited",
    "tool_call",
]


def connect() -> None:
    """Register the system checks and subscribe the metrics to tenancy's and idempotency's
    signals. Called once from ``McpToolsConfig.ready``."""
    # Importing checks registers them.
    from mcp_tools.observability import checks, metrics  # noqa: F401

    metrics.connect()
