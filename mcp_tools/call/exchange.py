"""The request's exchange with its client: progress, log messages, input requests, tasks.

A tool reaches these through its ``CallContext`` (``ctx.report_progress``, ``ctx.log``,
``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``, ``ctx.continue_as_task``). Nothing here
outlives the request (or, for a task, the task's own run): the exchange is built per request by
the dispatcher and dropped with it. There is no session and no server-held stream.

- Progress and log notifications go to the request's own response stream when the client
  accepts ``text/event-stream`` and asked for them (a ``progressToken``; 2026-07-28 a per-request
  ``logLevel``); otherwise they are dropped. A task records its progress on the task instead.
- Input requests (2026-07-28 multi-round-trip requests) end the call with an
  ``InputRequiredResult``; the client answers by repeating the call with ``inputResponses`` and
  the signed ``requestState`` (``mcp_tools.asking.requeststate``), and the tool runs again from the
  top
  with the answers available. A tool therefore asks before it acts.
- Input requests in the handshake era (2025-11-25) go out on the call's own response stream
  and the tool waits for the answer (an ``Asker``: ``mcp_tools.asking.mailbox``); the same tool code
  serves both eras.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
ELICITATION_PRIMITIVES: Final = frozenset({"string", "number", "integer", "boolean"})
M = TypeVar("M", bound=BaseModel)
Sink = Callable[[dict[str, Any]], None]


class ExchangeControl(BaseException):  # noqa: N818 - control flow, named for what it means
    """Control flow from a tool to the framework.

    A ``BaseException`` on purpose, like ``asyncio.CancelledError``: a tool's own
    ``except Exception`` must not swallow a request for input, a hand-over to a task or a
    cancellation. The idempotent unit releases its claim on it; nothing is stored.
    """


class InputRequired(ExchangeControl):
    """The tool needs answers from the client before it can finish."""

    def __init__(self, requests: Mapping[str, dict[str, Any]]) -> None:
        super().__init__(f"input required: {', '.join(sorted(requests))}")
        self.requests = dict(requests)


class ContinueAsTask(ExchangeControl):
    """The tool has done its synchronous part; the rest runs as a task (re-run in a worker)."""


class CallCancelled(ExchangeControl):
    """The call was cancelled: its client closed the response stream (or, handshake era, sent
    ``notifications/cancelled`` for it). Raised at the tool's next checkpoint
    (``ctx.check_cancelled()``, ``ctx.report_progress``); a write rolls back and releases its
    claim. Let it propagate: nobody reads the call's answer any more."""


class TaskCancelled(CallCancelled):
    """The task this run belongs to was cancelled (or ran past its deadline)."""


class ClientCapabilityMissing(ExchangeControl):
    """The call needs a client capability the request did not declare (-32021)."""

    def __init__(self, required: dict[str, Any]) -> None:
        super().__init__(f"missing client capability: {sorted(required)}")
        self.required = required


