"""One tool run: the read/write choice, the request state redeemed, control flow → an outcome.

``run_tool`` is the one place that chooses between a read and a write: MCP ``tools/call``,
tasks and A2A skills all run tools through it. ``Job`` is what a worker thread runs for one
request under the call bounds (``mcp_tools.execution.bounds``): it redeems the request state
first, then turns what the user code raised to ask for more (input, a client capability, a
task) into an ``Outcome`` the RPC layer answers in one place (``mcp_tools.rpc.replies``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from mcp_tools.asking import requeststate
from mcp_tools.authoring.factories import ToolFactorySpec
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.call.context import CallContext
from mcp_tools.call.exchange import (
    CallCancelled,
    ClientCapabilityMissing,
    ContinueAsTask,
    ExchangeControl,
    InputRequired,
)
from mcp_tools.execution.arguments import validate_arguments
from mcp_tools.execution.bounds import BoundError
from mcp_tools.execution.results import run_read, run_read_on_loop
from mcp_tools.execution.writes import run_write


def run_tool(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> dict[str, Any]:
    """Worker thread: run ``spec`` as a read or, inside its idempotent unit, as a write."""
    return (run_read if spec.read_only else run_write)(spec, ctx, validated)


def run_factory(
    factory: ToolFactorySpec, ctx: CallContext, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Worker thread: build an identity factory's tool for ``ctx``, then run it as a tool."""
    built = factory.build(ctx)
    validated = validate_arguments(built, arguments)
    return validated if isinstance(validated, dict) else run_tool(built, ctx, validated)


def hand_over(*args: Any) -> Any:
    """Worker thread: hand the whole call to a task (the client asked for one up front)."""
    raise ContinueAsTask()


# --- outcomes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Done:
    """Finished: ``value`` is the method's result (a ``CallToolResult`` for a tool)."""

    value: Any


@dataclass(frozen=True)
class Failed:
    """A JSON-RPC error decided by the method (unknown name, bad arguments, …)."""

    code: int
    message: str
    data: Any = None


@dataclass(frozen=True)
class NeedsInput:
    requests: dict[str, Any]


@dataclass(frozen=True)
class NeedsCapability:
    """The call needs client capabilities the request did not declare."""

    required: dict[str, Any]
    message: str = "This call needs a client capability the request did not declare"
    # Where the era cannot declare capabilities, a tool answers an isError result with this
    # text (``{version}``: the request's); ``None``: a JSON-RPC error, as in every era.
    tool_message: str | None = None
    # The isError result lists the capability names (a registered requirement).
    listed: bool = False


@dataclass(frozen=True)
class ToTask:
    task: Any  # the created task (None: no task slot free)


@dataclass(frozen=True)
class StateRefused:
    reason: str


@dataclass(frozen=True)
class Cancelled:
    """The call was cancelled (``mcp_tools.call.cancellation``) while its request still waits."""


@dataclass(frozen=True)
class ScopesRequired:
    """The credential's scopes do not cover the call (403 ``insufficient_scope``)."""

    scopes: tuple[str, ...]
    message: str


Outcome = (
    Done
    | Failed
    | NeedsInput
    | NeedsCapability
    | ToTask
    | StateRefused
    | ScopesRequired
    | Cancelled
    | BoundError
)


def job(
    work: Callable[..., Any],
    *args: Any,
    opened: requeststate.OpenedState | None = None,
    on_task: Callable[[], Any] | None = None,
) -> Outcome:
    """Worker thread: redeem ``opened``, run ``work(*args)``, map control flow to outcomes."""
    if opened is not None:
        try:
            requeststate.redeem(opened)
        except requeststate.RequestStateRefusedError as refused:
            return StateRefused(refused.reason)
    try:
        return Done(work(*args))
    except ContinueAsTask:
        if on_task is None:
            raise
        return ToTask(on_task())
    except ExchangeControl as control:
        return _asked(control)


async def job_on_loop(spec: ToolSpec, ctx: CallContext, validated: BaseModel) -> Outcome:
    """Event loop: ``job`` for an ``async def`` read tool with no request state to redeem and
    no quota to count (both need the database: those calls run as a ``job``)."""
    try:
        return Done(await run_read_on_loop(spec, ctx, validated))
    except ExchangeControl as control:
        return _asked(control)


def _asked(control: ExchangeControl) -> Outcome:
    """The outcome of a tool that stopped to ask for more (input, a capability) or was
    cancelled."""
    if isinstance(control, CallCancelled):
        return Cancelled()
    if isinstance(control, InputRequired):
        return NeedsInput(control.requests)
    if isinstance(control, ClientCapabilityMissing):
        return NeedsCapability(control.required)
    raise control
