"""Where the project's URLconf mounts the ``/mcp`` endpoint (``include("mcp_tools.urls")``
may sit under any prefix)."""

from __future__ import annotations

from typing import Any

from django.urls import URLPattern, URLResolver, get_resolver


def mcp_path(urlconf: str | None = None) -> str | None:
    """The path of the MCP endpoint (``"/mcp"``, ``"/api/mcp"``), or ``None`` when no route
    serves it. Only plain routes count: a regex route has no single path to call."""
    from mcp_tools.serving.views import mcp_view

    def walk(patterns: list[Any], prefix: str) -> str | None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                found = walk(entry.url_patterns, prefix + str(entry.pattern))
                if found is not None:
                    return found
            elif isinstance(entry, URLPattern) and entry.callback is mcp_view:
                route = prefix + str(entry.pattern)
                return None if "^" in route or "<" in route else "/" + route
        return None

    return walk(get_resolver(urlconf).url_patterns, "")
