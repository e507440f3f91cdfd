"""``mcp_tools``: stateless MCP over Streamable HTTP on ``/mcp`` for Django.

A Django developer writes, in any installed app's ``mcp.py``::

    from mcp_tools import tool, CallContext

    @tool(name="acme_list_widgets", read_only=True, mirrors="widget-list",
          description="Widgets in this tenant, newest first.")
    def list_widgets(ctx: CallContext, *, colour: str | None = None) -> WidgetPage: ...

and likewise ``@resource``, ``@resource_template``, ``@prompt``; ``@tool_factory`` for a tool
whose definition depends on the caller (built per request, never cached); ``@raw_tool`` for the
deliberately unprotected escape hatch (no ``CallContext``; off unless enabled).

Public surface (import-safe; no models): the decorators, the call context and what its
exchange returns, the errors a tool raises or a translator returns.
"""

from mcp_tools.context import CallContext
from mcp_tools.exceptions import (
    CallContextRefusedError,
    ResourceNotFoundError,
    ToolError,
    ToolFailure,
)
from mcp_tools.exchange import CallCancelled, Elicited, TaskCancelled
from mcp_tools.factories import FactoryTool, tool_factory
from mcp_tools.prompts import prompt
from mcp_tools.raw import raw_tool
from mcp_tools.registry import tool
from mcp_tools.resources import resource, resource_template

__all__ = [
    "CallCancelled",
    "CallContext",
    "CallContextRefusedError",
    "Elicited",
    "FactoryTool",
    "ResourceNotFoundError",
    "TaskCancelled",
    "ToolError",
    "ToolFailure",
    "prompt",
    "raw_tool",
    "resource",
    "resource_template",
    "tool",
    "tool_factory",
]
