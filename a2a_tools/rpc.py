"""The A2A v1.0 JSON-RPC dispatcher: the methods answered from the caller's prepared skills.

Request parameters are validated with the ``a2a-sdk`` protobuf types (``ParseDict``: the
specification's field names and enums). The skill's ``arguments`` are then read from the JSON
as sent, never from the protobuf ``Struct``: a ``Struct`` turns every number into a double, and
a tool must see ``950`` and ``2**60`` exactly as an MCP caller's would. Responses are written as
JSON in the specification's form (camelCase, ProtoJSON enum names) for the same reason.

A skill runs exactly like ``tools/call``: the same ``CallContext``, argument model, worker pool,
concurrency slots, deadline and, for a write, the same ``IdempotentUnit`` under the same keys.

A long-running skill (its tool declares ``task_support``) asked with
``configuration.returnImmediately`` (or ``"required"``) runs as an MCP task
(``mcp_tools.adapter.run_as_task``): the answer is a ``TASK_STATE_WORKING`` task whose id is the
MCP task id, and GetTask / CancelTask read and cancel it in the MCP task store, so one task is
the same task over both protocols.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from asgiref.sync import sync_to_async
from django.db import DatabaseError

from a2a_tools import errors
from a2a_tools.invocation import Invocation, NotAnInvocationError, Turn, invocation, visible_skill
from a2a_tools.params import (
    DEFAULT_PAGE_SIZE,
    MAX_CONTEXT_ID_LENGTH,
    MAX_PAGE_SIZE,
    METHODS,
    Refused,
    invalid,
    optional_int,
    parse_params,
    requested_history_length,
    version_error,
)
from a2a_tools.shapes import (
    ACCEPTED_OUTPUT_MODES,
    CANCELED,
    INPUT_REQUIRED,
    WORKING,
    input_required_task,
    shaped,
    task_from_result,
    task_from_view,
    timestamp,
)
from a2a_tools.skills import (
    JSON_MODE,
    SkillSurface,
)
from a2a_tools.tasks import InvalidCursorError, TaskOwner, TaskStore, task_store
from mcp_tools import CallContext, adapter, execution
from mcp_tools.adapter import IDEMPOTENCY_KEY_ALIAS, ToolSpec, audit, observability, switches
from tenancy import rls

logger = logging.getLogger(__name__)


_STREAMING: Final = frozenset({"SendStreamingMessage", "SubscribeToTask"})


_PUSH: Final = frozenset(
    {
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    }
)


@dataclass(frozen=True)
class Reply:
    """HTTP status, JSON body and extra headers. JSON-RPC errors travel with 200 (§9)."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


