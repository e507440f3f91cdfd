"""Per-tenant switches and quotas: which of its surface's tools a caller may use right now.

**Switches.** ``MCP_TOOLS_TENANT_SWITCHES`` names ``callable(ctx) -> Switches | None``, asked
once per ``tools/list`` and ``tools/call`` (and A2A skill call) with the caller's
``CallContext``: read-only mode (every write tool hidden and refused), disabled tools, and an
allow-list for tools gated by plan or feature flag. The prepared surface stays prepared: the
switches narrow it (``narrow``, built once per distinct switch state and kept), so discovery
and calls read the same narrowed surface and always agree. A refused tool is absent, exactly
like a hidden one (-32602 ``Unknown tool``).

``stored_switches`` is the resolver for the switches a tenant's admins set over REST
(``TenantSwitches``, ``mcp_tools.operator.api``); a project may compose its own (plan, feature
flags, the credential) and call it.

**Quotas.** ``@tool(rate="10/m")`` limits one tool per tenant; ``MCP_TOOLS_TENANT_RATE`` is a
tenant's budget over all its tools. Both count on the shared rate-limit counter (the one the
per-member ``MCP_TOOLS_RATE`` uses: ``RATELIMIT_USE_CACHE``, tenancy's counter table or Redis),
so every worker and replica counts into one budget. Over either, the call answers the tool error
``Rate.Limited`` with ``data.retryAfter`` (seconds) and runs nothing.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Final

from asgiref.sync import sync_to_async
from django.utils.module_loading import import_string
from django_ratelimit.core import get_usage

from mcp_tools import conf
from mcp_tools.catalogue import surfaces
from mcp_tools.catalogue.surfaces import Catalogue, Surface, tool_pages
from mcp_tools.codes import CODE_RATE_LIMITED
from mcp_tools.exceptions import UnknownSurfaceError
from tenancy import Role
from tenancy.process import ProcessObject

TOOL_RATE_GROUP: Final = "mcp_tools.tool"
TENANT_RATE_GROUP: Final = "mcp_tools.tenant"


@dataclass(frozen=True)
class Switches:
    """What narrows a caller's tools on this request.

    Attributes:
        read_only: every write tool is hidden and refused.
        disabled: tool names hidden and refused.
        allowed: when set, only these tool names (a plan's or feature flag's tools); ``None``
            admits every tool of the surface.
    """

    read_only: bool = False
    disabled: frozenset[str] = frozenset()
    allowed: frozenset[str] | None = None

    @classmethod
    def of(
        cls,
        *,
        read_only: bool = False,
        disabled: Collection[str] = (),
        allowed: Collection[str] | None = None,
    ) -> Switches:
        return cls(
            read_only=read_only,
            disabled=frozenset(disabled),
            allowed=None if allowed is None else frozenset(allowed),
        )

    @property
    def narrows(self) -> bool:
        return self.read_only or bool(self.disabled) or self.allowed is not None

    def admits(self, spec: Any) -> bool:
        """Whether the tool ``spec`` (a tool, factory or raw tool) stays usable."""
        if self.read_only and not spec.read_only:
            return False
        if spec.name in self.disabled:
            return False
        return self.allowed is None or spec.name in self.allowed


@functools.lru_cache(maxsize=8)
def _resolver(path: str) -> Callable[[Any], Switches | None]:
    """``MCP_TOOLS_TENANT_SWITCHES`` imported once per path, not on every request."""
    return import_string(path)


def resolve(ctx: Any) -> Switches | None:
    """The caller's switches (``MCP_TOOLS_TENANT_SWITCHES``); ``None`` when nothing narrows."""
    path = conf.get("TENANT_SWITCHES")
    if not path:
        return None
    switches = _resolver(path)(ctx)
    return switches if switches is not None and switches.narrows else None


# Narrowed surfaces by (surface digest, switch state): one per state ever seen, not per tenant.
_NARROWED_MAX: Final = 1024
NARROWED: Final = ProcessObject[dict[tuple[str, Switches], Surface]](
    "operator.narrowed_surfaces", dict, kind="cache", renew=dict.clear
)
_narrowed = NARROWED.get()


