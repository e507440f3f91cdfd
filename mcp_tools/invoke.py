"""Running a piece of user code (tool, resource, prompt) for one request, with its exchange.

The one path every user callable takes: build the request's ``Exchange`` (capabilities,
progress token, log level, verified input answers), run the code in a worker thread under the
call bounds (``calls.run_bounded``), redeem the request state there first, turn the control
flow a tool may raise (input required, hand over to a task, missing client capability) into an
``Outcome``, and answer either with JSON or, when the call reported something and the client
accepts it, with a stream (``mcp_tools.streaming``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp_types import CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY
from mcp_types.jsonrpc import INVALID_PARAMS

from mcp_tools import calls, cancellation, conf, requeststate, streaming, surfaces
from mcp_tools.exchange import (
    LOG_LEVELS,
    CallCancelled,
    ClientCapabilityMissing,
    ContinueAsTask,
    Exchange,
    InputRequired,
)
from mcp_tools.replies import Era, Reply, bound_refusal, error, result
from mcp_tools.streaming import StreamReply

TASKS_EXTENSION = surfaces.TASKS_EXTENSION
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Done:
    value: Any


@dataclass(frozen=True)
class NeedsInput:
    requests: dict[str, Any]


@dataclass(frozen=True)
class NeedsCapability:
    required: dict[str, Any]


@dataclass(frozen=True)
class ToTask:
    task: Any  # the created task (None: no task slot free)


@dataclass(frozen=True)
class StateRefused:
    reason: str


@dataclass(frozen=True)
class Cancelled:
    """The call was cancelled (``mcp_tools.cancellation``) while its request still waits."""


Outcome = Done | NeedsInput | NeedsCapability | ToTask | StateRefused | Cancelled | calls.BoundError


@dataclass
class Inputs:
    """This round's verified answers and the state to redeem in the worker."""

    opened: requeststate.OpenedState | None = None
    answers: dict[str, Any] = field(default_factory=dict)
    loose: dict[str, Any] = field(default_factory=dict)


def capabilities_of(era: Era, params: Mapping[str, Any]) -> Mapping[str, Any] | None:
    meta = params.get("_meta")
    if not era.modern or not isinstance(meta, Mapping):
        return None
    declared = meta.get(CLIENT_CAPABILITIES_META_KEY)
    return declared if isinstance(declared, Mapping) else None


def tasks_negotiated(era: Era, params: Mapping[str, Any]) -> bool:
    """2026-07-28: the extension is in this request's declared capabilities."""
    declared = capabilities_of(era, params)
    extensions = declared.get("extensions") if declared else None
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions


def build_exchange(era: Era, params: Mapping[str, Any]) -> Exchange:
    meta = params.get("_meta")
    meta = meta if isinstance(meta, Mapping) else {}
    token = meta.get("progressToken")
    if isinstance(token, bool) or not isinstance(token, str | int):
        token = None
    if era.modern:
        # 2026-07-28: log messages only when this request opts in (SEP-2577).
        level = meta.get(LOG_LEVEL_META_KEY)
        log_level = level if level in LOG_LEVELS else None
    else:
        log_level = str(conf.get("LOG_LEVEL"))
    return Exchange(
        modern=era.modern,
        capabilities=capabilities_of(era, params),
        progress_token=token,
        log_level=log_level,
    )


def open_inputs(era: Era, params: Mapping[str, Any], binding: requeststate.Binding) -> Inputs:
    """This round's answers (2026-07-28 only).

    Answers count only for the keys the request state says were asked; without a state they
    are "loose" (used only by ``require_state=False`` questions).

    Raises:
        requeststate.RequestStateRefusedError: tampered, expired or foreign state.
    """
    if not era.modern:
        return Inputs()
    responses = params.get("inputResponses")
    responses = dict(responses) if isinstance(responses, Mapping) else {}
    token = params.get("requestState")
    if token is None:
        return Inputs(loose=responses)
    opened = requeststate.open_state(token, binding)
    answers = dict(opened.answers)
    answers.update({key: responses[key] for key in opened.pending if key in responses})
    return Inputs(opened=opened, answers=answers)


