"""Cancelling a call in flight: its client closed the response stream, or said so.

Two ways a call is cancelled, both ending in the same place (``execution.bounds.run_bounded``:
the exchange is told, so the tool stops at its next checkpoint, and the slot is freed at once):

- **The response stream closes** (both eras; in 2026-07-28 the only way: a closed response
  stream MUST be treated as cancellation). Django's ASGI handler listens for
  ``http.disconnect`` while it serves the view and while it sends a streamed body, and
  cancels that work; ``mcp_tools.methods.tools`` (and ``mcp_tools.serving.streaming`` for a streamed
  answer) passes the cancellation on to the call.
- **``notifications/cancelled``** (handshake era only; 2026-07-28 defines no client-to-server
  notifications over HTTP and they are acknowledged and dropped). It arrives as its own POST
  (``mcp_tools.eras.handshake``). It reaches the call only when that POST lands on the same
  process (a registry in memory: ``run`` / ``register``, ``cancel``), and only a call of the
  same tenant and acting user with that JSON-RPC id, and only when exactly one such call is in
  flight (two sessions of one member may both use id 1: an ambiguous id cancels nothing).
  Elsewhere it is acknowledged and has no effect; the client's closing of the stream still
  cancels the call.

Tasks are never cancelled here: they outlive their request (``tasks/cancel`` cancels them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Final, TypeVar

from mcp_tools.codes import REQUEST_CANCELLED
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy.process import LockedTable, ProcessObject

__all__ = [
    "REQUEST_CANCELLED",
    "Key",
    "RequestCancelled",
    "awaited",
    "cancel",
    "cancel_notified",
    "key",
    "register",
    "run",
]

T = TypeVar("T")
Key = tuple[str, str, str]
# Calls in flight on this process, by key (mcp_tools.operator.process).
IN_FLIGHT: Final = ProcessObject[LockedTable[Key, list[asyncio.Future[Any]]]](
    "call.in_flight", LockedTable, kind="table", renew=LockedTable.renew
)
_in_flight = IN_FLIGHT.get()


class RequestCancelled(Exception):
    """``notifications/cancelled`` cancelled the call while its request still waits (answered
    ``REQUEST_CANCELLED``)."""


def key(tenant_id: Any, user_id: Any, request_id: Any) -> Key:
    """The registry key: tenant, acting user and the JSON-RPC id as sent (``1`` ≠ ``"1"``)."""
    return (str(tenant_id), str(user_id), _jsonrpc.dumps(request_id).decode())


def _add(call_key: Key, call: asyncio.Future[Any]) -> None:
    with _in_flight.lock:
        _in_flight.setdefault(call_key, []).append(call)


def _remove(call_key: Key, call: asyncio.Future[Any]) -> None:
    with _in_flight.lock:
        calls = _in_flight.get(call_key, [])
        if call in calls:
            calls.remove(call)
        if not calls:
            _in_flight.pop(call_key, None)


def register(call_key: Key | None, call: asyncio.Future[Any]) -> None:
    """``call`` can be cancelled by ``notifications/cancelled`` until it is done (a call whose
    answer may be streamed, so outlives the view)."""
    if call_key is None:
        return
    _add(call_key, call)
    call.add_done_callback(lambda _: _remove(call_key, call))


async def awaited(call: asyncio.Future[T]) -> T:
    """Await ``call``; ``RequestCancelled`` when ``notifications/cancelled`` cancelled it (the
    request awaiting it was not cancelled itself)."""
    try:
        return await call
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if call.cancelled() and current is not None and not current.cancelling():
            raise RequestCancelled() from None
        raise


async def run(work: Coroutine[Any, Any, T], *, tenant_id: Any, user_id: Any, request_id: Any) -> T:
    """Await ``work`` (a bounded call) so that ``notifications/cancelled`` from this tenant's
    member ``user_id`` naming ``request_id`` cancels it (then ``RequestCancelled``)."""
    call_key = key(tenant_id, user_id, request_id)
    call = asyncio.ensure_future(work)
    _add(call_key, call)
    try:
        return await awaited(call)
    except asyncio.CancelledError:
        call.cancel()  # the client went away: nobody will read the answer
        raise
    finally:
        _remove(call_key, call)


def cancel(call_key: Key) -> bool:
    """Cancel the one call in flight under ``call_key``; ``False`` if none or several."""
    with _in_flight.lock:
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
