"""``RpcRequest``: everything a method needs, read once from the message by its era."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_tools.asking import requeststate
from mcp_tools.call.context import CallContext
from mcp_tools.call.exchange import Exchange
from mcp_tools.catalogue.surfaces import Catalogue, Surface
from mcp_tools.rpc import jsonrpc as _jsonrpc

if TYPE_CHECKING:  # the era is above this layer: only its interface is named here
    from mcp_tools.eras import Era


@dataclass
class RpcRequest:
    """One JSON-RPC request for the caller's surface (built by the router, never by a method).

    ``capabilities``: declared on this request (2026-07-28 ``_meta``), ``None`` where the era
    cannot declare them. ``state_token``/``input_responses``: this round's request state and
    answers (2026-07-28 only). ``task_requested``: the client asked for a task on this request
    (2026-07-28: the extension is declared; 2025-11-25: ``params.task``).
    """

    message: _jsonrpc.Message
    era: Era
    ctx: CallContext
    surface: Surface
    catalogue: Catalogue
    headers: Mapping[str, str]
    exchange: Exchange
    capabilities: Mapping[str, Any] | None = None
    task_requested: bool = False
    state_token: Any = None
    input_responses: dict[str, Any] = field(default_factory=dict)
    streamable: bool = False
    # What a request state of this call is bound to (set by the method when it needs one).
    binding: requeststate.Binding | None = None

    @property
    def params(self) -> dict[str, Any]:
        return self.message.params or {}

    @property
    def rid(self) -> Any:
        return self.message.request_id
