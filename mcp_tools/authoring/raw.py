"""``@raw_tool``: the deliberately unprotected escape hatch (seed 001's ``rawTools``).

    @raw_tool(name="echo_raw", description="...", input_schema={"type": "object", ...})
    def echo_raw(arguments: dict[str, Any]) -> dict[str, Any]:   # a CallToolResult
        ...

A raw tool gets **no** ``CallContext``: no tenant, no actor, no row scope, no role filtering,
no argument model, no idempotency. It receives the raw ``arguments`` object and returns a
``CallToolResult`` (dict or ``mcp_types.CallToolResult``), which is checked against the wire
model of the request's protocol revision. Only the endpoint's own protections remain (the
bearer is still required to reach ``/mcp``; size, time and concurrency bounds apply).

It exists for what genuinely has no tenant (a health probe, a static calculator) and is
visible as such: only this explicitly named decorator registers one, none is served unless
``MCP_TOOLS_ALLOW_RAW_TOOLS = True``, ``manage.py check`` warns (``mcp_tools.W001``) while any
is served, and ``manage.py mcp_tools`` lists them apart from the protected catalogue.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured

from mcp_tools.authoring.rules import _check_schema
from mcp_tools.authoring.spec import TOOL_NAME_RE
from mcp_tools.call.context import CallContext

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class RawToolSpec:
    name: str
    description: str
    title: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    read_only: bool
    fn: Callable[[dict[str, Any]], Any]

    @property
    def qualname(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def wire_definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {"readOnlyHint": self.read_only, "openWorldHint": True},
        }
        if self.title:
            definition["title"] = self.title
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        return definition


class RawRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, RawToolSpec] = {}

    def raw_tool(
        self,
        fn: Any = None,
        /,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        read_only: bool = False,
    ) -> Callable[[F], F]:
        """Register an unprotected tool (no CallContext); returns the function unchanged.

        Raises:
            TypeError: used bare.
            ImproperlyConfigured: a bad name, schema or signature (e.g. it asks for a
                ``CallContext``: use ``@tool``), or a taken name.
        """
        if fn is not None:
            raise TypeError("use @raw_tool(name=..., ...) with arguments")

        def register(func: F) -> F:
            where = f"MCP raw tool {name!r}"
            if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
                raise ImproperlyConfigured(
                    f"{where}: the name must match ^[A-Za-z0-9._-]{{1,128}}$"
                )
            if not callable(func) or inspect.iscoroutinefunction(func):
                raise ImproperlyConfigured(f"{where}: a plain (synchronous) function is required")
            params = list(inspect.signature(func).parameters.values())
            hints = typing.get_type_hints(func)
            if len(params) != 1 or any(h is CallContext for h in hints.values()):
                raise ImproperlyConfigured(
                    f"{where}: a raw tool takes exactly one parameter, the arguments dict, and "
                    "never a CallContext (a tool with an identity is an @tool)"
                )
            if not description:
                raise ImproperlyConfigured(f"{where}: a description is required")
            _check_schema(where, input_schema, "inputSchema")
            if output_schema is not None:
                _check_schema(where, output_schema, "outputSchema")
            spec = RawToolSpec(
                name=name,
                description=description,
                title=title,
                input_schema=input_schema,
                output_schema=output_schema,
                read_only=read_only,
                fn=func,
            )
            existing = self._tools.get(name)
            if existing is not None and existing.qualname != spec.qualname:
                raise ImproperlyConfigured(f"{where}: the name is taken by {existing.qualname}")
            self._tools[name] = spec
            return func

        return register

    def specs(self) -> list[RawToolSpec]:
        return [self._tools[key] for key in sorted(self._tools)]

    def __len__(self) -> int:
        return len(self._tools)


default_raw_tools = RawRegistry()
raw_tool = default_raw_tools.raw_tool


def served_raw_tools(registry: RawRegistry | None = None) -> list[RawToolSpec]:
    """The raw tools served now: none unless ``MCP_TOOLS_ALLOW_RAW_TOOLS`` is True."""
    from mcp_tools import conf

    if not conf.get("ALLOW_RAW_TOOLS"):
        return []
    return (default_raw_tools if registry is None else registry).specs()


def run_raw(spec: RawToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """Worker-thread body of a raw tool: its own result, as a dict."""
    from pydantic import BaseModel

    value = spec.fn(arguments)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(value, dict):
        raise TypeError(f"raw tool {spec.name} returned {type(value).__name__}, not a result")
    return value
