"""Stable error codes of ``mcp_tools``: public API, never renamed.

JSON-RPC codes in the implementation-defined band (-32000..-32019) and the ``error.code`` of
``isError`` tool results.
"""

from __future__ import annotations

from typing import Final

# Stable JSON-RPC codes in the implementation-defined band (-32000..-32019). Public API.
OVERLOADED: Final = -32010
TIMED_OUT: Final = -32011
RATE_LIMITED: Final = -32012
FORBIDDEN: Final = -32013
UNAUTHENTICATED: Final = -32014
# subscriptions/listen: the member already has MCP_TOOLS_MAX_LISTENERS_PER_MEMBER streams open.
LISTENER_LIMIT: Final = -32015

# Mirrors LSP's RequestCancelled, as the SDK does: the handshake-era answer to a request
# cancelled by notifications/cancelled whose POST is still open (its stream must end with a
# response for its id; ``mcp_tools.call.cancellation``).
REQUEST_CANCELLED: Final = -32800

CODE_INVALID_ARGUMENTS: Final = "Tool.InvalidArguments"
CODE_INTERNAL: Final = "Tool.InternalError"
# A tool declared to return a pydantic model returned something else (a dict, say): its
# outputSchema is a promise the registry cannot check before the call, so the call is refused.
CODE_RESULT_NOT_MODEL: Final = "Tool.ResultNotModel"
CODE_KEY_REUSED: Final = "Idempotency.KeyReused"
CODE_IN_PROGRESS: Final = "Idempotency.InProgress"
CODE_CAPABILITY_REQUIRED: Final = "Client.CapabilityRequired"
# Over a tool's own rate or the tenant's budget (mcp_tools.operator.switches); data.retryAfter:
# seconds.
CODE_RATE_LIMITED: Final = "Rate.Limited"
