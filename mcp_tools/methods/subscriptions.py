"""``subscriptions/listen`` (2026-07-28, optional: ``MCP_TOOLS_SUBSCRIPTIONS``).

One request opens one SSE stream (the request's own response): first
``notifications/subscriptions/acknowledged`` with the honoured filter, then the change
notifications that filter admits, each tagged with the listen request's id under
``_meta["io.modelcontextprotocol/subscriptionId"]``, until the client goes away or the stream
reaches ``MCP_TOOLS_LISTEN_MAX_SECONDS`` (it then ends with the listen result; the client
listens again, its credential judged again). No replay: a client that re-listens refetches.

Honoured: the three list-change kinds, and the requested resource URIs, each of which the
caller must be able to read now: the listen is refused with the error ``resources/read`` gives
(-32602 "Resource not found", ``data.uri``) for the first one it cannot, row scope included
(``features.readable``, the read path itself). Changes come from the shared change table
(``mcp_tools.subscriptions.bus``): another replica's write is heard here, and only the caller's
own tenant's changes reach its stream.

While the stream is open its caller is judged again every ``MCP_TOOLS_LISTEN_RECHECK_SECONDS``
(``mcp_tools.call.callers.live_context``, the request path's liveness rule, run by the poller): a
revoked or expired token, a role change, a disabled user or member, a suspended tenant end
the stream with the JSON-RPC error the caller's next request gets (-32014, ``data.code``).
A resource change is delivered only when the caller, as last re-checked, still may see it:
a change of a row outside its row scope is dropped (no query), and the URI is read again
(``features.readable``) once per stream, URI and re-check, whatever the number of changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from asgiref.sync import sync_to_async
from mcp_types.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

from mcp_tools import conf
from mcp_tools.call.callers import CallerGoneError, KeptCaller, live_context, unauthenticated_error
from mcp_tools.call.context import CallContext
from mcp_tools.codes import LISTENER_LIMIT
from mcp_tools.execution.bounds import BoundError
from mcp_tools.methods.features import readable
from mcp_tools.rpc.replies import Reply, bound_refusal, error
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.serving.streaming import StreamReply, sse
from mcp_tools.subscriptions import bus as notifications
from tenancy import AuthenticationFailedError

logger = logging.getLogger(__name__)

SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
# The retry hint of a refusal over the bound: a stream ends within RENEW/STALE bounds anyway.
LIMIT_RETRY_AFTER_SECONDS = 30


async def honoured(req: RpcRequest, requested: Mapping[str, Any]) -> dict[str, Any] | Reply:
    """What this caller gets of ``requested`` (every list kind asked for, every URI asked
    for), or the refusal of the first URI it could not read now (as ``resources/read``)."""
    era, rid = req.era, req.rid
    filter_: dict[str, Any] = {}
    for key in notifications.LIST_CHANGED.values():
        if requested.get(key) is True:
            filter_[key] = True
    uris = requested.get("resourceSubscriptions")
    if isinstance(uris, list) and uris:
        wanted = list(dict.fromkeys(uri for uri in uris if isinstance(uri, str)))
        limit = int(conf.get("LISTEN_MAX_RESOURCE_SUBSCRIPTIONS"))
        if len(wanted) > limit:
            # Each URI costs a read now: their number is bounded like any argument.
            message = f"resourceSubscriptions must hold at most {limit} distinct URIs"
            return error(era, rid, INVALID_PARAMS, message)
        for uri in wanted:
            try:
                allowed = await readable(req.surface, req.ctx, uri)
            except BoundError as bound:
                return bound_refusal(era, rid, bound)
            if not allowed:
                return error(era, rid, INVALID_PARAMS, "Resource not found", {"uri": uri})
        filter_["resourceSubscriptions"] = wanted
    return filter_


def _interest(filter_: Mapping[str, Any]) -> notifications.Interest:
    lists = frozenset(
        method for method, key in notifications.LIST_CHANGED.items() if filter_.get(key)
    )
    return notifications.Interest(
        lists=lists, uris=frozenset(filter_.get("resourceSubscriptions", ()))
    )


async def listen(req: RpcRequest) -> Reply | StreamReply:
    era, rid = req.era, req.rid
    if not conf.get("SUBSCRIPTIONS"):
        return error(era, rid, METHOD_NOT_FOUND, "Method not found")
    if not req.streamable:
        return error(
            era,
            rid,
            INVALID_REQUEST,
            "subscriptions/listen answers with an event stream: accept text/event-stream",
        )
    requested = req.params.get("notifications")
    filter_ = await honoured(req, requested if isinstance(requested, Mapping) else {})
    if isinstance(filter_, Reply):
        return filter_
    listener = notifications.LocalListener(
        tenant_key=str(req.ctx.tenant_id),
        owner_key=str(req.ctx.user_id),
        interest=_interest(filter_),
        loop=asyncio.get_running_loop(),
        recheck=_recheck_of(req.ctx),
        caller=req.ctx,
    )
    try:
        await sync_to_async(notifications.admit)(listener)
    except notifications.ListenerLimitError:
        refused = error(
            era,
            rid,
            LISTENER_LIMIT,
            "Too many open subscriptions/listen streams for this member; close one first",
            {"maxListeners": int(conf.get("MAX_LISTENERS_PER_MEMBER"))},
        )
        return Reply(429, refused.body, headers=(("Retry-After", str(LIMIT_RETRY_AFTER_SECONDS)),))
    notifications.HUB.get().attach(listener)
    meta = {SUBSCRIPTION_ID_META_KEY: rid}
    server_info = req.catalogue.server_info
    deliverable = _Deliverable(req.surface, listener)
    return StreamReply(_events(listener, deliverable, filter_, meta, rid, era, server_info))


def _recheck_of(ctx: CallContext) -> Any:
    """The poller's re-judgement of this stream's caller (``mcp_tools.call.callers``)."""
    kept = KeptCaller.of(ctx)

    def recheck() -> CallContext:
        try:
            return live_context(
                kept,
                request_id=ctx.request_id,
                protocol_version=ctx.protocol_version,
                client_capabilities=ctx.client_capabilities,
            )
        except AuthenticationFailedError as refused:
            raise notifications.StreamEndedError(unauthenticated_error(refused)) from refused
        except CallerGoneError as gone:
            last = unauthenticated_error(AuthenticationFailedError())
            raise notifications.StreamEndedError(last) from gone

    return recheck


class _Deliverable:
    """Whether a resource change may reach this stream's caller as last re-checked.

    Bounded: the row check reads nothing (the row scope came with the re-check); the URI's
    read runs once per URI for each re-checked caller (verdicts are kept until the poller
    hands over a newer one), so a burst of changes costs one read per URI and re-check.
    """

    def __init__(self, surface: Any, listener: notifications.LocalListener) -> None:
        self.surface = surface
        self.listener = listener
        self._judged: Any = None
        self._verdicts: dict[str, bool] = {}

    async def __call__(self, uri: str, row_key: str) -> bool:
        ctx: CallContext = self.listener.caller
        if ctx is not self._judged:
            self._judged, self._verdicts = ctx, {}
        scope = ctx.row_scope
        if row_key and not scope.is_unrestricted:
            if row_key not in {str(row) for row in scope.row_ids}:
                return False
        if uri not in self._verdicts:
            try:
                verdict = await readable(self.surface, ctx, uri)
            except Exception:  # a bound, the database: not delivered, and asked again next time
                logger.info("readability of %s not established (stream %s)", uri, ctx.request_id)
                return False
            self._verdicts[uri] = verdict
        return self._verdicts[uri]


async def _events(
    listener: notifications.LocalListener,
    deliverable: _Deliverable,
    filter_: dict[str, Any],
    meta: dict[str, Any],
    rid: Any,
    era: Any,
    server_info: Mapping[str, Any],
) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + float(conf.get("LISTEN_MAX_SECONDS"))
    keepalive = float(conf.get("LISTEN_KEEPALIVE_SECONDS"))
    try:
        ack = {"notifications": filter_, "_meta": meta}
        yield sse({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": ack})
        while (remaining := deadline - loop.time()) > 0:
            try:
                method, uri, row_key = await asyncio.wait_for(
                    listener.queue.get(), timeout=min(keepalive, remaining)
                )
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if method == notifications.ENDED:
                # The caller was refused on a re-check: the last message says why, with the
                # error the caller's next request gets; the client does not listen again.
                yield sse({"jsonrpc": "2.0", "id": rid, "error": listener.ended})
                return
            if method == notifications.RESOURCE_UPDATED and not await deliverable(uri, row_key):
                continue
            params: dict[str, Any] = {"_meta": meta}
            if uri:
                params["uri"] = uri
            yield sse({"jsonrpc": "2.0", "method": method, "params": params})
        result = era.envelope({"_meta": meta}, server_info)
        yield sse({"jsonrpc": "2.0", "id": rid, "result": result})
    finally:
        # Ended or closed by the client (Django closes the iterator): the poller deletes the
        # stream's row, so it stops counting against the member's bound.
        notifications.HUB.get().detach(listener)
