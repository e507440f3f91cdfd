"""System checks for the observability settings (registered by ``observability.connect``)."""

from __future__ import annotations

import os
from typing import Any

from django.core import checks

from mcp_tools import conf
from mcp_tools.observability import metrics
from mcp_tools.observability.records import EXTRA_FIELDS


@checks.register()
def check_observability(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    try:
        metrics.allowed_networks()
    except ValueError as exc:
        messages.append(
            checks.Error(
                f"MCP_TOOLS_METRICS_ALLOWED_IPS holds an entry that is no address: {exc}.",
                hint='Use addresses or networks: ["127.0.0.1", "10.0.0.0/8", "::1"].',
                id="mcp_tools.E010",
            )
        )
    guarded = bool(conf.get("METRICS_TOKEN") or conf.get("METRICS_ALLOWED_IPS"))
    if guarded and not metrics.available():
        messages.append(
            checks.Warning(
                "A /metrics guard is set but prometheus-client is not installed: /metrics "
                "answers 404.",
                hint="pip install 'prometheus-client' (the toolkit's 'metrics' extra).",
                id="mcp_tools.W010",
            )
        )
    directory = os.environ.get(metrics.MULTIPROC_ENV)
    if metrics.available() and directory and not os.path.isdir(directory):
        messages.append(
            checks.Error(
                f"{metrics.MULTIPROC_ENV}={directory!r} is not a directory: metrics cannot be "
                "recorded.",
                hint="Create it (empty) before the server starts, or unset it for one process.",
                id="mcp_tools.E011",
            )
        )
    unknown = set(conf.get("CALL_LOG_EXTRA_FIELDS")) - EXTRA_FIELDS
    if unknown:
        messages.append(
            checks.Error(
                f"MCP_TOOLS_CALL_LOG_EXTRA_FIELDS names unknown fields: {sorted(unknown)}.",
                hint=f"Choose among {sorted(EXTRA_FIELDS)}.",
                id="mcp_tools.E012",
            )
        )
    return messages
