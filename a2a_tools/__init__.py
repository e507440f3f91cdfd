"""``a2a_tools``: the tools of ``mcp_tools``, served as A2A v1.0 skills.

One ``@tool`` is both an MCP tool and an A2A skill: the prepared per-role MCP surfaces are
projected to per-role skills (``skills.py``), the public Agent Card is served at
``/.well-known/agent-card.json`` and the JSON-RPC binding at ``POST /a2a`` (``urls.py``).
Invocations run through ``mcp_tools``' own ``CallContext`` factory, bounds and idempotent unit.

Public surface (import-safe; no models): the task store port and its owner key.
"""

from a2a_tools.tasks import TaskOwner, TaskPage, TaskStore

__all__ = ["TaskOwner", "TaskPage", "TaskStore"]
