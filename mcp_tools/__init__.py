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

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

from mcp_tools.authoring.factories import FactoryTool, tool_factory
from mcp_tools.authoring.prompts import prompt
from mcp_tools.authoring.raw import raw_tool
from mcp_tools.authoring.registry import tool
from mcp_tools.authoring.resources import resource, resource_template
from mcp_tools.call.context import CallContext
from mcp_tools.call.exchange import CallCancelled, Elicited, TaskCancelled
from mcp_tools.exceptions import (
    CallContextRefusedError,
    ResourceNotFoundError,
    ToolError,
    ToolFailure,
)

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


# --- import paths of the flat layout (before the packages), kept for one release ------------
# ``mcp_tools.<old>`` still imports, with a DeprecationWarning, and is the module now at
# ``mcp_tools.<new>`` under its old name (its names, not a copy of its state: the same
# objects). A finder, not a file per old name, so mcp_tools' top level holds only what it is.
_MOVED: dict[str, str] = {
    "_definitions": "authoring.definitions",
    "_jsonrpc": "rpc.jsonrpc",
    "_own_connection": "call.own_connection",
    "asgi": "serving.asgi",
    "callers": "call.callers",
    "cancellation": "call.cancellation",
    "context": "call.context",
    "drf": "contrib.drf",
    "error_pages": "serving.error_pages",
    "exchange": "call.exchange",
    "factories": "authoring.factories",
    "features": "catalogue.features",
    "icons": "authoring.icons",
    "listing": "catalogue.paging",
    "mailbox": "asking.mailbox",
    "middleware": "serving.middleware",
    "notifications": "subscriptions.bus",
    "operator_api": "operator.api",
    "operator_urls": "operator.urls",
    "prompts": "authoring.prompts",
    "pytest_plugin": "testing.pytest_plugin",
    "raw": "authoring.raw",
    "reference": "authoring.reference",
    "registry": "authoring.registry",
    "requeststate": "asking.requeststate",
    "resources": "authoring.resources",
    "routing": "serving.routing",
    "scopes": "operator.scopes",
    "server_card": "serving.server_card",
    "streaming": "serving.streaming",
    "surfaces": "catalogue.surfaces",
    "switches": "operator.switches",
    "taskrunner": "tasks.engine",
    "taskstore": "tasks.store",
    "test": "testing.client",
    "uritemplate": "authoring.uritemplate",
    "uvicorn_http": "serving.uvicorn_http",
    "views": "serving.views",
}


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        old = fullname.removeprefix(f"{__name__}.")
        if old == fullname or old not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # an ordinary module object, filled in by exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__.removeprefix(f"{__name__}.")
        new = f"{__name__}.{_MOVED[old]}"
        warnings.warn(
            f"{module.__name__} moved to {new}; the old path goes in the next release.",
            DeprecationWarning,
            stacklevel=2,  # the import statement (warnings skips importlib's own frames)
        )
        target = importlib.import_module(new)
        names = {k: v for k, v in vars(target).items() if not k.startswith("__")}
        module.__dict__.update(names)
        module.__doc__ = target.__doc__
        module.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]


if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
    sys.meta_path.append(_MovedFinder())
