"""Protocol eras behind one interface: one module per revision, picked once by the view.

- ``mcp_tools.eras.handshake``: up to 2025-11-25 (``initialize`` negotiates a version but
  keeps no state; JSON-RPC errors travel with HTTP 200; tasks as ``params.task``).
- ``mcp_tools.eras.modern``: 2026-07-28 (every request carries its ``_meta`` envelope and the
  routing headers; errors map to HTTP statuses; input requests; the tasks extension).

An era answers one request (``serve``): it admits the message (its own envelope rules), reads
what the request declares (capabilities, log level, progress token, request state, whether it
asks for a task) and hands an ``RpcRequest`` to the router with its method table. Its other
differences are data the reply reads (``statuses``, ``envelope``, ``label``) or methods called
off the common path. A future revision is one new module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from django.http import HttpRequest

    from mcp_tools.execution import runner
    from mcp_tools.rpc import jsonrpc as _jsonrpc
    from mcp_tools.rpc.replies import Reply
    from mcp_tools.rpc.request import RpcRequest
    from mcp_tools.serving.streaming import StreamReply
    from mcp_tools.tasks.store import TaskView

Handler = Callable[["RpcRequest"], Awaitable[Any]]


@dataclass(frozen=True)
class Era:
    """One protocol revision at one version (``version``)."""

    version: str

    # JSON-RPC error code → HTTP status (200 when absent).
    statuses: ClassVar[Mapping[int, int]]
    # Methods served in this era: name → (handler, validate params against the SDK's models).
    methods: ClassVar[Mapping[str, tuple[Handler, bool]]]
    # Fields a resource read adds (the list TTL and cache scope of 2026-07-28).
    cache_fields: ClassVar[Mapping[str, Any]]
    # The client may be asked for input (elicitation, sampling, roots) on this request.
    can_ask: ClassVar[bool]
    # A tool asks by sending the request on the call's response stream and waiting for the
    # client's answer, POSTed separately (2025-11-25, ``mcp_tools.asking.mailbox``).
    asks_on_stream: ClassVar[bool] = False

    # A task requested on the call runs the whole tool as one (2025-11-25 ``params.task``),
    # rather than from the tool's ``ctx.continue_as_task()`` on (2026-07-28).
    tasks_up_front: ClassVar[bool]

    # A ``notifications/cancelled`` may cancel a call in flight (``mcp_tools.call.cancellation``);
    # otherwise only closing the response stream does (2026-07-28).
    cancelled_by_notification: ClassVar[bool]

    @staticmethod
    def envelope(result: dict[str, Any], server_info: Mapping[str, Any]) -> dict[str, Any]:
        """A result as this era sends it (2026-07-28 stamps it with ``server_info``)."""
        raise NotImplementedError("eras must provide envelope()")

    @property
    def label(self) -> str:
        """How call records name the era: ``handshake``, or the version."""
        return self.version

    async def serve(
        self,
        request: HttpRequest,
        message: _jsonrpc.Message,
        *,
        tenant: Any,
        headers: Mapping[str, str],
        streamable: bool,
    ) -> Reply | StreamReply:
        """Answer ``message`` (a request, a notification or a response) in this era."""
        raise NotImplementedError("eras must provide serve()")

    def capability_outcome(self, outcome: runner.NeedsCapability) -> runner.Outcome:
        """How this era answers a call that needs capabilities the request did not declare."""
        raise NotImplementedError("eras must provide capability_outcome()")

    def task_required(self, name: str) -> runner.Failed:
        """The refusal of a ``task_support="required"`` tool called without a task."""
        raise NotImplementedError("eras must provide task_required()")

    def task_created(self, view: TaskView) -> dict[str, Any]:
        """``CreateTaskResult`` in this era's format."""
        raise NotImplementedError("eras must provide task_created()")

    def task_body(self, view: TaskView) -> dict[str, Any]:
        """``tasks/get``: the task in this era's format."""
        raise NotImplementedError("eras must provide task_body()")

    def task_cancelled(self, before: TaskView, after: TaskView | None) -> runner.Outcome | None:
        """``tasks/cancel``: a refusal (``before`` was terminal) or the body; ``None`` for
        ``after`` is asked first (the cancel has not happened yet)."""
        raise NotImplementedError("eras must provide task_cancelled()")

    def task_request_refusal(self, req: RpcRequest, task_id: str) -> Reply | None:
        """What this era checks on every ``tasks/*`` request (negotiation, routing headers)."""
        raise NotImplementedError("eras must provide task_request_refusal()")

    def tool_call_refusal(self, req: RpcRequest, spec: Any, arguments: dict[str, Any]) -> Any:
        """A refusal of ``tools/call`` by this era's own rules (``None``: none)."""
        raise NotImplementedError("eras must provide tool_call_refusal()")

    def raw_result(self, value: dict[str, Any]) -> dict[str, Any]:
        """A raw tool's result as this era's ``CallToolResult`` is validated."""
        raise NotImplementedError("eras must provide raw_result()")
