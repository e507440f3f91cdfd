"""The A2A v1.0 JSON-RPC methods, answered from the prepared skills of the caller's role.

Request parameters are validated with the ``a2a-sdk`` protobuf types (``ParseDict``: the
specification's field names and enums). The skill's ``arguments`` are then read from the JSON
as sent, never from the protobuf ``Struct``: a ``Struct`` turns every number into a double, and
a tool must see ``950`` and ``2**60`` exactly as an MCP caller's would. Responses are written as
JSON in the specification's form (camelCase, ProtoJSON enum names) for the same reason.

A skill runs exactly like ``tools/call``: the same ``CallContext``, argument model, worker pool,
concurrency slots, deadline and, for a write, the same ``IdempotentUnit`` under the same keys.

A long-running skill (its tool declares ``task_support``) asked with
``configuration.returnImmediately`` (or ``"required"``) runs as an MCP task
(``mcp_tools.tasks.run_as_task``): the answer is a ``TASK_STATE_WORKING`` task whose id is the
MCP task id, and GetTask / CancelTask read and cancel it in the MCP task store, so one task is
the same task over both protocols.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InvalidParamsError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from asgiref.sync import sync_to_async
from django.db import DatabaseError
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import Message as ProtoMessage

from a2a_tools import errors
from a2a_tools.skills import (
    IDEMPOTENCY_METADATA_KEY,
    JSON_MODE,
    PROTOCOL_VERSION,
    SkillSurface,
)
from a2a_tools.tasks import InvalidCursorError, TaskOwner, TaskStore, task_store
from mcp_tools import _jsonrpc, execution
from mcp_tools import tasks as mcp_tasks
from mcp_tools.context import CallContext
from mcp_tools.registry import IDEMPOTENCY_KEY_ALIAS, ToolSpec
from mcp_tools.taskstore import TaskView
from tenancy import evaluate

logger = logging.getLogger(__name__)

VERSION_HEADER: Final = "A2A-Version"
# An absent A2A-Version means 0.3 (spec §3.6.2), which this agent does not speak.
IMPLICIT_VERSION: Final = "0.3"
_VERSION_RE: Final = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")
DEFAULT_PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 100
MAX_CONTEXT_ID_LENGTH: Final = 255
ACCEPTED_OUTPUT_MODES: Final = frozenset({JSON_MODE, "application/*", "*/*"})
COMPLETED: Final = "TASK_STATE_COMPLETED"
FAILED: Final = "TASK_STATE_FAILED"
INPUT_REQUIRED: Final = "TASK_STATE_INPUT_REQUIRED"
CANCELED: Final = "TASK_STATE_CANCELED"
WORKING: Final = "TASK_STATE_WORKING"
# The MCP task store's statuses as A2A task states.
MCP_STATES: Final[Mapping[str, str]] = {
    "working": WORKING,
    "input_required": INPUT_REQUIRED,
    "completed": COMPLETED,
    "failed": FAILED,
    "cancelled": CANCELED,
}
INVOCATION_SHAPE: Final = '{"data": {"skill": "<skill id>", "arguments": {...}}}'
# The code in an input-required task's status message: the message was no skill invocation.
CODE_NOT_AN_INVOCATION: Final = "A2A.InvocationRequired"

METHODS: Final[Mapping[str, type[ProtoMessage]]] = {
    "SendMessage": pb.SendMessageRequest,
    "SendStreamingMessage": pb.SendMessageRequest,
    "GetTask": pb.GetTaskRequest,
    "ListTasks": pb.ListTasksRequest,
    "CancelTask": pb.CancelTaskRequest,
    "SubscribeToTask": pb.SubscribeToTaskRequest,
    "CreateTaskPushNotificationConfig": pb.TaskPushNotificationConfig,
    "GetTaskPushNotificationConfig": pb.GetTaskPushNotificationConfigRequest,
    "ListTaskPushNotificationConfigs": pb.ListTaskPushNotificationConfigsRequest,
    "DeleteTaskPushNotificationConfig": pb.DeleteTaskPushNotificationConfigRequest,
    "GetExtendedAgentCard": pb.GetExtendedAgentCardRequest,
}
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


class _Refused(Exception):
    def __init__(self, error: A2AError) -> None:
        super().__init__(error.message)
        self.error = error


def _invalid(message: str, **data: Any) -> _Refused:
    return _Refused(InvalidParamsError(message=message, data=data or None))


def version_error(requested: str | None) -> A2AError | None:
    """``VersionNotSupportedError`` unless the request speaks 1.0 (patch ignored, §3.6)."""
    version = (requested or "").strip() or IMPLICIT_VERSION
    match = _VERSION_RE.match(version)
    if match and f"{match[1]}.{match[2]}" == PROTOCOL_VERSION:
        return None
    return VersionNotSupportedError(
        message=f"A2A version {version} is not supported; this agent speaks {PROTOCOL_VERSION}",
        data={"requestedVersion": version, "supportedVersions": PROTOCOL_VERSION},
    )


def _without_part_data(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with each message part's ``data`` value replaced by ``null``.

    The skill's arguments are read from the JSON as sent and validated by the tool's own model;
    converting them to a protobuf ``Struct`` first would only cost time (and turn integers into
    doubles). Everything else — the shape of the message, its parts, enums — is still checked.
    """
    message = params.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        return dict(params)
    parts: list[Any] = message["parts"]
    stubbed = [
        {**part, "data": None} if isinstance(part, dict) and "data" in part else part
        for part in parts
    ]
    return {**params, "message": {**message, "parts": stubbed}}