def guarded(
    work: Callable[[], Any],
    inputs: Inputs,
    *,
    on_task: Callable[[], Any] | None = None,
) -> Callable[[], Outcome]:
    """``work`` as a worker-thread job: redeem the state, then map control flow to outcomes."""

    def job() -> Outcome:
        if inputs.opened is not None:
            try:
                requeststate.redeem(inputs.opened)
            except requeststate.RequestStateRefusedError as refused:
                return StateRefused(refused.reason)
        try:
            return Done(work())
        except CallCancelled:
            return Cancelled()
        except InputRequired as needed:
            return NeedsInput(needed.requests)
        except ClientCapabilityMissing as missing:
            return NeedsCapability(missing.required)
        except ContinueAsTask:
            if on_task is None:
                raise
            return ToTask(on_task())

    return job


async def execute(
    exchange: Exchange,
    job: Callable[[], Outcome],
    finish: Callable[[Outcome], Reply],
    *,
    streamable: bool,
    cancel_key: cancellation.Key | None = None,
) -> Reply | StreamReply:
    """Run ``job`` bounded; answer JSON, or a stream if the call reports before it returns.

    When the client goes away (Django cancels the view, or the stream's iteration) the call is
    cancelled with it (``calls.run_bounded``: the tool is told, the slot freed). ``cancel_key``
    also lets a handshake-era ``notifications/cancelled`` cancel it; its request is then
    answered -32800.
    """
    channel = None
    if streamable and (exchange.progress_token is not None or exchange.log_level is not None):
        channel = streaming.Channel(asyncio.get_running_loop())
        exchange.sink = channel.put
    call = asyncio.ensure_future(calls.run_bounded(job, on_cancel=exchange.cancel))
    call.add_done_callback(_retrieve)
    cancellation.register(cancel_key, call)
    try:
        if channel is not None:
            first = await channel.first(call)
            if first is not None:

                async def final() -> bytes:
                    body = finish(await _outcome(call)).body
                    assert body is not None
                    return body

                return streaming.stream(channel, first, call, final)
        return finish(await _outcome(call))
    except asyncio.CancelledError:
        call.cancel()  # the client went away: nobody will read the answer
        raise


async def _outcome(call: asyncio.Future[Outcome]) -> Outcome:
    try:
        return await call
    except calls.BoundError as bound:
        return bound
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if call.cancelled() and current is not None and not current.cancelling():
            return Cancelled()  # by notifications/cancelled; this request still waits
        raise


def input_required(
    era: Era,
    rid: Any,
    binding: requeststate.Binding,
    exchange: Exchange,
    requests: dict[str, Any],
    server_info: Mapping[str, Any],
) -> Reply:
    """The ``InputRequiredResult`` asking ``requests``, with a fresh signed request state that
    carries every answer so far (a state too large to carry is an internal error, logged)."""
    try:
        state = requeststate.issue(binding, answers=exchange.answers, pending=list(requests))
    except ValueError:
        logger.exception("MCP request state too large (%s %s)", binding.method, binding.name)
        return error(era, rid, -32603, "Internal error: the answers are too large to carry")
    body = {"resultType": "input_required", "inputRequests": requests, "requestState": state}
    return result(era, rid, body, server_info)


def shared_reply(
    outcome: Outcome,
    *,
    era: Era,
    rid: Any,
    binding: requeststate.Binding,
    exchange: Exchange,
    server_info: Mapping[str, Any],
) -> Reply | None:
    """The reply every kind of request gives ``outcome`` (a bound hit, a refused request state,
    a question for the client); ``None``: the outcome is the caller's to answer."""
    if isinstance(outcome, calls.BoundError):
        return bound_refusal(era, rid, outcome)
    if isinstance(outcome, Cancelled):
        return error(era, rid, cancellation.REQUEST_CANCELLED, "Request cancelled")
    if isinstance(outcome, StateRefused):
        return error(era, rid, INVALID_PARAMS, "Invalid request state", {"reason": outcome.reason})
    if isinstance(outcome, NeedsInput):
        return input_required(era, rid, binding, exchange, outcome.requests, server_info)
    return None


def _retrieve(future: asyncio.Future[Any]) -> None:
    # A stream whose client went away never awaits its call: read the exception here so it is
    # not reported as "never retrieved".
    if not future.cancelled():
        future.exception()
