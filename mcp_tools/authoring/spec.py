"""A registered tool as the rest of the app reads it: ``ToolSpec``, the write unit's protocol,
and the names, patterns and limits a tool's definition follows.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, get_args, get_origin

from pydantic import (
    BaseModel,
)

from mcp_tools.call.context import CallContext
from tenancy import ActorContext, Policy, RowScope, TenantContext

if TYPE_CHECKING:
    from idempotency import IdempotencyScope


F = TypeVar("F", bound=Callable[..., Any])

TOOL_NAME_RE: Final = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
# django-ratelimit's periods: "s", "m", "h", "d", optionally with a multiplier ("10/5m").
RATE_PERIOD_RE: Final = re.compile(r"^[0-9]*[smhd]$")
# A stable error code: dotted words ("DailyEntry.NotDraft", "Validation.Failed").
ERROR_CODE_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+$")

# The codes the framework itself answers with, for every tool or for every write tool.
FRAMEWORK_ERRORS: Final = (
    ("Tool.InvalidArguments", "The arguments break the inputSchema (data.errors lists each)."),
    ("Tool.InternalError", "An unexpected failure; quote data.requestId to the operator."),
)
WRITE_ERRORS: Final = (
    (
        "Idempotency.KeyReused",
        "This idempotencyKey was used with other arguments or by another member.",
    ),
    (
        "Idempotency.InProgress",
        "An identical call is still running; retry after data.retryAfterSeconds.",
    ),
)
IDEMPOTENCY_KEY_FIELD: Final = "idempotency_key"
IDEMPOTENCY_KEY_ALIAS: Final = "idempotencyKey"
REPLAYED_FIELD: Final = "replayed"

ResultKind = Literal["model", "text", "content"]
# Tasks (mcp_tools.methods.tasks): "optional" and "required" tools may hand their work to a task.
TaskSupport = Literal["forbidden", "optional", "required"]
TASK_SUPPORT_VALUES: Final = ("forbidden", "optional", "required")


def _banned_types() -> tuple[type, ...]:
    """Types a tool may never take: ambient identity, the raw request, DB handles, locators.

    A tool that takes any of these could act outside the identity its ``CallContext``
    proves (guard 7). Supertypes are banned too, so a ``Protocol``-typed escape hatch fails.
    """
    from django.apps.registry import Apps
    from django.core.cache import CacheHandler
    from django.core.handlers.asgi import ASGIRequest
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.utils import CursorWrapper
    from django.db.utils import ConnectionHandler
    from django.http import HttpRequest
    from django.utils.connection import BaseConnectionHandler, ConnectionProxy

    banned: list[type] = [
        HttpRequest,
        ASGIRequest,
        TenantContext,
        ActorContext,
        RowScope,
        BaseDatabaseWrapper,
        CursorWrapper,
        ConnectionHandler,
        BaseConnectionHandler,
        ConnectionProxy,
        CacheHandler,
        Apps,
    ]
    try:
        from rest_framework.request import Request
    except ImportError:  # pragma: no cover - DRF is optional for mcp_tools
        pass
    else:
        banned.append(Request)
    return tuple(banned)


def _flatten(annotation: Any) -> Iterator[Any]:
    """Every type mentioned by an annotation (unions, Optional, Annotated, generics)."""
    stack = [annotation]
    while stack:
        current = stack.pop()
        yield current
        origin = get_origin(current)
        if origin is not None:
            yield origin
            stack.extend(arg for arg in get_args(current) if not isinstance(arg, (str, int)))


def _is_callable_annotation(annotation: Any) -> bool:
    origin = get_origin(annotation)
    import collections.abc as cabc

    return annotation in (Callable, cabc.Callable) or origin in (Callable, cabc.Callable)


def banned_parameter_type(annotation: Any) -> str | None:
    """The name of a banned type mentioned by ``annotation``, or ``None``."""
    from django.db.models import Model

    banned = _banned_types()
    for candidate in _flatten(annotation):
        if _is_callable_annotation(candidate):
            return "a callable (factory or service locator)"
        if isinstance(candidate, type) and issubclass(candidate, Model):
            # A row cannot come from JSON, and looking it up is the tool's job, in its tenant.
            return (
                f"the model {candidate.__qualname__} (take its id or code, a str or int, and "
                "look the row up in ctx.tenant)"
            )
        if isinstance(candidate, type) and candidate is not object:
            for bad in banned:
                try:
                    related = issubclass(candidate, bad) or issubclass(bad, candidate)
                except TypeError:  # non-runtime protocols cannot be asked
                    related = False
                if related:
                    return bad.__qualname__
    return None


@dataclass(frozen=True)
class ToolSpec:
    """A registered tool, fully checked. Immutable; the catalogue is built from these."""

    name: str
    fn: Callable[..., Any]
    read_only: bool
    mirrors: tuple[str, ...]
    mirrors_no_route: str | None
    description: str
    title: str | None
    policy: Policy
    destructive: bool
    args_model: type[BaseModel]
    call_style: Literal["kwargs", "model"]
    user_model: type[BaseModel] | None
    param_names: tuple[str, ...]
    result_kind: ResultKind
    result_model: type[BaseModel] | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    parameters: tuple[inspect.Parameter, ...]
    has_param_headers: bool = False  # an argument is mirrored in an Mcp-Param-* header
    task_support: TaskSupport = "forbidden"
    # Runs of a task again after its worker was lost mid-task (0: the task is reported failed).
    task_retry: int = 0
    # Client capabilities the tool cannot work without (e.g. "sampling"); checked before it runs.
    required_client_capabilities: tuple[str, ...] = ()
    # Projected as an A2A skill by a2a_tools (False: MCP only).
    a2a: bool = True
    # The tool's own stable error codes, each with when it is answered (the reference lists
    # them; the framework's own codes are added by ``error_codes``).
    errors: tuple[tuple[str, str], ...] = ()
    # ``Icon`` objects for tools/list (both eras): src, and optionally mimeType, sizes, theme.
    icons: tuple[dict[str, Any], ...] = ()
    # A write whose idempotent unit is not the tool's own (``mcp_tools.contrib.drf``: the HTTP
    # adapter's key space of the view's route); ``None``: the tool's ``mcp:tool:<name>``.
    write_unit: WriteUnit | None = None
    # Operator's kit (docs/operating.md): the tool's own rate ("10/m", per tenant, on the
    # shared counter) and which argument values the stored call audit may keep (names, or a
    # ``callable(arguments) -> dict`` redacting them); ``None``: no values are stored.
    rate: str | None = None
    audit_arguments: tuple[str, ...] | Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = (
        None
    )
    # ``async def``: a declared non-blocking read, awaited on the event loop under the same
    # slot and deadline as a worker-thread tool (mcp_tools.execution.bounds.run_on_loop).
    on_loop: bool = False
    # A read whose body may answer ``execution.results.PlainJSON`` (a routed operation's JSON,
    # checked by its adapter): that answer is the structured result as is.
    plain_results: bool = False

    def error_codes(self) -> tuple[tuple[str, str], ...]:
        """Every code a call of this tool can answer with: the framework's, then its own."""
        framework = FRAMEWORK_ERRORS + (() if self.read_only else WRITE_ERRORS)
        if self.required_client_capabilities:
            framework += (
                (
                    "Client.CapabilityRequired",
                    "The client did not declare a capability this tool needs: "
                    + ", ".join(self.required_client_capabilities)
                    + ".",
                ),
            )
        if self.rate:
            framework += (
                (
                    "Rate.Limited",
                    f"Over the tool's rate ({self.rate} per tenant); retry after "
                    "data.retryAfter seconds.",
                ),
            )
        return framework + self.errors

    @property
    def qualname(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    @property
    def a2a_skill(self) -> bool:
        """Projected as an A2A skill (when ``a2a_tools`` is installed): not opted out, and
        needing no MCP client capability (sampling, elicitation, …) an A2A client cannot have."""
        # A has_perm policy asks the user's permissions, which the A2A route does not load:
        # such a tool stays MCP only (fail-closed).
        return self.a2a and not self.required_client_capabilities and not self.policy.per_user

    @property
    def operation_key(self) -> str:
        """The idempotency namespace of this tool: one per tool, never shared (stored as its
        SHA-256, like the HTTP adapter's ``METHOD:PATH``, so the two can never alias)."""
        return f"mcp:tool:{self.name}"

    def wire_definition(self) -> dict[str, Any]:
        """The ``Tool`` object for ``tools/list`` (camelCase wire names)."""
        definition: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": {
                "readOnlyHint": self.read_only,
                "destructiveHint": self.destructive,
                # Writes replay under the same idempotencyKey, so a repeat has no further effect.
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }
        if self.title:
            definition["title"] = self.title
            definition["annotations"]["title"] = self.title
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        if self.icons:
            definition["icons"] = [dict(icon) for icon in self.icons]
        if self.task_support != "forbidden":
            # 2025-11-25 reads it; the 2026-07-28 sieve drops it (the tasks extension decides
            # per call instead).
            definition["execution"] = {"taskSupport": self.task_support}
        return definition


class WriteUnit(Protocol):
    """How a write tool shares another adapter's idempotent unit (``mcp_tools.contrib.drf``).

    ``scope`` names the claim (the other adapter's operation and caller keys, so one key used
    over both shares one execution); ``published`` turns the tool's return value into what the
    unit stores, ``structured`` a stored value (either adapter's) into the tool's result.
    """

    def scope(self, ctx: CallContext, validated: BaseModel) -> IdempotencyScope: ...

    def published(self, value: Any) -> Any: ...

    def structured(self, stored: Any) -> dict[str, Any]: ...
