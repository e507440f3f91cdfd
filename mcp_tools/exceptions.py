"""Errors raised by ``mcp_tools``. Codes are public API: add, never rename."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class ToolError(Exception):
    """A tool's anticipated failure, shown to the model as ``isError: true`` with its code.

    Raise it from a tool (or let the configured ``MCP_TOOLS_ERROR_TRANSLATOR`` produce the
    equivalent from a domain error). In a write tool the idempotency claim is released.
    """

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True)
class ToolFailure:
    """What an error translator returns for an exception it recognises."""

    code: str
    message: str
    data: dict[str, Any] | None = None


class CallContextRefusedError(Exception):
    """The call context refused to exist; ``reason`` says which precondition failed.

    Never shown to a client: it means the identity bridge is broken or bypassed.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"CallContext refused: {reason}.")
        self.reason = reason


class UnknownSurfaceError(Exception):
    """No prepared surface exists for the caller's key; refused before any dispatch."""


class ResourceNotFoundError(Exception):
    """Raised by a resource function: the URI names nothing this caller may read.

    Answered as JSON-RPC -32602 with ``data.uri`` — the same answer as an unknown or hidden
    resource, so a client cannot tell "missing" from "someone else's".
    """
