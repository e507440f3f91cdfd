"""The answer mailbox: server-to-client requests on a ``tools/call`` stream (2025-11-25).

The handshake era has no ``InputRequiredResult``: a tool that asks (``ctx.elicit``,
``ctx.sample``, ``ctx.list_roots``) sends its request on the call's own SSE response stream,
with a server-chosen id, and waits. The client answers with a separate POST (a JSON-RPC
response, no session id) that may land on any replica, so the answer travels through the
shared database: ``deliver`` writes it into the request's row, the waiting call polls its row
(a short poll, woken at once when the answer lands on the same process). No ``LISTEN``: a
poll works behind PgBouncer's transaction pooling, where a listening connection would not.

A request is

- **bound**: its row names the tenant, the member, the tool and the call's JSON-RPC id. An
  answer is accepted only from the member it was sent to (another member's POST with the same
  id is "unknown"), and the call reads only the row it created for its own tool and id;
- **one-time**: the first answer wins; a replay is refused (409), never delivered again;
- **bounded**: the call waits at most until its deadline (``MCP_TOOLS_CALL_TIMEOUT_SECONDS``),
  holding its concurrency slot; closing the stream cancels the wait.

Whether to ask at all follows what the member's client declared at its last ``initialize``
(``remember_capabilities``): a stateless server keeps no session, so the declaration is kept
per member in the database (one row each), like the mailbox; ``manage.py purge_mcp_tools``
sweeps expired requests.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from django.db import IntegrityError, transaction
from django.utils import timezone

from mcp_tools.call.exchange import CallCancelled, ClientCapabilityMissing
from mcp_tools.call.own_connection import on_own_connection
from tenancy.process import LockedTable, ProcessObject

ID_PREFIX: Final = "mcp-ask-"
# The first poll of the mailbox, doubling up to the last (seconds).
FIRST_POLL: Final = 0.02
LAST_POLL: Final = 0.25
# A row outlives its call by this much, so a late answer is "answered"/"unknown", not lost.
KEEP_SECONDS: Final = 60
CAPABILITY_OF: Final = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
Delivery = Literal["accepted", "unknown", "answered", "not ours"]

# Requests waited for on this process: request id → event set when its answer is delivered.
WAITING: Final = ProcessObject[LockedTable[str, threading.Event]](
    "asking.waiting", LockedTable, kind="table", renew=LockedTable.renew
)
_waiting = WAITING.get()


def remember_capabilities(tenant: Any, owner: Any, capabilities: Any) -> None:
    """Record what a member's client declared at ``initialize`` (the latest one wins)."""
    from mcp_tools.models import ClientDeclaration

    declared = dict(capabilities) if isinstance(capabilities, Mapping) else {}
    tenant_key, owner_key, now = str(tenant), str(owner), timezone.now()
    values: dict[str, Any] = {"capabilities": declared, "declared_at": now}
    try:
        with transaction.atomic():
            ClientDeclaration.objects.update_or_create(
                tenant_key=tenant_key, owner_key=owner_key, defaults=values
            )
    except IntegrityError:  # two initializes at once: the other one created the row
        ClientDeclaration.objects.filter(tenant_key=tenant_key, owner_key=owner_key).update(
            **values
        )


def declared_capabilities(tenant: Any, owner: Any) -> Mapping[str, Any]:
    from mcp_tools.models import ClientDeclaration

    found = (
        ClientDeclaration.objects.filter(tenant_key=str(tenant), owner_key=str(owner))
        .values_list("capabilities", flat=True)
        .first()
    )
    return found if isinstance(found, Mapping) else {}


