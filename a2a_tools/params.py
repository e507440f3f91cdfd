"""A2A request parameters: the methods' protobuf types, the version header, and the
refusals of what no store can keep (NUL, a lone surrogate: ``/mcp``'s own rule)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    A2AError,
    InvalidParamsError,
    VersionNotSupportedError,
)
from google.protobuf.json_format import ParseDict, ParseError
from google.protobuf.message import Message as ProtoMessage

from a2a_tools.skills import (
    PROTOCOL_VERSION,
)
from mcp_tools import execution

VERSION_HEADER: Final = "A2A-Version"


# An absent A2A-Version means 0.3 (spec §3.6.2), which this agent does not speak.
IMPLICIT_VERSION: Final = "0.3"


_VERSION_RE: Final = re.compile(r"^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$")


DEFAULT_PAGE_SIZE: Final = 50


MAX_PAGE_SIZE: Final = 100


MAX_CONTEXT_ID_LENGTH: Final = 255


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


class Refused(Exception):
    def __init__(self, error: A2AError) -> None:
        super().__init__(error.message)
        self.error = error


def invalid(message: str, **data: Any) -> Refused:
    return Refused(InvalidParamsError(message=message, data=data or None))


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


def _unstorable(params: Mapping[str, Any] | None) -> str | None:
    """Where the first string (key or value) holding NUL or a lone surrogate is, if any.

    Such text survives neither a database column nor a UTF-8 reply, and every message is
    stored with its task; so it is refused at the boundary by ``/mcp``'s own rule
    (``execution.unstorable_strings``).
    """
    problems = execution.unstorable_strings(dict(params or {}))
    if not problems:
        return None
    field = problems[0]["field"]
    return "params" if field == "(arguments)" else f"params.{field}"


def parse_params(method: str, params: Mapping[str, Any] | None) -> ProtoMessage:
    """The request parameters as the method's protobuf type (unknown fields ignored, §5.7).

    Raises:
        Refused: -32602 for params of the wrong shape or types, or holding text no store
            can keep (NUL, a lone surrogate).
    """
    where = _unstorable(params)
    if where is not None:
        raise invalid("Text may not contain NUL (U+0000) or lone surrogates", field=where)
    payload = dict(params or {})
    if METHODS[method] is pb.SendMessageRequest:
        payload = _without_part_data(payload)
    try:
        return ParseDict(payload, METHODS[method](), ignore_unknown_fields=True)
    except ParseError as exc:
        raise invalid(f"Invalid params: {exc}") from None


def optional_int(message: ProtoMessage, name: str) -> int | None:
    return getattr(message, name) if message.HasField(name) else None


def requested_history_length(message: ProtoMessage) -> int | None:
    value = optional_int(message, "history_length")
    if value is not None and value < 0:
        raise invalid("historyLength must not be negative")
    return value
