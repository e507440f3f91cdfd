"""``CallContext``: the one object a tool receives about who is calling.

It is built only by ``CallContext.from_request`` and refuses to exist unless the identity bridge
did its job on *this* request. There is no half-built instance and no ``is_resolved`` on it: a
``CallContext`` that exists is valid.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from django.http import HttpRequest

from mcp_tools.call.exchange import Elicited, Exchange, M
from mcp_tools.exceptions import CallContextRefusedError
from tenancy import ActorContext, Role, RowScope, TenantContext

# The request the MCP view is serving right now. Set and reset by the view only; a context
# built anywhere else (a background task, a management command, another request) is refused.
_request_in_flight: contextvars.ContextVar[HttpRequest | None] = contextvars.ContextVar(
    "mcp_tools_request_in_flight", default=None
)
_FACTORY = object()

REASON_NO_REQUEST = "no HTTP request is in flight"
REASON_FOREIGN_TENANT = "the tenant was resolved outside the HTTP request's scope"
REASON_TENANT_UNRESOLVED = "the tenant is unresolved"
REASON_ACTOR_UNRESOLVED = "the actor is unresolved"
REASON_SYSTEM_ACTOR = "the actor is a system actor"
REASON_SCOPE_UNRESOLVED = "the row scope is unresolved"
REASON_NOT_FROM_FACTORY = "it must be built by CallContext.from_request"


@contextmanager
def request_in_flight(request: HttpRequest) -> Iterator[None]:
    """Mark ``request`` as the one being served for the duration of the block."""
    token = _request_in_flight.set(request)
    try:
        yield
    finally:
        _request_in_flight.reset(token)


@contextmanager
def serving(request: HttpRequest, **context: Any) -> Iterator[CallContext]:
    """Mark ``request`` as in flight and yield its ``CallContext`` (``from_request``'s keyword
    arguments) for the duration of the block.

    Raises:
        CallContextRefusedError: before the block runs, as ``CallContext.from_request``.
    """
    with request_in_flight(request):
        yield CallContext.from_request(request, **context)


@dataclass(frozen=True)
class CallContext:
    """Who is calling, resolved once by ``tenancy`` for this request.

    Attributes:
        tenant, actor, row_scope: the request's own (resolved) identity objects.
        request_id: correlates a tool call with the server log.
        protocol_version: the MCP revision the client speaks on this request.
        client_capabilities: what the client declared on this request (2026-07-28 ``_meta``);
            ``None`` in the handshake era, whose ``initialize`` a stateless server never keeps.
    """

    tenant: TenantContext
    actor: ActorContext
    row_scope: RowScope
    request_id: str
    protocol_version: str
    client_capabilities: Mapping[str, Any] | None = None
    _factory: object = field(default=None, repr=False, compare=False)
    # The request's exchange with its client (progress, logs, input requests, tasks).
    _exchange: Exchange = field(default_factory=Exchange, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._factory is not _FACTORY:
            raise CallContextRefusedError(REASON_NOT_FROM_FACTORY)

    @classmethod
    def from_request(
        cls,
        request: HttpRequest | None,
        *,
        tenant: Any,
        request_id: str,
        protocol_version: str,
        client_capabilities: Mapping[str, Any] | None = None,
        exchange: Exchange | None = None,
    ) -> CallContext:
        """Build the context for ``request``; ``tenant`` must be that request's own object.

        Raises:
            CallContextRefusedError: with a distinct ``reason`` per failed precondition, in
                this order: no request in flight; the tenant is not the request's object
                (identity, not equality); tenant unresolved; actor unresolved; system actor;
                row scope unresolved (``is_resolved``, never ``is_unrestricted``).
        """
        if request is None or _request_in_flight.get() is not request:
            raise CallContextRefusedError(REASON_NO_REQUEST)
        # Identity, not equality: an equal tenant built elsewhere (another scope, a cache,
        # a later per-session transport) is exactly the object this check exists to refuse.
        if tenant is not getattr(request, "tenant", None) or not isinstance(tenant, TenantContext):
            raise CallContextRefusedError(REASON_FOREIGN_TENANT)
        if not tenant.is_resolved:
            raise CallContextRefusedError(REASON_TENANT_UNRESOLVED)
        actor = getattr(request, "actor", None)
        if not isinstance(actor, ActorContext) or not actor.is_resolved:
            raise CallContextRefusedError(REASON_ACTOR_UNRESOLVED)
        # A system actor has no user and tenant-wide row reach. Never over the network.
        if actor.is_system or actor.user_id is None:
            raise CallContextRefusedError(REASON_SYSTEM_ACTOR)
        scope = getattr(request, "row_scope", None)
        # ``is_unrestricted`` defaults to True while unresolved; reading it here would look
        # like safety and leave the hole open.
        if not isinstance(scope, RowScope) or not scope.is_resolved:
            raise CallContextRefusedError(REASON_SCOPE_UNRESOLVED)
        return cls(
            tenant=tenant,
            actor=actor,
            row_scope=scope,
            request_id=request_id,
            protocol_version=protocol_version,
            client_capabilities=(
                None if client_capabilities is None else MappingProxyType(dict(client_capabilities))
            ),
            _factory=_FACTORY,
            _exchange=exchange or Exchange(),
        )

    def _with_exchange(self, exchange: Exchange) -> CallContext:
        """The same identity with another exchange (a task's run, a factory's build)."""
        return replace(self, _exchange=exchange)

    @property
    def tenant_id(self) -> Any:
        return self.tenant.id

    @property
    def user_id(self) -> int:
        assert self.actor.user_id is not None  # guaranteed by the factory
        return self.actor.user_id

    @property
    def email(self) -> str:
        return self.actor.email

    @property
    def role(self) -> Role:
        return self.actor.role

    @property
    def is_row_restricted(self) -> bool:
        return not self.row_scope.is_unrestricted

    @property
    def row_ids(self) -> frozenset[Any]:
        """The rows a restricted actor may touch (empty when unrestricted)."""
        return self.row_scope.row_ids

    # --- the exchange with the client (see mcp_tools.call.exchange) ---------------------------

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress: a ``notifications/progress`` on this request's response stream when
        the client sent a ``progressToken`` and accepts ``text/event-stream`` (dropped
        otherwise); a task records it as its status message. A checkpoint: raises
        ``CallCancelled`` (a ``BaseException``; ``TaskCancelled`` in a task) when the call was
        cancelled."""
        self._exchange.report_progress(progress, total, message)

    def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send a ``notifications/message`` at ``level`` (``debug`` … ``emergency``) when the
        client asked for log messages on this request (dropped otherwise)."""
        self._exchange.log(level, data, logger)

    def client_supports(self, capability: str) -> bool:
        """The client declared ``capability`` (``elicitation``, ``sampling``, ``roots`` or an
        extension id) on this request. Always False in the handshake era."""
        return self._exchange.client_supports(capability)

    def elicit(
        self, key: str, *, message: str, schema: type[M], require_state: bool = True
    ) -> Elicited[M]:
        """Ask the user to fill ``schema`` (flat primitives). The first time, the call ends
        with an ``InputRequiredResult``; the client's answer comes back with the signed request
        state and this returns it. ``require_state=False`` also accepts an answer sent without
        a request state (only for questions whose answer authorizes nothing)."""
        return self._exchange.elicit(
            key, message=message, schema=schema, require_state=require_state
        )

    def sample(
        self,
        key: str,
        *,
        messages: list[dict[str, Any]],
        max_tokens: int,
        system_prompt: str | None = None,
        require_state: bool = True,
    ) -> dict[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns its result object."""
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        request = {"method": "sampling/createMessage", "params": params}
        answer: dict[str, Any] = self._exchange.request_inputs(
            {key: request}, require_state=require_state
        )[key]
        return answer

    def list_roots(self, key: str, *, require_state: bool = True) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``)."""
        request: dict[str, Any] = {"method": "roots/list", "params": {}}
        answer = self._exchange.request_inputs({key: request}, require_state=require_state)
        return list(answer[key]["roots"])

    def request_inputs(
        self, requests: dict[str, dict[str, Any]], *, require_state: bool = True
    ) -> dict[str, Any]:
        """Several input requests in one round (``{key: {"method", "params"}}``)."""
        return self._exchange.request_inputs(requests, require_state=require_state)

    def continue_as_task(self) -> None:
        """Hand the rest of this call to a task when the client negotiated the tasks extension
        (the tool is declared ``task_support``); otherwise a no-op and the call goes on
        synchronously. Everything before this line runs again in the task: ask, then act."""
        self._exchange.continue_as_task()

    @property
    def cancelled(self) -> bool:
        """The call was cancelled: its client closed the response stream (or, handshake era,
        sent ``notifications/cancelled`` for it), or the task running it was cancelled or ran
        past its deadline. Nobody will read the answer; stop and let the caller know by
        ``check_cancelled()``."""
        return self._exchange.cancelled

    def check_cancelled(self) -> None:
        """A checkpoint: raise ``CallCancelled`` if the call was cancelled (``TaskCancelled``,
        its subclass, if the task running it was). Both are ``BaseException``s, so a tool's
        ``except Exception`` lets them through; a write rolls back and releases its claim."""
        self._exchange.check_cancelled()
