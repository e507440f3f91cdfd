"""A2A shapes: tool results and MCP tasks written as A2A tasks, messages and parts (the
specification's JSON form: camelCase, ProtoJSON enum names)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any, Final

from a2a_tools.invocation import INVOCATION_SHAPE, Invocation, Turn
from a2a_tools.skills import (
    JSON_MODE,
)
from mcp_tools import execution
from mcp_tools.adapter import TaskView

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


# The code in an input-required task's status message: the message was no skill invocation.
CODE_NOT_AN_INVOCATION: Final = "A2A.InvocationRequired"


def timestamp() -> str:
    """Now, as the specification writes timestamps: UTC, milliseconds, ``Z`` (§5.6.1)."""
    now = dt.datetime.now(dt.UTC)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


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


def finished(
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
    task = finished(result, task_id=turn.task_id, context_id=turn.context_id, stamp=timestamp())
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
        task = finished(view.result, task_id=task_id, context_id=context_id, stamp=stamp)
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
