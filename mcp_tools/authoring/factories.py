"""``@tool_factory``: a tool whose definition depends on the caller, built per request.

    @tool_factory(name="acme_stock_for_category", read_only=True, result=StockReply,
                  description="Stock of one of *your* categories.")
    def stock_for_category(ctx: CallContext) -> FactoryTool:
        names = tuple(c.name for c in category_list(caller_from(ctx)))
        Arguments = create_model("Arguments", category=(Literal[names], ...),
                                 __config__=ConfigDict(extra="forbid"))
        return FactoryTool(arguments=Arguments, run=lambda ctx, args: ...)

For definitions that genuinely depend on who is calling (an input schema enumerating *this
tenant's* own values). The role surfaces stay prepared once; the factory runs for every
``tools/list`` page that shows the tool and every ``tools/call`` of it, in a worker thread under
the same bounds, and everything it builds is dropped with the request: no cache, no
per-identity map (an identity-keyed cache is an unbounded retention surface whose invalidation
is the application's business). The cost per request is measured in ``bench/``.

The factory's name, policy, kind (read/write) and result model are fixed at registration, so a
role's surface (which tools it lists, the paging, the cursors) is still prepared once; only the
definition of the tool itself is built per request, then checked by the same ``build_spec`` as
every ``@tool``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel

from mcp_tools.authoring.rules import build_spec
from mcp_tools.authoring.spec import TOOL_NAME_RE, ToolSpec
from mcp_tools.call.context import CallContext
from tenancy import AUTHENTICATED, Policy

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class FactoryTool:
    """What a factory returns for one request: the argument model (``extra="forbid"``) and
    the function that runs the call with the validated arguments."""

    arguments: type[BaseModel]
    run: Callable[[CallContext, Any], Any]
    description: str | None = None


@dataclass(frozen=True)
class ToolFactorySpec:
    name: str
    factory: Callable[[CallContext], FactoryTool]
    read_only: bool
    result: type[BaseModel]
    policy: Policy
    description: str
    title: str | None
    mirrors: tuple[str, ...]
    mirrors_no_route: str | None
    # What the stored call audit keeps of the arguments (``@tool``'s ``audit_arguments``).
    audit_arguments: Any = None

    @property
    def qualname(self) -> str:
        return f"{self.factory.__module__}.{self.factory.__qualname__}"

    def build(self, ctx: CallContext) -> ToolSpec:
        """This request's definition of the tool (never cached).

        Raises:
            ImproperlyConfigured: the factory returned something ``@tool`` would refuse.
        """
        made = self.factory(ctx)
        if not isinstance(made, FactoryTool):
            raise ImproperlyConfigured(f"tool factory {self.name} must return a FactoryTool")
        run = made.run

        def invoke(ctx: CallContext, arguments: Any) -> Any:
            return run(ctx, arguments)

        # Real type objects, not strings: the model exists only in this request.
        invoke.__annotations__ = {
            "ctx": CallContext,
            "arguments": made.arguments,
            "return": self.result,
        }
        invoke.__module__ = self.factory.__module__
        invoke.__qualname__ = self.factory.__qualname__
        return build_spec(
            invoke,
            name=self.name,
            read_only=self.read_only,
            mirrors=self.mirrors,
            mirrors_no_route=self.mirrors_no_route,
            description=made.description or self.description,
            title=self.title,
            policy=self.policy,
            destructive=None,
        )


class FactoryRegistry:
    def __init__(self) -> None:
        self._factories: dict[str, ToolFactorySpec] = {}

    def tool_factory(
        self,
        fn: Any = None,
        /,
        *,
        name: str,
        result: type[BaseModel],
        description: str,
        read_only: bool = False,
        policy: Policy = AUTHENTICATED,
        title: str | None = None,
        mirrors: str | Sequence[str] | None = None,
        mirrors_no_route: str | None = None,
        audit_arguments: Any = None,
    ) -> Callable[[F], F]:
        """Register ``fn(ctx) -> FactoryTool`` as the per-request definition of tool ``name``.

        Raises:
            TypeError: used bare.
            ImproperlyConfigured: a bad name, signature, result model, policy or a taken name.
        """
        if fn is not None:
            raise TypeError("use @tool_factory(name=..., ...) with arguments")

        def register(func: F) -> F:
            where = f"MCP tool factory {name!r}"
            if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
                raise ImproperlyConfigured(
                    f"{where}: the name must match ^[A-Za-z0-9._-]{{1,128}}$"
                )
            if not callable(func) or inspect.iscoroutinefunction(func):
                raise ImproperlyConfigured(f"{where}: a plain (synchronous) function is required")
            hints = typing.get_type_hints(func)
            params = list(inspect.signature(func).parameters.values())
            if len(params) != 1 or hints.get(params[0].name) is not CallContext:
                raise ImproperlyConfigured(f"{where}: the factory takes exactly `ctx: CallContext`")
            if not (isinstance(result, type) and issubclass(result, BaseModel)):
                raise ImproperlyConfigured(f"{where}: result must be a pydantic model")
            if not isinstance(policy, Policy):
                raise ImproperlyConfigured(f"{where}: policy must be a tenancy Policy")
            if not description:
                raise ImproperlyConfigured(f"{where}: a description is required")
            routes = (mirrors,) if isinstance(mirrors, str) else tuple(mirrors or ())
            if routes and mirrors_no_route:
                raise ImproperlyConfigured(f"{where}: declare at most one of mirrors/no-route")
            spec = ToolFactorySpec(
                name=name,
                factory=func,
                read_only=read_only,
                result=result,
                policy=policy,
                description=description,
                title=title,
                mirrors=routes,
                mirrors_no_route=mirrors_no_route,
                audit_arguments=audit_arguments,
            )
            existing = self._factories.get(name)
            if existing is not None and existing.qualname != spec.qualname:
                raise ImproperlyConfigured(f"{where}: the name is taken by {existing.qualname}")
            self._factories[name] = spec
            return func

        return register

    def specs(self) -> list[ToolFactorySpec]:
        return [self._factories[key] for key in sorted(self._factories)]

    def __len__(self) -> int:
        return len(self._factories)


default_factories = FactoryRegistry()
tool_factory = default_factories.tool_factory
