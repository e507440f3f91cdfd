"""JSON-RPC error bodies in the A2A v1.0 form, and this app's stable codes.

A2A errors use the codes of the specification (§5.4) and carry, like the ``a2a-sdk`` server, a
``google.rpc.ErrorInfo`` in ``error.data``. The specification has no code for an exhausted
concurrency limit, a missed deadline or a rate limit, and reserves -32001..-32099 for its own
errors, so those are -32603 (its "system errors", §3.3.2) told apart by ``ErrorInfo.reason``
in this app's domain — the frozen envelopes below. Codes and reasons are public API.
"""

from __future__ import annotations

from typing import Any, Final

from a2a.utils.error_handlers import ERROR_INFO_TYPE, build_error_details
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError

from mcp_tools import adapter

INTERNAL_ERROR: Final = -32603
DOMAIN: Final = "a2a_tools"
REASON_OVERLOADED: Final = "OVERLOADED"
REASON_DEADLINE_EXCEEDED: Final = "DEADLINE_EXCEEDED"
REASON_RATE_LIMITED: Final = "RATE_LIMITED"
REASON_UNAUTHENTICATED: Final = "UNAUTHENTICATED"
REASON_FORBIDDEN: Final = "FORBIDDEN"
REASON_INTERNAL: Final = "INTERNAL"


def a2a_error(request_id: Any, error: A2AError) -> bytes:
    """A specification error (``a2a.utils.errors``) with its code and ``ErrorInfo``."""
    code = JSON_RPC_ERROR_CODE_MAP.get(type(error), INTERNAL_ERROR)
    return adapter.error_bytes(request_id, code, error.message, build_error_details(error))


def error_info(reason: str, metadata: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    # google.rpc.ErrorInfo.metadata is map<string, string>.
    return [
        {
            "@type": ERROR_INFO_TYPE,
            "reason": reason,
            "domain": DOMAIN,
            "metadata": {key: str(value) for key, value in (metadata or {}).items()},
        }
    ]


def system_error(
    request_id: Any,
    reason: str,
    message: str,
    metadata: dict[str, Any] | None = None,
    *,
    code: int = INTERNAL_ERROR,
) -> bytes:
    """One of this app's own refusals: ``code`` (-32603 unless said) and ``ErrorInfo.reason``."""
    return adapter.error_bytes(request_id, code, message, error_info(reason, metadata))
