"""The public surface for another protocol served over the same tools (``a2a_tools`` is one).

An adapter uses three public modules of ``mcp_tools`` and nothing else (``lint-imports``
pins it for ``a2a_tools``):

- ``mcp_tools``: ``CallContext``, the errors a tool raises, the decorators;
- ``mcp_tools.execution``: validate arguments, run bounded, run a tool (the one read/write
  choice), the stable codes and result shapes;
- ``mcp_tools.adapter`` (this module): what an endpoint beside ``/mcp`` needs to behave like
  it — the same JSON-RPC text rules and limits, body cap, error pages, Origin check and rate
  budget; the prepared catalogue; the task store; the call record (``observability``), the
  stored call audit (``audit``) and the tenant switches (``switches``), so a skill call is
  recorded, audited and narrowed as a tool call is.

Everything here is a re-export or a thin wrapper reading ``mcp_tools``' own settings, so an
adapter follows ``/mcp`` when those settings change. Adding a name is an API decision.
"""

from __future__ import annotations

from typing import Any

from mcp_tools import conf, observability
from mcp_tools.authoring.spec import IDEMPOTENCY_KEY_ALIAS, ToolSpec
from mcp_tools.call.context import request_in_flight
from mcp_tools.catalogue.surfaces import Catalogue, active_catalogue
from mcp_tools.observability import audit
from mcp_tools.operator import switches
from mcp_tools.rpc.jsonrpc import EnvelopeError, Message, dumps, error_bytes, result_bytes
from mcp_tools.serving.middleware import body_cap, jsonrpc_errors
from mcp_tools.serving.views import RATE_BUDGET, origin_allowed, parse_bounded
from mcp_tools.tasks.run import Handover, cancel_task, get_task, run_as_task
from mcp_tools.tasks.store import TaskView

__all__ = [
    "audit",
    "observability",
    "switches",
    "IDEMPOTENCY_KEY_ALIAS",
    "RATE_BUDGET",
    "Catalogue",
    "EnvelopeError",
    "Handover",
    "Message",
    "TaskView",
    "ToolSpec",
    "active_catalogue",
    "allowed_origin",
    "body_cap",
    "cancel_task",
    "dumps",
    "error_bytes",
    "get_task",
    "jsonrpc_errors",
    "parse_message",
    "request_in_flight",
    "result_bytes",
    "run_as_task",
    "setting",
]


def setting(name: str) -> Any:
    """The value of ``MCP_TOOLS_<name>`` (or its default); unknown names raise."""
    return conf.get(name)


def parse_message(body: bytes) -> Message:
    """One JSON-RPC message, under ``/mcp``'s limits (depth, node count, id length).

    Raises:
        EnvelopeError: -32700 for malformed JSON, -32600 for anything else that is not one
            acceptable message (its ``code``, ``message`` and ``request_id`` make the reply).
    """
    return parse_bounded(body)


def allowed_origin(origin: str) -> bool:
    """``origin`` passes ``MCP_TOOLS_ALLOWED_ORIGINS`` (the check ``/mcp`` makes)."""
    return origin_allowed(origin, list(conf.get("ALLOWED_ORIGINS")))