class Dispatcher:
    """One request's methods: the caller's context, skills and task store."""

    def __init__(
        self,
        *,
        ctx: CallContext,
        surface: SkillSurface,
        interface_url: Callable[[], str],
        store: TaskStore | None = None,
    ) -> None:
        self.ctx = ctx
        self.surface = surface
        self.interface_url = interface_url
        self.store = store or task_store()
        self.owner = TaskOwner(tenant_id=str(ctx.tenant_id), user_id=ctx.user_id)
        self.request_id: Any = None
        # The task SendMessage finished (stored by the view before the reply leaves): the
        # task, its skill, and whether it continues an input-required task.
        self._finished: tuple[dict[str, Any], ToolSpec | None, bool] | None = None
        # The tenant's switches on this request (mcp_tools.operator.switches; None: nothing
        # narrows).
        self.switches: switches.Switches | None = None
        # Ids read from the MCP task store in this request (long-running tasks).
        self._long_running: set[str] = set()

    async def dispatch(
        self, request_id: Any, method: str, params: Mapping[str, Any] | None, version: str | None
    ) -> Reply:
        """Answer one request. Unknown method -32601, bad params -32602, then the version."""
        self.request_id = request_id
        if method not in METHODS:
            return Reply(200, errors.a2a_error(request_id, MethodNotFoundError()))
        try:
            request = parse_params(method, params)
            refused = version_error(version)
            if refused is not None:
                raise Refused(refused)
            return await self._answer(request_id, method, request, params or {})
        except Refused as exc:
            return Reply(200, errors.a2a_error(request_id, exc.error))

    async def _answer(
        self, request_id: Any, method: str, request: Any, params: Mapping[str, Any]
    ) -> Reply:
        if method in _STREAMING:
            # capabilities.streaming is false (§3.3.4).
            raise Refused(UnsupportedOperationError(message="Streaming is not supported"))
        if method in _PUSH:
            raise Refused(PushNotificationNotSupportedError())
        if method == "GetExtendedAgentCard":
            card = self.surface.card.render(self.interface_url())
            return Reply(200, adapter.result_bytes(request_id, card))
        if method == "SendMessage":
            result = await self.send_message(request, params)
        elif method == "GetTask":
            result = await self.get_task(request)
        elif method == "ListTasks":
            result = await self.list_tasks(request, params)
        else:
            result = await self.cancel_task(request)
        if isinstance(result, Reply):
            return result
        return Reply(200, adapter.result_bytes(request_id, result))

    async def _owned(self, task_id: str) -> dict[str, Any]:
        """The caller's task: one finished in its request (this store), else a long-running
        one of the MCP task store (``task_from_view``)."""
        if not task_id:
            raise invalid("id is required")
        task = await sync_to_async(self._find)(task_id)
        if task is None:
            # Another member's task and a missing one are the same answer (§13.1).
            raise Refused(TaskNotFoundError(data={"taskId": task_id}))
        return task

    def _find(self, task_id: str) -> dict[str, Any] | None:
        task = self.store.get(self.owner, task_id)
        if task is None:
            view = adapter.get_task(self.ctx, task_id)
            if view is not None:
                task = task_from_view(view)
                self._long_running.add(task_id)
        return task

    async def get_task(self, request: pb.GetTaskRequest) -> dict[str, Any]:
        history_length = requested_history_length(request)
        task = await self._owned(request.id)
        return shaped(task, history_length=history_length)

    async def cancel_task(self, request: pb.CancelTaskRequest) -> dict[str, Any]:
        task = await self._owned(request.id)
        if task["status"]["state"] in (WORKING, INPUT_REQUIRED):
            # A long-running task is canceled in the MCP store (one that ended meanwhile stays
            # as it ended, and is then not cancelable); None: a task of this store.
            view = await sync_to_async(adapter.cancel_task)(self.ctx, request.id)
            if view is not None:
                task = task_from_view(view)
                if task["status"]["state"] == CANCELED:
                    return task
                raise Refused(
                    TaskNotCancelableError(
                        data={"taskId": request.id, "state": task["status"]["state"]}
                    )
                )
        # Of the tasks finished in their request, only one waiting for input can be canceled.
        if task["status"]["state"] == INPUT_REQUIRED:
            canceled = {
                **task,
                "history": list(Turn.continuing(task).earlier),
                "status": {"state": CANCELED, "timestamp": timestamp()},
            }
            update = sync_to_async(self.store.update)
            if await update(self.owner, canceled, skill="", expected_state=INPUT_REQUIRED):
                return canceled
            task = await self._owned(request.id)  # continued or canceled meanwhile
        raise Refused(
            TaskNotCancelableError(data={"taskId": request.id, "state": task["status"]["state"]})
        )

    async def list_tasks(
        self, request: pb.ListTasksRequest, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        page_size = optional_int(request, "page_size")
        if page_size is None:
            page_size = DEFAULT_PAGE_SIZE
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise invalid(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")
        history_length = requested_history_length(request)
        raw_status = params.get("status")
        # ParseDict maps an unknown enum name to 0 (no filter); a typo must not list everything.
        if raw_status not in (None, "", 0) and not request.status:
            raise invalid(f"Unknown status: {raw_status}")
        state = pb.TaskState.Name(request.status) if request.status else ""
        after = (
            request.status_timestamp_after.ToDatetime(tzinfo=dt.UTC)
            if request.HasField("status_timestamp_after")
            else None
        )
        try:
            page = await sync_to_async(self.store.list)(
                self.owner,
                page_size=page_size,
                cursor=request.page_token,
                context_id=request.context_id,
                state=state,
                updated_after=after,
            )
        except InvalidCursorError:
            raise invalid("Invalid pageToken") from None
        include = request.include_artifacts if request.HasField("include_artifacts") else False
        return {
            "tasks": [
                shaped(task, history_length=history_length, artifacts=include)
                for task in page.tasks
            ],
            "nextPageToken": page.next_cursor,
            "pageSize": page_size,
            "totalSize": page.total,
        }

    async def send_message(
        self, request: pb.SendMessageRequest, params: Mapping[str, Any]
    ) -> dict[str, Any] | Reply:
        message = request.message
        if not request.HasField("message") or not message.message_id or not message.parts:
            raise invalid("message needs messageId, role and parts")
        if message.role == pb.ROLE_UNSPECIFIED:
            raise invalid("message.role is required")
        configuration = request.configuration
        if configuration.HasField("task_push_notification_config"):
            raise Refused(PushNotificationNotSupportedError())
        modes = set(configuration.accepted_output_modes)
        if modes and not modes & ACCEPTED_OUTPUT_MODES:
            raise Refused(
                ContentTypeNotSupportedError(
                    message="Skill results are application/json",
                    data={"outputModes": JSON_MODE},
                )
            )
        history_length = requested_history_length(configuration)
        turn = await self._turn(message)
        try:
            call = invocation(params["message"])
        except NotAnInvocationError:
            task = input_required_task(params["message"], turn=turn)
            self._finished = (task, None, turn.continues)
            return {"task": shaped(task, history_length=history_length)}
        spec = visible_skill(self.surface, self.ctx, call.skill)
        if spec is not None and self.switches is not None and not self.switches.admits(spec):
            # Switched off for this tenant: absent, as in tools/list (mcp_tools.operator.switches).
            spec = None
        if spec is None:
            # Hidden and unknown skills are indistinguishable: absence is not a hint.
            raise invalid(f"Unknown skill: {call.skill}", skill=call.skill)
        arguments = call.arguments
        if not spec.read_only and call.idempotency_key is not None:
            arguments = {**arguments, IDEMPOTENCY_KEY_ALIAS: call.idempotency_key}
        # One call record (log, metrics, span and, when on, the stored audit row) per skill call.
        with observability.tool_call(
            self.ctx,
            tool=spec.name,
            known=True,
            protocol="a2a",
            method="SendMessage",
            era="1.0",
            rpc_id=self.request_id,
        ) as record:
            audit.note(record, self.ctx, spec, call.arguments, call.idempotency_key)
            ran = await self._invoke(
                spec, arguments, record, configuration=configuration, turn=turn, call=call
            )
            if isinstance(ran, Reply):
                record.reply(ran)
                return ran
        return {"task": shaped(ran, history_length=history_length)}

    async def _invoke(
        self,
        spec: ToolSpec,
        arguments: dict[str, Any],
        record: observability.ToolCall,
        *,
        configuration: pb.SendMessageConfiguration,
        turn: Turn,
        call: Invocation,
    ) -> dict[str, Any] | Reply:
        validated = execution.validate_arguments(spec, arguments)
        long_running = spec.task_support == "required" or (
            spec.task_support == "optional" and configuration.return_immediately
        )
        if isinstance(validated, dict):
            record.result(validated)
            task = task_from_result(validated, turn=turn, call=call)
            self._finished = (task, spec, turn.continues)
            return task
        if long_running and not turn.continues:
            return await self._run_as_task(
                spec, validated, arguments, turn=turn, call=call, record=record
            )
        return await self._run(spec, validated, turn=turn, call=call, record=record)

    async def _turn(self, message: pb.Message) -> Turn:
        """A new task (its id is the request id, which the logs and an internal error's
        ``requestId`` quote too), or the input-required task ``message.taskId`` continues."""
        if not message.task_id:
            context_id = message.context_id or self.ctx.request_id
            if len(context_id) > MAX_CONTEXT_ID_LENGTH:
                raise invalid(f"contextId is longer than {MAX_CONTEXT_ID_LENGTH} characters")
            return Turn(self.ctx.request_id, context_id)
        task = await self._owned(message.task_id)
        if task["status"]["state"] != INPUT_REQUIRED or task["id"] in self._long_running:
            # A terminal task accepts no further message (§3.1.1); a long-running one runs
            # without messages (its input, if any, is answered over MCP tasks/update).
            finished = task["id"] not in self._long_running
            raise Refused(
                UnsupportedOperationError(
                    message="The task is finished and accepts no further messages"
                    if finished
                    else "A long-running task accepts no messages",
                    data={"taskId": message.task_id, "state": task["status"]["state"]},
                )
            )
        if message.context_id and message.context_id != task["contextId"]:
            raise invalid(
                "contextId is not the task's", taskId=task["id"], contextId=task["contextId"]
            )
        return Turn.continuing(task)

    def store_finished_task(self) -> Reply | None:
        """Store the task ``SendMessage`` finished, if any (synchronous: the request's thread).

        Returns the reply to send instead when the continued task changed meanwhile (canceled,
        or continued by another message): -32004, the task is no longer waiting for input.
        """
        if self._finished is None:
            return None
        task, spec, continues = self._finished
        self._finished = None
        skill = spec.name if spec else ""
        try:
            if not continues:
                self.store.save(self.owner, task, skill=skill)
            elif not self.store.update(
                self.owner, task, skill=skill, expected_state=INPUT_REQUIRED
            ):
                # A write that ran is committed: the same key replays it in a new task.
                error = UnsupportedOperationError(
                    message="The task changed while this message was handled and accepts it "
                    "no more",
                    data={"taskId": task["id"]},
                )
                return Reply(200, errors.a2a_error(self.request_id, error))
        except DatabaseError:
            # The tool's work is done (a write is committed): the caller still gets its result,
            # and only a later GetTask misses this task. Anything else is a bug and surfaces.
            logger.exception("A2A task %s could not be stored", task["id"])
        return None

    async def _run(
        self,
        spec: ToolSpec,
        validated: Any,
        *,
        turn: Turn,
        call: Invocation,
        record: observability.ToolCall,
    ) -> dict[str, Any] | Reply:
        ctx = self.ctx
        limited = switches.limited(spec)

        def finished(result: dict[str, Any]) -> dict[str, Any]:
            record.result(result)
            return task_from_result(result, turn=turn, call=call)

        def work() -> dict[str, Any]:
            refused = switches.refusal(spec, ctx) if limited else None
            return finished(refused or execution.run_tool(spec, ctx, validated))

        async def on_loop() -> dict[str, Any]:
            return finished(await execution.run_read_on_loop(spec, ctx, validated))

        try:
            # A declared non-blocking read (async def); under row-level security its queries
            # need the worker thread's transaction (mcp_tools.execution.run_read).
            if spec.on_loop and not limited and not rls.enabled():
                task = await execution.run_on_loop(on_loop)
            else:
                task = await execution.run_bounded(work)
        except execution.BoundError as exc:
            return bound_reply(self.request_id, exc)
        self._finished = (task, spec, turn.continues)
        return task

    async def _run_as_task(
        self,
        spec: ToolSpec,
        validated: Any,
        arguments: Mapping[str, Any],
        *,
        turn: Turn,
        call: Invocation,
        record: observability.ToolCall,
    ) -> dict[str, Any] | Reply:
        """Run the skill as an MCP task: the part before ``ctx.continue_as_task()`` within
        this request (an error there is a failed task at once, stored here like any finished
        task), the rest in the MCP task runner; answer the ``TASK_STATE_WORKING`` task."""
        ctx = self.ctx

        def work() -> adapter.Handover:
            return adapter.run_as_task(
                ctx, spec, validated, arguments=arguments, context_id=turn.context_id
            )

        try:
            handover = await execution.run_bounded(work)
        except execution.BoundError as exc:
            return bound_reply(self.request_id, exc)
        if handover.result is not None:
            record.result(handover.result)
            task = task_from_result(handover.result, turn=turn, call=call)
            self._finished = (task, spec, turn.continues)
            return task
        if handover.task is None:
            # Every task slot is taken, as tools/call answers it.
            return bound_reply(self.request_id, execution.overloaded())
        record.result({"resultType": "task"})
        return task_from_view(handover.task)


def bound_reply(request_id: Any, exc: execution.BoundError) -> Reply:
    """The frozen envelopes for an exhausted concurrency limit and a missed deadline."""
    if exc.code == execution.OVERLOADED:
        retry = (exc.data or {}).get("retryAfterSeconds", 1)
        return Reply(
            200,
            errors.system_error(
                request_id, errors.REASON_OVERLOADED, exc.message, {"retryAfterSeconds": retry}
            ),
            {"Retry-After": str(retry)},
        )
    return Reply(
        200,
        errors.system_error(
            request_id, errors.REASON_DEADLINE_EXCEEDED, exc.message, dict(exc.data or {})
        ),
    )