class StreamAsker:
    """One call's way to ask its client (``mcp_tools.call.exchange.Asker``), in a worker thread."""

    def __init__(
        self,
        *,
        tenant: Any,
        owner: Any,
        tool: str,
        call_id: Any,
        send: Callable[[dict[str, Any]], None],
        cancelled: Callable[[], bool],
        deadline: float,
    ) -> None:
        self.tenant, self.owner, self.tool = str(tenant), str(owner), tool
        self.call_id = json.dumps(call_id)
        self._send, self._cancelled, self.deadline = send, cancelled, deadline
        self._declared: Mapping[str, Any] | None = None

    def supports(self, capability: str) -> bool:
        """The member's client declared ``capability`` at its last ``initialize``."""
        if self._declared is None:
            self._declared = declared_capabilities(self.tenant, self.owner)
        return self._declared.get(capability) is not None

    def ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Send ``request`` (``{"method", "params"}``) on the stream; the client's result.

        The mailbox is written and read on a thread of its own, with its own connection: a
        write tool asks inside its transaction, where a row it created would stay invisible
        to the replica that receives the answer until the tool commits.

        Raises:
            ClientCapabilityMissing: the client answered with an error (it cannot do this).
            CallCancelled: the stream closed, or the call's deadline passed, before an answer.
        """
        return on_own_connection(lambda: self._ask(request), name="mcp-ask")

    def _ask(self, request: Mapping[str, Any]) -> dict[str, Any]:
        from mcp_tools.models import ClientRequest

        method = str(request.get("method"))
        request_id = ID_PREFIX + secrets.token_urlsafe(24)
        wait_seconds = max(0.0, self.deadline - time.monotonic())
        ClientRequest.objects.create(
            request_id=request_id,
            tenant_key=self.tenant,
            owner_key=self.owner,
            tool=self.tool,
            call_id=self.call_id,
            method=method,
            expires_at=timezone.now() + dt.timedelta(seconds=wait_seconds + KEEP_SECONDS),
        )
        woken = threading.Event()
        with _waiting.lock:
            _waiting[request_id] = woken
        try:
            self._send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": method,
                    "params": request.get("params") or {},
                }
            )
            answer = self._wait(request_id, woken)
        finally:
            with _waiting.lock:
                _waiting.pop(request_id, None)
        if "result" in answer and isinstance(answer["result"], dict):
            return dict(answer["result"])
        raise ClientCapabilityMissing({CAPABILITY_OF.get(method, method): {}})

    def _wait(self, request_id: str, woken: threading.Event) -> dict[str, Any]:
        from mcp_tools.models import ClientRequest

        # Only this call's own row: its tenant, member, tool and call id.
        mine = ClientRequest.objects.filter(
            request_id=request_id,
            tenant_key=self.tenant,
            owner_key=self.owner,
            tool=self.tool,
            call_id=self.call_id,
            answered_at__isnull=False,
        )
        poll = FIRST_POLL
        while True:
            if self._cancelled():
                raise CallCancelled()
            answer = mine.values_list("answer", flat=True).first()
            if isinstance(answer, dict):
                return answer
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise CallCancelled()  # the call has timed out: nobody reads its answer
            woken.wait(min(poll, remaining))
            woken.clear()
            poll = min(poll * 2, LAST_POLL)


def deliver(tenant: Any, owner: Any, response: Mapping[str, Any]) -> Delivery:
    """File the client's JSON-RPC ``response`` for the request it answers.

    ``accepted``: the waiting call gets it. ``unknown``: no such request was sent to this
    member (or it expired). ``answered``: it was answered before (a replay is never delivered).
    ``not ours``: the id is not one this server hands out (nothing to match it to).
    """
    from mcp_tools.models import ClientRequest

    request_id = response.get("id")
    if not isinstance(request_id, str) or not request_id.startswith(ID_PREFIX):
        return "not ours"
    if "result" in response:
        answer: dict[str, Any] = {"result": response["result"]}
    else:
        answer = {"error": response.get("error")}
    owned = ClientRequest.objects.filter(
        request_id=request_id, tenant_key=str(tenant), owner_key=str(owner)
    )
    now = timezone.now()
    # One UPDATE: under concurrent replays exactly one finds the row still unanswered.
    filed = owned.filter(answered_at__isnull=True, expires_at__gt=now).update(
        answer=answer, answered_at=now
    )
    if filed:
        with _waiting.lock:
            woken = _waiting.get(request_id)
        if woken is not None:
            woken.set()
        return "accepted"
    return "answered" if owned.filter(answered_at__isnull=False).exists() else "unknown"