def _unstorable(value: Any, path: str = "params") -> str | None:
    """Where the first string (key or value) holding NUL or a lone surrogate is, if any.

    Such text survives neither a database column (PostgreSQL refuses both, in ``text`` and in
    ``jsonb``) nor a UTF-8 reply, and every message is stored with its task; so, as ``/mcp``
    does for tool arguments, it is refused at the boundary. The envelope parser bounds the
    depth (``MCP_TOOLS_MAX_JSON_DEPTH``), so the recursion is safe.
    """
    if isinstance(value, str):
        if "\x00" in value:
            return path
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        for key, child in value.items():
            found = _unstorable(key, path) or _unstorable(child, f"{path}.{key}")
            if found:
                return found
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found = _unstorable(child, f"{path}.{index}")
            if found:
                return found
    return None


def parse_params(method: str, params: Mapping[str, Any] | None) -> ProtoMessage:
    """The request parameters as the method's protobuf type (unknown fields ignored, §5.7).

    Raises:
        _Refused: -32602 for params of the wrong shape or types, or holding text no store
            can keep (NUL, a lone surrogate).
    """
    where = _unstorable(params)
    if where is not None:
        raise _invalid("Text may not contain NUL (U+0000) or lone surrogates", field=where)
    payload = dict(params or {})
    if METHODS[method] is pb.SendMessageRequest:
        payload = _without_part_data(payload)
    try:
        return ParseDict(payload, METHODS[method](), ignore_unknown_fields=True)
    except ParseError as exc:
        raise _invalid(f"Invalid params: {exc}") from None


def timestamp() -> str:
    """Now, as the specification writes timestamps: UTC, milliseconds, ``Z`` (§5.6.1)."""
    now = dt.datetime.now(dt.UTC)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Invocation:
    skill: str
    arguments: dict[str, Any]
    idempotency_key: Any
    message: dict[str, Any]  # the caller's message, as sent


@dataclass(frozen=True)
class Turn:
    """Where a message lands: a new task, or the input-required task it continues."""

    task_id: str
    context_id: str
    earlier: tuple[dict[str, Any], ...] = ()  # the continued task's history, its prompt last
    continues: bool = False

    @classmethod
    def continuing(cls, task: Mapping[str, Any]) -> Turn:
        prompt = task["status"].get("message")
        earlier = [*task.get("history", []), *([prompt] if prompt else [])]
        return cls(task["id"], task["contextId"], tuple(earlier), continues=True)

    def history(self, message: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            *self.earlier,
            {**message, "taskId": self.task_id, "contextId": self.context_id},
        ]


