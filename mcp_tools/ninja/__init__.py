"""django-ninja operations as tools: ``ninja_tool(api, "list_products", name=...)``.

The counterpart of ``mcp_tools.contrib.drf.drf_tool`` for a ``NinjaAPI``: one operation, run for
real through Ninja's own machinery as the caller (docs/mcp_tools.md, "django-ninja operations as
tools"). django-ninja is the ``ninja`` extra; ``import mcp_tools`` never imports it.
"""

from mcp_tools.ninja.auth import TenancyAuth
from mcp_tools.ninja.tool import NINJA_ERRORS, ninja_tool

__all__ = ["NINJA_ERRORS", "TenancyAuth", "ninja_tool"]
