"""``subscriptions/listen`` (2026-07-28, optional: ``MCP_TOOLS_SUBSCRIPTIONS``).

One request opens one SSE stream (the request's own response): first
``notifications/subscriptions/acknowledged`` with the honoured filter, then the change
notifications that filter admits, each tagged with the listen request's id under
``_meta["io.modelcontextprotocol/subscriptionId"]``, until the client goes away or the stream
reaches ``MCP_TOOLS_LISTEN_MAX_SECONDS`` (it then ends with the listen result; the client
listens again, its credential judged again). No replay: a client that re-listens refetches.

Honoured: the three list-change kinds, and of the requested resource URIs those the caller
may read (a resource or template of its surface that its role's policy admits); any other URI
is left out of the acknowledgement and never fires. Changes come from the shared change table
(``mcp_tools.notifications``): another replica's write is heard here, and only the caller's
own tenant's changes reach its stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

from asgiref.sync import sync_to_async
from mcp_types.jsonrpc import INVALID_REQUEST, METHOD_NOT_FOUND

from mcp_tools import conf, notifications
from mcp_tools.codes import LISTENER_LIMIT
from mcp_tools.methods.features import find_resource
from mcp_tools.rpc.replies import Reply, error
from mcp_tools.rpc.request import RpcRequest
from mcp_tools.streaming import StreamReply, sse

SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
# The retry hint of a refusal over the bound: a stream ends within RENEW/STALE bounds anyway.
LIMIT_RETRY_AFTER_SECONDS = 30


def honoured(req: RpcRequest, requested: Mapping[str, Any]) -> dict[str, Any]:
    """The subset of ``requested`` this caller gets: every list kind, readable URIs only."""
    filter_: dict[str, Any] = {}
    for key in notifications.LIST_CHANGED.values():
        if requested.get(key) is True:
            filter_[key] = True
    uris = requested.get("resourceSubscriptions")
    if isinstance(uris, list):
        readable = [
            uri
            for uri in dict.fromkeys(uris)
            if isinstance(uri, str) and find_resource(req.surface, req.ctx, uri) is not None
        ]
        if readable:
            filter_["resourceSubscriptions"] = readable
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
    filter_ = honoured(req, requested if isinstance(requested, Mapping) else {})
    listener = notifications.LocalListener(
        tenant_key=str(req.ctx.tenant_id),
        owner_key=str(req.ctx.user_id),
        interest=_interest(filter_),
        loop=asyncio.get_running_loop(),
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
    notifications.hub.attach(listener)
    meta = {SUBSCRIPTION_ID_META_KEY: rid}
    server_info = req.catalogue.server_info
    return StreamReply(_events(listener, filter_, meta, rid, era, server_info))


async def _events(
    listener: notifications.LocalListener,
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
                method, uri = await asyncio.wait_for(
                    listener.queue.get(), timeout=min(keepalive, remaining)
                )
            except TimeoutError:
                yield b": keep-alive\n\n"
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
        notifications.hub.detach(listener)
