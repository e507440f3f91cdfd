"""Cancelling a call in flight: its client closed the response stream, or said so.

Two ways a call is cancelled, both ending in the same place (``calls.run_bounded``: the
exchange is told, so the tool stops at its next checkpoint, and the slot is freed at once):

- **The response stream closes** (both eras; in 2026-07-28 the only way: a closed response
  stream MUST be treated as cancellation). Django's ASGI handler listens for
  ``http.disconnect`` while it serves the view and while it sends a streamed body, and
  cancels that work; ``mcp_tools.invoke`` passes the cancellation on to the call.
- **``notifications/cancelled``** (handshake era only; 2026-07-28 defines no client-to-server
  notifications over HTTP and they are acknowledged and dropped). It arrives as its own POST.
  It reaches the call only when that POST lands on the same process (a registry in memory,
  ``register`` / ``cancel``), and only a call of the same tenant and acting user with that
  JSON-RPC id, and only when exactly one such call is in flight (two sessions of one member
  may both use id 1: an ambiguous id cancels nothing). Elsewhere it is acknowledged and has no
  effect; the client's closing of the stream still cancels the call.

Tasks are never cancelled here: they outlive their request (``tasks/cancel`` cancels them).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Final

from mcp_tools import _jsonrpc

# Mirrors LSP's RequestCancelled, as the SDK does: the handshake-era answer to a request
# cancelled by notifications/cancelled whose POST is still open (its stream must end with a
# response for its id).
REQUEST_CANCELLED: Final = -32800

Key = tuple[str, str, str]
_lock = threading.Lock()
_in_flight: dict[Key, list[asyncio.Future[Any]]] = {}


def key(tenant_id: Any, user_id: Any, request_id: Any) -> Key:
    """The registry key: tenant, acting user and the JSON-RPC id as sent (``1`` ≠ ``"1"``)."""
    return (str(tenant_id), str(user_id), _jsonrpc.dumps(request_id).decode())


def register(call_key: Key | None, call: asyncio.Future[Any]) -> None:
    """``call`` can be cancelled by ``notifications/cancelled`` until it is done."""
    if call_key is None:
        return
    with _lock:
        _in_flight.setdefault(call_key, []).append(call)

    def unregister(_: asyncio.Future[Any]) -> None:
        with _lock:
            calls = _in_flight.get(call_key, [])
            if call in calls:
                calls.remove(call)
            if not calls:
                _in_flight.pop(call_key, None)

    call.add_done_callback(unregister)


def cancel(call_key: Key) -> bool:
    """Cancel the one call in flight under ``call_key``; ``False`` if none or several."""
    with _lock:
        calls = list(_in_flight.get(call_key, ()))
    if len(calls) != 1:
        return False
    call = calls[0]
    call.get_loop().call_soon_threadsafe(call.cancel)
    return True


def cancel_notified(tenant_id: Any, user_id: Any, params: Any) -> bool:
    """Apply a handshake-era ``notifications/cancelled`` from this tenant's member ``user_id``
    (``params.requestId``); ``False`` when it names no single call of theirs in flight here."""
    request_id = params.get("requestId") if isinstance(params, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return False
    return cancel(key(tenant_id, user_id, request_id))