def narrow(catalogue: Catalogue, surface: Surface, switches: Switches | None) -> Surface:
    """``surface`` without the tools ``switches`` refuse (itself when nothing narrows); built
    once per switch state and kept, so a request pays a dict lookup.

    The prepared surface stays as it is: this is the same surface with fewer tools, its
    ``tools/list`` pages and cursors rebuilt for them (a cursor of the full listing is not one
    of the narrowed listing's, and is refused like any foreign cursor).
    """
    if switches is None:
        return surface
    key = (surface.digest, switches)
    found = _narrowed.get(key)
    if found is not None:
        return found
    admits = switches.admits
    tools = {name: spec for name, spec in surface.tools.items() if admits(spec)}
    raw_tools = {name: spec for name, spec in surface.raw_tools.items() if admits(spec)}
    factories = {name: spec for name, spec in surface.factories.items() if admits(spec)}
    definitions: dict[str, dict[str, Any] | None] = {
        **{name: spec.wire_definition() for name, spec in tools.items()},
        **{name: spec.wire_definition() for name, spec in raw_tools.items()},
        **dict.fromkeys(factories),
    }
    names = sorted(definitions)
    digest = hashlib.sha256(f"{surface.digest}:{','.join(names)}".encode()).hexdigest()
    pages, cursors, dynamic = tool_pages(
        names,
        definitions,
        page_size=catalogue.page_size,
        surface_digest=digest,
        server_info=catalogue.server_info,
        where=f"{surface.key.label} (narrowed)",
        gated={
            name
            for name, spec in [*tools.items(), *raw_tools.items()]
            if getattr(getattr(spec, "policy", None), "per_user", False)
        },
    )
    built = replace(
        surface,
        digest=digest,
        tools=MappingProxyType(tools),
        raw_tools=MappingProxyType(raw_tools),
        factories=MappingProxyType(factories),
        pages=pages,
        cursors=cursors,
        dynamic_pages=dynamic,
    )
    if len(_narrowed) >= _NARROWED_MAX:
        _narrowed.clear()
    _narrowed[key] = built
    return built


# Resolved switches by caller, while MCP_TOOLS_TENANT_SWITCHES_CACHE_SECONDS lasts:
# {(tenant, user, token, role, scopes): (monotonic expiry, switches)}. Bounded.
_CACHE_MAX: Final = 10_000
SWITCHES_CACHE: Final = ProcessObject[dict[tuple[Any, ...], tuple[float, Switches | None]]](
    "operator.switches_cache", dict, kind="cache", renew=dict.clear
)
_cache = SWITCHES_CACHE.get()


def _cache_key(ctx: Any) -> tuple[Any, ...]:
    actor = ctx.actor
    return (str(ctx.tenant_id), actor.user_id, actor.token_id, actor.role.label, actor.scopes)


def forget(tenant_key: str) -> None:
    """Drop this process's cached switches of ``tenant_key`` (they just changed)."""
    for key in [key for key in _cache if key[0] == tenant_key]:
        _cache.pop(key, None)


async def narrowed_surface(catalogue: Catalogue, surface: Surface, ctx: Any) -> Surface:
    """The caller's surface on this request (``tools/list``, ``tools/call``): ``surface`` as
    the caller's switches leave it. Asks the resolver (a worker thread: it may read the
    database) and, with ``MCP_TOOLS_TENANT_SWITCHES_CACHE_SECONDS``, at most that often per
    caller and process."""
    if not conf.get("TENANT_SWITCHES"):
        return surface
    ttl = float(conf.get("TENANT_SWITCHES_CACHE_SECONDS"))
    if ttl <= 0:
        return narrow(catalogue, surface, await sync_to_async(resolve)(ctx))
    key, now = _cache_key(ctx), time.monotonic()
    cached = _cache.get(key)
    if cached is not None and cached[0] > now:
        return narrow(catalogue, surface, cached[1])
    switches = await sync_to_async(resolve)(ctx)
    if len(_cache) >= _CACHE_MAX:
        _cache.clear()
    _cache[key] = (now + ttl, switches)
    return narrow(catalogue, surface, switches)


