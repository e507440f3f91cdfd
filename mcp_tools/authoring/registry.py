"""The ``@tool`` registry: what a Django developer writes, checked when it is written.

Every rule that can be checked without a request is checked at import (decoration) time and
raises ``ImproperlyConfigured``: names, collisions, the ``CallContext`` parameter, banned
parameter types, argument and result types, the mirror declaration, the write tool's injected
``idempotencyKey``. A registered tool is therefore always servable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

from mcp_tools.authoring.rules import build_spec
from mcp_tools.authoring.spec import F, TaskSupport, ToolSpec
from tenancy import AUTHENTICATED, Policy

if TYPE_CHECKING:
    pass


class Registry:
    """Registered tools by name. ``mcp_tools.tool`` registers into the default registry."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolSpec] = {}
        self._deferring = False
        self.problems: list[str] = []

    @contextmanager
    def deferring_problems(self) -> Iterator[None]:
        """Inside it a tool that breaks a rule is left out and its problem kept in
        ``problems`` (the system check ``mcp_tools.E009`` reports them), instead of raising
        from every command's start-up."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False

    def tool(
        self,
        fn: Any = None,
        /,
        *,
        name: str,
        read_only: bool = False,
        mirrors: str | Sequence[str] | None = None,
        mirrors_no_route: str | None = None,
        description: str | None = None,
        title: str | None = None,
        policy: Policy = AUTHENTICATED,
        destructive: bool | None = None,
        task_support: TaskSupport = "forbidden",
        task_retry: int = 0,
        requires_client_capabilities: Sequence[str] = (),
        errors: Mapping[str, str] | None = None,
        a2a: bool = True,
        icons: Sequence[Mapping[str, Any]] | None = None,
        rate: str | None = None,
        audit_arguments: Sequence[str]
        | Callable[[Mapping[str, Any]], Mapping[str, Any]]
        | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function as an MCP tool; returns it unchanged.

        ``read_only`` defaults to False: an undeclared tool is a write tool, gets a required
        ``idempotencyKey`` and runs inside the idempotent unit (fail-closed).
        ``task_support`` ("optional"/"required") lets a long-running tool hand its work to a
        task (``ctx.continue_as_task()``; see ``mcp_tools.methods.tasks``). ``task_retry`` is how
        many times such a task runs again when its worker is lost mid-task (killed, recycled);
        0 (the default) reports it failed instead. Retry only work that is safe to run twice:
        a write tool is (its ``idempotencyKey`` replays what a lost run committed).
        ``requires_client_capabilities`` names client capabilities (e.g. ``"sampling"``) the
        tool cannot work without: a 2026-07-28 client that does not declare them gets
        -32021 before the tool runs; a handshake-era client, whose capabilities a stateless
        server never sees, gets the tool error ``Client.CapabilityRequired``.
        ``idempotencyKey`` and runs inside the idempotent unit (fail-closed). ``errors`` maps
        each stable code the tool itself can answer with to when (the tool reference lists
        them with the framework's own).
        ``a2a=False`` keeps the tool off the A2A skill projection (``a2a_tools``); it stays an
        MCP tool.
        ``icons`` (``[{"src": "https://…/x.png", "mimeType": "image/png", "sizes": ["48x48"],
        "theme": "light"}]``) are listed with the tool in both eras.
        ``rate`` (``"10/m"``) limits calls of this tool per tenant on the shared counter (over
        it: the tool error ``Rate.Limited`` with ``retryAfter``). ``audit_arguments`` names the
        arguments whose values the stored call audit keeps (or is a callable returning the
        redacted values); by default it keeps none (docs/operating.md).

        Raises:
            TypeError: used bare (``@tool`` without arguments).
            ImproperlyConfigured: the tool breaks a registration rule, or its name is taken.
        """
        if fn is not None:
            raise TypeError("use @tool(name=..., ...) with arguments; bare @tool is refused")

        def register(func: F) -> F:
            try:
                self.add(spec_of(func))
            except ImproperlyConfigured as problem:
                if not self._deferring:
                    raise
                self.problems.append(str(problem))
            return func

        def spec_of(func: F) -> ToolSpec:
            return build_spec(
                func,
                name=name,
                read_only=read_only,
                mirrors=mirrors,
                mirrors_no_route=mirrors_no_route,
                description=description,
                title=title,
                policy=policy,
                destructive=destructive,
                task_support=task_support,
                task_retry=task_retry,
                requires_client_capabilities=requires_client_capabilities,
                errors=errors,
                a2a=a2a,
                icons=icons,
                rate=rate,
                audit_arguments=audit_arguments,
            )

        return register

    def add(self, spec: ToolSpec) -> None:
        existing = self._tools.get(spec.name)
        # Re-importing the same module (autoreload) re-registers the same function.
        if existing is not None and existing.qualname != spec.qualname:
            raise ImproperlyConfigured(
                f"MCP tool name {spec.name!r} is registered twice: by {existing.qualname} "
                f"and by {spec.qualname}. Tool names are unique per server."
            )
        self._tools[spec.name] = spec

    def specs(self) -> list[ToolSpec]:
        """All registered tools, sorted by name (the catalogue's deterministic order)."""
        return [self._tools[key] for key in sorted(self._tools)]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)


default_registry = Registry()
tool = default_registry.tool
