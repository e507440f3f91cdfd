"""``drf_tool``: one action of an ``APIView``/``ViewSet`` registered as a tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from mcp_tools.authoring.registry import Registry
from mcp_tools.authoring.spec import TOOL_NAME_RE, ToolSpec
from mcp_tools.contrib.drf.view import _DrfView
from tenancy import AUTHENTICATED, Policy


def drf_tool(
    view_class: type[Any],
    action: str,
    *,
    name: str,
    description: str | None = None,
    title: str | None = None,
    policy: Policy = AUTHENTICATED,
    route: str | None = None,
    destructive: bool | None = None,
    icons: Sequence[Mapping[str, Any]] | None = None,
    serializer_class: type[Any] | None = None,
    query_serializer: type[Any] | None = None,
    output_serializer: type[Any] | None = None,
    registry: Registry | None = None,
) -> ToolSpec:
    """Register one action of a DRF view as the tool ``name``; returns its ``ToolSpec``.

    ``action`` is a ViewSet action (``list``, ``retrieve``, ``create``, ``update``,
    ``partial_update``, ``destroy``) or, for an ``APIView``, the lower-case HTTP method.
    ``route`` names the URL pattern (``"product-list"``); by default the URLconf is searched for
    the pattern serving ``view_class`` and ``action``. ``serializer_class`` stands in for the
    view's ``get_serializer_class()`` when that needs a request to answer (the schema only: the
    call runs the view's own). An ``APIView`` that validates its query string with a serializer
    of its own names it as ``query_serializer`` (its fields become the tool's arguments), and
    one that answers with a serializer it builds in the handler names that as
    ``output_serializer`` (the output schema; default: ``serializer_class``). ``policy`` hides
    the tool from roles as ``@tool``'s does; the view's permission classes still decide every
    call.

    Raises:
        ImproperlyConfigured: the action, the name or the view's schema cannot be served.
    """
    where = f"MCP drf tool {name!r} ({view_class.__module__}.{view_class.__qualname__})"
    if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
        raise ImproperlyConfigured(f"{where}: the name must match ^[A-Za-z0-9._-]{{1,128}}$")
    view = _DrfView(
        where,
        view_class,
        action,
        route=route,
        serializer_class=serializer_class,
        query_serializer=query_serializer,
        output_serializer=output_serializer,
    )
    return view.register(
        registry,
        name=name,
        description=description,
        title=title,
        policy=policy,
        destructive=destructive,
        icons=icons,
    )
