"""``a2a_tools`` settings: defaults here, read at call time so ``override_settings`` works.

``AGENT_NAME``, ``AGENT_DESCRIPTION``, ``PROVIDER`` and ``DOCUMENTATION_URL`` shape the prepared
cards and are read once, when the projection is built. The bounds (body cap, concurrency, deadline,
rate) are ``mcp_tools``'s own settings: one tool call costs the same on both protocols.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # None → MCP_TOOLS_SERVER_NAME (the MCP serverInfo name).
    "AGENT_NAME": None,
    # None → MCP_TOOLS_INSTRUCTIONS, else a generic sentence naming the agent.
    "AGENT_DESCRIPTION": None,
    # {"organization": ..., "url": ...} or None.
    "PROVIDER": None,
    "DOCUMENTATION_URL": None,
    # Absolute URL of the JSON-RPC endpoint as clients must call it (behind a proxy, set it);
    # None → built from the request that fetched the card.
    "PUBLIC_URL": None,
    # Dotted path to the TaskStore class (a2a_tools.tasks.TaskStore protocol).
    "TASK_STORE": "a2a_tools.tasks.DatabaseTaskStore",
    # How long a finished task stays readable with GetTask/ListTasks (purge_a2a_tasks).
    "TASK_RETENTION_HOURS": 24 * 7,
}


def get(name: str) -> Any:
    """The value of ``A2A_TOOLS_<name>``, or its default. Unknown names raise."""
    if name not in DEFAULTS:
        raise AttributeError(f"unknown a2a_tools setting {name!r}")
    return getattr(settings, f"A2A_TOOLS_{name}", DEFAULTS[name])
