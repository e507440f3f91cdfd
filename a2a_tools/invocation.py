"""The invocation model: which skill a message invokes, with which arguments (read from the
JSON as sent), in which turn of which task."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from a2a.utils.errors import (
    ContentTypeNotSupportedError,
)

from a2a_tools.params import Refused, invalid
from a2a_tools.skills import (
    IDEMPOTENCY_METADATA_KEY,
    JSON_MODE,
    SkillSurface,
)
from mcp_tools import CallContext
from mcp_tools.adapter import IDEMPOTENCY_KEY_ALIAS, ToolSpec
from tenancy import evaluate

INVOCATION_SHAPE: Final = '{"data": {"skill": "<skill id>", "arguments": {...}}}'


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
        Refused: -32005 for a data part of another media type, -32602 for any other shape.
    """
    parts = raw_message.get("parts")
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise invalid("message.parts must be a list of parts")
    if not any("data" in part for part in parts):
        raise NotAnInvocationError
    if len(parts) != 1:
        raise invalid(f"Send exactly one part: {INVOCATION_SHAPE}")
    part = parts[0]
    if part.get("mediaType") not in (None, "", JSON_MODE):
        raise Refused(
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
        raise invalid(f"The data part must be {INVOCATION_SHAPE} (arguments may be omitted)")
    arguments = data.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise invalid("arguments must be an object")
    if IDEMPOTENCY_KEY_ALIAS in arguments:
        raise invalid(
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