class NotAnInvocationError(Exception):
    """The message carries no data part: it is not a skill invocation at all."""


def invocation(raw_message: Mapping[str, Any]) -> Invocation:
    """Read ``{"skill", "arguments"}`` from the message's one data part.

    Raises:
        NotAnInvocationError: no part carries data (text or files only): the task waits for
            one (``TASK_STATE_INPUT_REQUIRED``); its status message shows the invocation shape.
        _Refused: -32005 for a data part of another media type, -32602 for any other shape.
    """
    parts = raw_message.get("parts")
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise _invalid("message.parts must be a list of parts")
    if not any("data" in part for part in parts):
        raise NotAnInvocationError
    if len(parts) != 1:
        raise _invalid(f"Send exactly one part: {INVOCATION_SHAPE}")
    part = parts[0]
    if part.get("mediaType") not in (None, "", JSON_MODE):
        raise _Refused(
            ContentTypeNotSupportedError(
                message=f"The invocation is one application/json data part: {INVOCATION_SHAPE}",
                data={"acceptedModes": JSON_MODE},
            )
        )
    data = part["data"]
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("skill"), str)
        or set(data) - {"skill", "arguments"}
    ):
        raise _invalid(f"The data part must be {INVOCATION_SHAPE} (arguments may be omitted)")
    arguments = data.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _invalid("arguments must be an object")
    if IDEMPOTENCY_KEY_ALIAS in arguments:
        raise _invalid(
            f"The idempotency key travels in message.metadata.{IDEMPOTENCY_METADATA_KEY}, "
            "not among the arguments"
        )
    metadata = raw_message.get("metadata")
    key = metadata.get(IDEMPOTENCY_METADATA_KEY) if isinstance(metadata, dict) else None
    return Invocation(data["skill"], arguments, key, dict(raw_message))


def visible_skill(surface: SkillSurface, ctx: CallContext, name: str) -> ToolSpec | None:
    spec = surface.skills.get(name)
    # Defense in depth, as tools/call does: ask the live policy again.
    if spec is None or not evaluate(spec.policy, ctx.actor):
        return None
    return spec


def _tool_error(result: Mapping[str, Any]) -> dict[str, Any]:
    """The ``{"code", "message", "data"?}`` object of an MCP ``isError`` result."""
    try:
        text = result["content"][0]["text"]
        error = json.loads(text)["error"]
        if isinstance(error, dict):
            return error
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return {"code": execution.CODE_INTERNAL, "message": "The tool failed"}


def _content_part(block: Mapping[str, Any]) -> dict[str, Any]:
    kind = block.get("type")
    if kind == "text":
        return {"text": block.get("text", ""), "mediaType": "text/plain"}
    if kind in ("image", "audio"):
        return {"raw": block.get("data", ""), "mediaType": block.get("mimeType", "")}
    if kind == "resource":
        resource = block.get("resource", {})
        part: dict[str, Any] = {"mediaType": resource.get("mimeType") or "text/plain"}
        if "blob" in resource:
            part["raw"] = resource["blob"]
        else:
            part["text"] = resource.get("text", "")
        part["metadata"] = {"uri": resource.get("uri", "")}
        return part
    if kind == "resource_link":
        return {"url": block.get("uri", ""), "mediaType": block.get("mimeType") or ""}
    return {"data": dict(block), "mediaType": JSON_MODE}