@dataclass(frozen=True)
class Elicited(Generic[M]):
    """The user's answer to ``ctx.elicit``: ``accept`` (with ``content``), ``decline`` or
    ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: M | dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept" and self.content is not None


class TaskHooks:
    """What a task run needs from the task store (implemented in ``mcp_tools.tasks.run``)."""

    def progress(self, message: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError("task hooks must provide progress()")

    def cancelled(self) -> bool:  # pragma: no cover - interface
        raise NotImplementedError("task hooks must provide cancelled()")


class Asker(Protocol):
    """Asks the client during the call and waits (2025-11-25, ``mcp_tools.asking.mailbox``)."""

    def supports(self, capability: str) -> bool: ...

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass
class Exchange:
    """One request's channel to its client. Built by the dispatcher, never by a tool."""

    # The client may be asked for input on this request (2026-07-28).
    can_ask: bool = False
    # Client capabilities from the 2026-07-28 envelope; None in the handshake era (they were
    # declared once at initialize, which a stateless server does not remember).
    capabilities: Mapping[str, Any] | None = None
    progress_token: str | int | None = None
    log_level: str | None = None
    sink: Sink | None = None
    # Answers bound to a verified request state (earlier rounds plus this one's).
    answers: dict[str, Any] = field(default_factory=dict)
    # inputResponses that came without a request state: used only by require_state=False.
    loose_answers: dict[str, Any] = field(default_factory=dict)
    # The client negotiated the tasks extension for this call (2026-07-28: per request).
    tasks_negotiated: bool = False
    # Set while a task runs the tool in a worker: progress and cancellation go to the task.
    task: TaskHooks | None = None
    deadline: float | None = None
    # 2025-11-25 on a stream: input requests are sent on it and answered by a separate POST.
    asker: Asker | None = None
    # Set (from the event loop) when the request is cancelled; read by the worker thread. A
    # plain flag: its one write and its reads are atomic, and nothing waits on it (an Event
    # would build a Condition for every call).
    _cancelled: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # --- notifications ---------------------------------------------------------------------

    def emit(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def send(self, message: dict[str, Any]) -> None:
        """Put one JSON-RPC message on the response stream (dropped without one)."""
        sink = self.sink
        if sink is not None:
            with self._lock:
                sink(message)

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.check_cancelled()
        if self.task is not None:
            shown = f"{progress:g}" + (f"/{total:g}" if total is not None else "")
            self.task.progress(f"{shown}: {message}" if message else shown)
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.emit("notifications/progress", params)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {LOG_LEVELS}")
        if self.log_level is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.emit("notifications/message", params)

    # --- client capabilities ---------------------------------------------------------------

    def client_supports(self, capability: str) -> bool:
        """``elicitation``, ``sampling``, ``roots`` or an extension id, declared on this
        request (2026-07-28), or at the member's last ``initialize`` when this call can ask on
        its stream (2025-11-25); otherwise False."""
        if self.asker is not None:
            return self.asker.supports(capability)
        if not self.can_ask or not isinstance(self.capabilities, Mapping):
            return False
        if capability in self.capabilities:
            return self.capabilities[capability] is not None
        extensions = self.capabilities.get("extensions")
        return isinstance(extensions, Mapping) and capability in extensions

    # --- input requests --------------------------------------------------------------------

    def request_inputs(
        self, requests: Mapping[str, dict[str, Any]], *, require_state: bool = True
    ) -> dict[str, Any]:
        """Answers for every request in ``requests`` (``{key: {"method", "params"}}``).

        Raises:
            InputRequired: some are unanswered (the call ends with an InputRequiredResult).
            ClientCapabilityMissing: the client cannot answer one of them (-32021).
        """
        missing: dict[str, Any] = {}
        for request in requests.values():
            capability = _CAPABILITY_OF.get(str(request.get("method")))
            if capability is None:
                raise ValueError(f"not an input request method: {request.get('method')!r}")
            if not self.client_supports(capability):
                missing[capability] = {}
        if missing:
            raise ClientCapabilityMissing(missing)
        if self.asker is not None:
            return self._ask_now(requests)
        found: dict[str, Any] = {}
        pending: dict[str, dict[str, Any]] = {}
        for key, request in requests.items():
            answer = self.answers.get(key)
            if answer is None and not require_state:
                answer = self.loose_answers.get(key)
            if answer is None or not _answers(request, answer):
                pending[key] = request
            else:
                found[key] = answer
        if pending:
            raise InputRequired(pending)
        return found

    def _ask_now(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """2025-11-25: ask on the stream, one request at a time; an answer is kept for its key
        (asked again only when it does not fit, like a form answer ``elicit`` refuses)."""
        assert self.asker is not None
        for key, request in requests.items():
            while not _answers(request, self.answers.get(key)):
                self.answers[key] = self.asker.ask(request)
        return {key: self.answers[key] for key in requests}

    def elicit(
        self,
        key: str,
        *,
        message: str,
        schema: type[M],
        require_state: bool = True,
    ) -> Elicited[M]:
        requested = elicitation_schema(schema)
        request = {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": message, "requestedSchema": requested},
        }
        while True:
            answer = self.request_inputs({key: request}, require_state=require_state)[key]
            action = answer.get("action")
            if action != "accept":
                return Elicited(action=action)
            try:
                content = schema.model_validate(answer.get("content") or {})
            except ValidationError:
                # An answer that does not fit the form is asked again, not trusted.
                self.answers.pop(key, None)
                self.loose_answers.pop(key, None)
                continue
            return Elicited(action="accept", content=content)

    # --- tasks -----------------------------------------------------------------------------

    def continue_as_task(self) -> None:
        if self.task is None and self.tasks_negotiated:
            raise ContinueAsTask()

    def cancel(self) -> None:
        """Cancel the call this exchange belongs to (any thread); the tool stops at its next
        checkpoint."""
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled or self._task_cancelled()

    def check_cancelled(self) -> None:
        if self._cancelled:
            raise CallCancelled()
        if self._task_cancelled():
            raise TaskCancelled()

    def _task_cancelled(self) -> bool:
        return self.task is not None and (
            self.task.cancelled()
            or (self.deadline is not None and time.monotonic() > self.deadline)
        )


_CAPABILITY_OF: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def _answers(request: Mapping[str, Any], answer: Any) -> bool:
    """``answer`` has the shape of a response to ``request`` (else it is asked again)."""
    if not isinstance(answer, Mapping):
        return False
    method = request.get("method")
    if method == "elicitation/create":
        return answer.get("action") in ("accept", "decline", "cancel")
    if method == "sampling/createMessage":
        return "content" in answer and "role" in answer
    return isinstance(answer.get("roots"), list)


def elicitation_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The form schema for ``model``: an object of flat primitive properties (spec: form mode
    carries flat primitives only).

    Raises:
        TypeError: a property is not a string, number, integer, boolean or enum of strings.
    """
    schema = model.model_json_schema(by_alias=True)
    properties: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type")
        if kind not in ELICITATION_PRIMITIVES:
            raise TypeError(f"elicitation field {name!r} must be a flat primitive, not {prop}")
        kept = {k: v for k, v in prop.items() if k in _FORM_KEYWORDS}
        properties[name] = kept
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        out["required"] = list(schema["required"])
    return out


_FORM_KEYWORDS: Final = frozenset(
    {
        "type",
        "title",
        "description",
        "default",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "format",
    }
)
