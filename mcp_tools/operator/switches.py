"""Per-tenant switches and quotas: which of its surface's tools a caller may use right now.

**Switches.** ``MCP_TOOLS_TENANT_SWITCHES`` names ``callable(ctx) -> Switches | None``, asked
once per ``tools/list`` and ``tools/call`` (and A2A skill call) with the caller's
``CallContext``: read-only mode (every write tool hidden and refused), disabled tools, and an
allow-list for tools gated by plan or feature flag. The prepared surface stays prepared: the
switches narrow it (``mcp_tools.catalogue.surfaces.narrowed``, built once per distinct switch state
and
kept), so discovery and calls read the same narrowed surface and always agree. A refused tool
is absent, exactly like a hidden one (-32602 ``Unknown tool``).

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
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Final

from django.utils.module_loading import import_string
from django_ratelimit.core import get_usage

from mcp_tools import conf
from mcp_tools.catalogue import surfaces
from mcp_tools.catalogue.surfaces import Catalogue, Surface
from mcp_tools.codes import CODE_RATE_LIMITED

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
    return import_string(path)


# Asked on every request of a surface (mcp_tools.catalogue.surfaces.switched_surface, on the route
# of
# a call); kept here under the names operators and adapters use.
resolve = surfaces.resolve_switches
forget = surfaces.forget_switches
narrowed_surface = surfaces.switched_surface


def narrow(catalogue: Catalogue, surface: Surface, switches: Switches | None) -> Surface:
    """``surface`` as ``switches`` leave it (itself when nothing narrows)."""
    return surfaces.narrow_by(catalogue, surface, switches)


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