async def caller_surface(ctx: Any, *, switched: bool) -> tuple[Catalogue, Surface]:
    """The active catalogue and the caller's surface on this request: the one prepared for
    ``ctx.role``, narrowed by the caller's switches when ``switched`` (``tools/list``,
    ``tools/call``).

    The route of a call enters one module for "which surface" (``bench/call_path.py``): this
    one. So the prepared surface is read here (the active catalogue, its mapping by role), not
    asked of ``catalogue.surfaces``, whose ``Catalogue.surface_for`` makes the same lookup for
    callers off the route.

    Raises:
        UnknownSurfaceError: the role has no prepared surface.
    """
    catalogue = surfaces.active[-1] if surfaces.active else surfaces.active_catalogue()
    role = ctx.role
    surface = catalogue.surfaces.get(role) if isinstance(role, Role) else None
    if surface is None:
        raise UnknownSurfaceError(f"no prepared surface for {role!r}")
    if switched:
        surface = await narrowed_surface(catalogue, surface, ctx)
    return catalogue, surface


def stored_switches(ctx: Any) -> Switches | None:
    """The switches the tenant's admins set over REST (``TenantSwitches``), if any."""
    from mcp_tools.models import TenantSwitches

    row = TenantSwitches.objects.filter(tenant_key=str(ctx.tenant_id)).first()
    if row is None:
        return None
    return Switches.of(read_only=row.read_only, disabled=row.disabled_tools or ())


# --- quotas ---------------------------------------------------------------------------------


def limited(spec: Any) -> bool:
    """A call of ``spec`` counts against a quota (its own rate or the tenant budget)."""
    return bool(getattr(spec, "rate", None) or conf.get("TENANT_RATE"))


def _count(group: str, rate: str, value: str) -> tuple[bool, int]:
    usage = get_usage(
        None, group=group, key=lambda _group, _request: value, rate=rate, increment=True
    )
    if usage is None:
        return False, 0
    return bool(usage["should_limit"]), max(int(usage["time_left"]), 1)


def refusal(spec: Any, ctx: Any) -> dict[str, Any] | None:
    """Count one call of ``spec`` by ``ctx``'s tenant; the ``Rate.Limited`` tool error when it
    is over the tool's rate or the tenant's budget (a worker thread: the counter is shared I/O).

    The tool's own rate is counted first: a call it refuses does not spend the tenant's budget.
    """
    from mcp_tools.execution.results import error_result

    tenant = str(ctx.tenant_id)
    rate = getattr(spec, "rate", None)
    if rate:
        over, retry = _count(TOOL_RATE_GROUP, rate, f"tenant:{tenant}:tool:{spec.name}")
        if over:
            return error_result(
                CODE_RATE_LIMITED,
                f"The tool {spec.name} is over its rate ({rate} per tenant); retry in {retry} s.",
                {"retryAfter": retry},
            )
    budget = conf.get("TENANT_RATE")
    if budget:
        over, retry = _count(TENANT_RATE_GROUP, str(budget), f"tenant:{tenant}")
        if over:
            return error_result(
                CODE_RATE_LIMITED,
                f"This tenant is over its budget of tool calls ({budget}); retry in {retry} s.",
                {"retryAfter": retry},
            )
    return None


def guarded(work: Callable[..., Any]) -> Callable[..., Any]:
    """``work(spec, ctx, ...)`` that first counts the call against its quotas (worker thread):
    over one, the ``Rate.Limited`` result instead, and ``work`` never runs."""

    @functools.wraps(work)
    def run(spec: Any, ctx: Any, *args: Any) -> Any:
        refused = refusal(spec, ctx)
        return refused if refused is not None else work(spec, ctx, *args)

    return run