def result_parts(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A successful ``CallToolResult`` as artifact parts: the structured result as one JSON
    data part, otherwise one part per content block."""
    if "structuredContent" in result:
        return [{"data": result["structuredContent"], "mediaType": JSON_MODE}]
    return [_content_part(block) for block in result.get("content", [])]


def _finished(
    result: Mapping[str, Any], *, task_id: str, context_id: str, stamp: str
) -> dict[str, Any]:
    """``id``, ``contextId``, ``status`` and ``artifacts`` of the task a tool result ends."""
    task: dict[str, Any] = {"id": task_id, "contextId": context_id}
    if result.get("isError"):
        error = _tool_error(result)
        task["status"] = {
            "state": FAILED,
            "timestamp": stamp,
            "message": _agent_message(error, task_id=task_id, context_id=context_id),
        }
    else:
        task["status"] = {"state": COMPLETED, "timestamp": stamp}
        task["artifacts"] = [
            {"artifactId": f"{task_id}-result", "name": "result", "parts": result_parts(result)}
        ]
    return task


def task_from_result(result: Mapping[str, Any], *, turn: Turn, call: Invocation) -> dict[str, Any]:
    """The finished ``Task`` for one tool result: completed with the result as its artifact,
    or failed with the tool error (stable code) in its status message."""
    task = _finished(result, task_id=turn.task_id, context_id=turn.context_id, stamp=timestamp())
    task["history"] = turn.history(call.message)
    task["metadata"] = {"skill": call.skill}
    return task


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_from_view(view: TaskView) -> dict[str, Any]:
    """An MCP task (``mcp_tools`` task store) as an A2A ``Task``.

    ``completed`` ends like a synchronous skill (its result as the ``result`` artifact, or
    ``TASK_STATE_FAILED`` with the stable code when the result is a tool error); ``failed``
    carries the task's JSON-RPC error (internal failure, deadline, lost worker) in the same
    shape. No history: the store keeps the arguments, not the message.
    """
    task_id = view.task_id
    context_id = view.context_id or task_id
    stamp = _stamp(view.updated_at)
    state = MCP_STATES.get(view.status, FAILED)
    if view.status == "completed" and view.result is not None:
        task = _finished(view.result, task_id=task_id, context_id=context_id, stamp=stamp)
    else:
        task = {"id": task_id, "contextId": context_id}
        status: dict[str, Any] = {"state": state, "timestamp": stamp}
        if state == FAILED:
            error = view.error or {"code": execution.CODE_INTERNAL, "message": "The task failed"}
            status["message"] = _agent_message(error, task_id=task_id, context_id=context_id)
        elif view.status_message:
            status["message"] = {
                "messageId": f"{task_id}-status",
                "role": "ROLE_AGENT",
                "taskId": task_id,
                "contextId": context_id,
                "parts": [{"text": view.status_message}],
            }
        task["status"] = status
    task["metadata"] = {"skill": view.operation}
    return task


def input_required_task(message: Mapping[str, Any], *, turn: Turn) -> dict[str, Any]:
    """A message that invokes no skill (text or files only). This agent has no model to read
    prose: the task waits for an invocation (an interrupted state, §4.1.3), and its status
    message says how to send one — as a message continuing this task, or as a new one."""
    error = {
        "code": CODE_NOT_AN_INVOCATION,
        "message": (
            "This agent runs skills and reads no prose: send one application/json data part "
            f"{INVOCATION_SHAPE}; the skills are listed in the extended Agent Card "
            "(GetExtendedAgentCard)."
        ),
    }
    return {
        "id": turn.task_id,
        "contextId": turn.context_id,
        "status": {
            "state": INPUT_REQUIRED,
            "timestamp": timestamp(),
            "message": _agent_message(error, task_id=turn.task_id, context_id=turn.context_id),
        },
        "history": turn.history(message),
    }


def _agent_message(error: Mapping[str, Any], *, task_id: str, context_id: str) -> dict[str, Any]:
    return {
        "messageId": f"{task_id}-status",
        "role": "ROLE_AGENT",
        "taskId": task_id,
        "contextId": context_id,
        "parts": [
            {"data": {"error": dict(error)}, "mediaType": JSON_MODE},
            {"text": f"{error.get('code')}: {error.get('message')}"},
        ],
    }


def shaped(
    task: Mapping[str, Any], *, history_length: int | None, artifacts: bool = True
) -> dict[str, Any]:
    """``task`` trimmed as the request asks (§3.2.4 history, ListTasks ``includeArtifacts``)."""
    out = dict(task)
    if history_length is not None:
        history = out.get("history", [])
        if history_length == 0 or not history:
            out.pop("history", None)
        else:
            out["history"] = history[-history_length:]
    if not artifacts:
        out.pop("artifacts", None)
    return out


def _optional_int(message: ProtoMessage, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None


def _history_length(message: ProtoMessage) -> int | None:
    value = _optional_int(message, "history_length")
    if value is not None and value < 0:
        raise _invalid("historyLength must not be negative")
    return value


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
                raise _Refused(refused)
            return await self._answer(request_id, method, request, params or {})
        except _Refused as exc:
            return Reply(200, errors.a2a_error(request_id, exc.error))

    async def _answer(
        self, request_id: Any, method: str, request: Any, params: Mapping[str, Any]
    ) -> Reply:
        if method in _STREAMING:
            # capabilities.streaming is false (§3.3.4).
            raise _Refused(UnsupportedOperationError(message="Streaming is not supported"))
        if method in _PUSH:
            raise _Refused(PushNotificationNotSupportedError())
        if method == "GetExtendedAgentCard":
            card = self.surface.card.render(self.interface_url())
            return Reply(200, _jsonrpc.result_bytes(request_id, card))
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
        return Reply(200, _jsonrpc.result_bytes(request_id, result))

    async def _owned(self, task_id: str) -> dict[str, Any]:
        """The caller's task: one finished in its request (this store), else a long-running
        one of the MCP task store (``task_from_view``)."""
        if not task_id:
            raise _invalid("id is required")
        task = await sync_to_async(self._find)(task_id)
        if task is None:
            # Another member's task and a missing one are the same answer (§13.1).
            raise _Refused(TaskNotFoundError(data={"taskId": task_id}))
        return task

    def _find(self, task_id: str) -> dict[str, Any] | None:
        task = self.store.get(self.owner, task_id)
        if task is None:
            view = mcp_tasks.get_task(self.ctx, task_id)
            if view is not None:
                task = task_from_view(view)
                self._long_running.add(task_id)
        return task

    async def get_task(self, request: pb.GetTaskRequest) -> dict[str, Any]:
        history_length = _history_length(request)
        task = await self._owned(request.id)
        return shaped(task, history_length=history_length)

    async def cancel_task(self, request: pb.CancelTaskRequest) -> dict[str, Any]:
        task = await self._owned(request.id)
        if task["status"]["state"] in (WORKING, INPUT_REQUIRED):
            # A long-running task is canceled in the MCP store (one that ended meanwhile stays
            # as it ended, and is then not cancelable); None: a task of this store.
            view = await sync_to_async(mcp_tasks.cancel_task)(self.ctx, request.id)
            if view is not None:
                task = task_from_view(view)
                if task["status"]["state"] == CANCELED:
                    return task
                raise _Refused(
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
        raise _Refused(
            TaskNotCancelableError(data={"taskId": request.id, "state": task["status"]["state"]})
        )

    async def list_tasks(
        self, request: pb.ListTasksRequest, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        page_size = _optional_int(request, "page_size")
        if page_size is None:
            page_size = DEFAULT_PAGE_SIZE
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise _invalid(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")
        history_length = _history_length(request)
        raw_status = params.get("status")
        # ParseDict maps an unknown enum name to 0 (no filter); a typo must not list everything.
        if raw_status not in (None, "", 0) and not request.status:
            raise _invalid(f"Unknown status: {raw_status}")
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
            raise _invalid("Invalid pageToken") from None
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
            raise _invalid("message needs messageId, role and parts")
        if message.role == pb.ROLE_UNSPECIFIED:
            raise _invalid("message.role is required")
        configuration = request.configuration
        if configuration.HasField("task_push_notification_config"):
            raise _Refused(PushNotificationNotSupportedError())
        modes = set(configuration.accepted_output_modes)
        if modes and not modes & ACCEPTED_OUTPUT_MODES:
            raise _Refused(
                ContentTypeNotSupportedError(
                    message="Skill results are application/json",
                    data={"outputModes": JSON_MODE},
                )
            )
        history_length = _history_length(configuration)
        turn = await self._turn(message)
        try:
            call = invocation(params["message"])
        except NotAnInvocationError:
            task = input_required_task(params["message"], turn=turn)
            self._finished = (task, None, turn.continues)
            return {"task": shaped(task, history_length=history_length)}
        spec = visible_skill(self.surface, self.ctx, call.skill)
        if spec is None:
            # Hidden and unknown skills are indistinguishable: absence is not a hint.
            raise _invalid(f"Unknown skill: {call.skill}", skill=call.skill)
        arguments = call.arguments
        if not spec.read_only and call.idempotency_key is not None:
            arguments = {**arguments, IDEMPOTENCY_KEY_ALIAS: call.idempotency_key}
        validated = execution.validate_arguments(spec, arguments)
        long_running = spec.task_support == "required" or (
            spec.task_support == "optional" and configuration.return_immediately
        )
        if isinstance(validated, dict):
            task = task_from_result(validated, turn=turn, call=call)
            self._finished = (task, spec, turn.continues)
        elif long_running and not turn.continues:
            ran = await self._run_as_task(spec, validated, arguments, turn=turn, call=call)
            if isinstance(ran, Reply):
                return ran
            task = ran
        else:
            ran = await self._run(spec, validated, turn=turn, call=call)
            if isinstance(ran, Reply):
                return ran
            task = ran
        return {"task": shaped(task, history_length=history_length)}

    async def _turn(self, message: pb.Message) -> Turn:
        """A new task (its id is the request id, which the logs and an internal error's
        ``requestId`` quote too), or the input-required task ``message.taskId`` continues."""
        if not message.task_id:
            context_id = message.context_id or self.ctx.request_id
            if len(context_id) > MAX_CONTEXT_ID_LENGTH:
                raise _invalid(f"contextId is longer than {MAX_CONTEXT_ID_LENGTH} characters")
            return Turn(self.ctx.request_id, context_id)
        task = await self._owned(message.task_id)
        if task["status"]["state"] != INPUT_REQUIRED or task["id"] in self._long_running:
            # A terminal task accepts no further message (§3.1.1); a long-running one runs
            # without messages (its input, if any, is answered over MCP tasks/update).
            finished = task["id"] not in self._long_running
            raise _Refused(
                UnsupportedOperationError(
                    message="The task is finished and accepts no further messages"
                    if finished
                    else "A long-running task accepts no messages",
                    data={"taskId": message.task_id, "state": task["status"]["state"]},
                )
            )
        if message.context_id and message.context_id != task["contextId"]:
            raise _invalid(
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
        self, spec: ToolSpec, validated: Any, *, turn: Turn, call: Invocation
    ) -> dict[str, Any] | Reply:
        body = execution.run_read if spec.read_only else execution.run_write
        ctx = self.ctx

        def work() -> dict[str, Any]:
            result = body(spec, ctx, validated)
            return task_from_result(result, turn=turn, call=call)

        try:
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
    ) -> dict[str, Any] | Reply:
        """Run the skill as an MCP task: the part before ``ctx.continue_as_task()`` within
        this request (an error there is a failed task at once, stored here like any finished
        task), the rest in the MCP task runner; answer the ``TASK_STATE_WORKING`` task."""
        ctx = self.ctx

        def work() -> mcp_tasks.Handover:
            return mcp_tasks.run_as_task(
                ctx, spec, validated, arguments=arguments, context_id=turn.context_id
            )

        try:
            handover = await execution.run_bounded(work)
        except execution.BoundError as exc:
            return bound_reply(self.request_id, exc)
        if handover.result is not None:
            task = task_from_result(handover.result, turn=turn, call=call)
            self._finished = (task, spec, turn.continues)
            return task
        if handover.task is None:
            # Every task slot is taken, as tools/call answers it.
            return bound_reply(self.request_id, execution.overloaded())
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
