"""``@tool_factory``: a tool whose definition depends on the caller, built per request (or
once per what it declares it depends on: ``varies_by``).

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
the same bounds, and everything it builds is dropped with the request: no per-identity map
(an identity-keyed cache is an unbounded retention surface whose invalidation is the
application's business). The cost per request is measured in ``bench/``.

A factory whose definition depends on something coarser than the caller says so:
``varies_by="role"`` (the caller's role and nothing else) or ``varies_by=key`` (``key(ctx)``
returns a hashable value that two callers share only if their definitions are the same). Its
``tools/list`` definition is then built once per (surface digest, key) and reused
(``DEFINITIONS``: bounded, reset through the process registry). ``tools/call`` still builds
per call. A factory that declares nothing is built per request: its definition may depend on
anything (the tenant's own values).

The factory's name, policy, kind (read/write) and result model are fixed at registration, so a
role's surface (which tools it lists, the paging, the cursors) is still prepared once; only the
definition of the tool itself is built per request, then checked by the same ``build_spec`` as
every ``@tool``.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel

from mcp_tools.authoring.rules import build_spec
from mcp_tools.authoring.spec import TOOL_NAME_RE, ToolSpec
from mcp_tools.call.context import CallContext
from tenancy import AUTHENTICATED, Policy
from tenancy.process import ProcessObject

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
VariesBy = Literal["role"] | Callable[[CallContext], Hashable]

# Definitions built for a declared key, by (surface digest, factory name, key), and the
# completed tools/list pages holding them: a few per role and factory in practice; emptied
# when full, like the other process caches.
MAX_DEFINITIONS: Final = 1024
DEFINITIONS: Final[ProcessObject[dict[Hashable, tuple[object, Any]]]] = ProcessObject(
    "factories.definitions", dict, kind="cache", renew=dict.clear
)


def shared(key: Hashable, owner: object, make: Callable[[], T]) -> T:
    """What ``make`` builds for ``key``, built once and shared (``DEFINITIONS``). ``owner``
    (the factory, the page template) must be the one that made the entry: another under the
    same key (a test's registry, a catalogue prepared again) is not served it."""
    cache = DEFINITIONS.get()
    hit = cache.get(key)
    if hit is not None and hit[0] is owner:
        made: T = hit[1]
        return made
    made = make()
    if len(cache) >= MAX_DEFINITIONS:
        cache.clear()
    cache[key] = (owner, made)
    return made


def role_key(ctx: CallContext) -> Hashable:
    """``varies_by="role"``: the caller's role (``None`` for an actor no role admits)."""
    actor = ctx.actor
    return actor.role if actor.is_resolved and not actor.is_system else None


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
    # What the definition depends on (``varies_by``); ``None``: anything, built per request.
    cache_key: Callable[[CallContext], Hashable] | None = None

    @property
    def qualname(self) -> str:
        return f"{self.factory.__module__}.{self.factory.__qualname__}"

    def definition(self, ctx: CallContext, digest: str) -> dict[str, Any]:
        """The ``tools/list`` definition for this caller on the surface ``digest``: built now,
        or, with a declared ``cache_key``, once per (digest, key) and shared (never mutated).

        Raises:
            ImproperlyConfigured: the factory returned something ``@tool`` would refuse.
        """
        if self.cache_key is None:
            return self.build(ctx).wire_definition()
        key = (digest, self.name, self.cache_key(ctx))
        return shared(key, self, lambda: self.build(ctx).wire_definition())

    def build(self, ctx: CallContext) -> ToolSpec:
        """This request's definition of the tool (never cached: ``definition`` is).

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
        varies_by: VariesBy | None = None,
    ) -> Callable[[F], F]:
        """Register ``fn(ctx) -> FactoryTool`` as the per-request definition of tool ``name``;
        ``varies_by`` (``"role"`` or ``key(ctx)``) declares all the definition depends on.

        Raises:
            TypeError: used bare.
            ImproperlyConfigured: a bad name, signature, result model, policy, ``varies_by``
                or a taken name.
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
            if not (varies_by is None or varies_by == "role" or callable(varies_by)):
                raise ImproperlyConfigured(f"{where}: varies_by is 'role' or a key(ctx) callable")
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
                cache_key=role_key if varies_by == "role" else varies_by,
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
