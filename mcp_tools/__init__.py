"""``mcp_tools``: stateless MCP over Streamable HTTP on ``/mcp`` for Django.

A Django developer writes, in any installed app's ``mcp.py``::

    from mcp_tools import tool, CallContext

    @tool(name="acme_list_widgets", read_only=True, mirrors="widget-list",
          description="Widgets in this tenant, newest first.")
    def list_widgets(ctx: CallContext, *, colour: str | None = None) -> WidgetPage: ...

Public surface (import-safe; no models): the decorator, the call context, the errors a tool
raises or a translator returns.
"""

from mcp_tools.context import CallContext
from mcp_tools.exceptions import CallContextRefusedError, ToolError, ToolFailure
from mcp_tools.registry import tool

__all__ = ["CallContext", "CallContextRefusedError", "ToolError", "ToolFailure", "tool"]
