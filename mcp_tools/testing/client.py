"""Test ``/mcp`` in-process: ``MCPClient`` and the helpers every project should pin.

Mirrors ``rest_framework.test``: a project's pytest suite imports ``MCPClient`` and calls its
tools through the real ``/mcp`` view, the project's middleware stack and ``CallContext``,
with no server and no network (Django's test ``Client``, i.e. the WSGI handler in-process)::

    from mcp_tools.testing.client import MCPClient

    client = MCPClient(user=alice, tenant=store)  # acts as alice's membership in store
    result = client.call_tool("shop_add_product", {"name": "Tea", "price": "4.50",
                                                   "idempotencyKey": "k-1"})
    assert result.structured["replayed"] is False

Acting as a member mints no token: the client carries a *forced credential*, an object put in
the request's WSGI environ next to a random bearer. A server builds the environ from the wire,
where a header can only ever be a string under an ``HTTP_`` name, so no request from outside
the process can carry one (``tests/mcp_tools/test_test_client.py`` pins it). ``mint_token=True``
issues a real personal access token instead; ``MCPClient(token=…)`` sends a bearer you have.

Tools run in worker threads with their own database connections: data a test creates must be
committed for them to see it (``pytest.mark.django_db(transaction=True)``; the plugin's
fixtures ask for ``transactional_db``).
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from django.conf import settings
from django.http import HttpRequest
from django.test import Client

from tenancy.exceptions import AuthenticationFailedError
from tenancy.members import memberships, with_user_and_tenant
from tenancy.tokens import ensure_live, issue_token
from tenancy.tokens.credentials import Credential, register_bearer_verifier

__all__ = [
    "ERAS",
    "HANDSHAKE",
    "MODERN",
    "MCPClient",
    "MCPProtocolError",
    "ToolResult",
    "assert_replays_once",
    "assert_tenant_isolated",
    "assert_tool_invisible",
]

HANDSHAKE: Final = "2025-11-25"
MODERN: Final = "2026-07-28"
ERAS: Final = (HANDSHAKE, MODERN)

# The environ key of a forced credential. Not an ``HTTP_`` name: no header becomes it.
FORCED_CREDENTIAL: Final = "mcp_tools.testing.client.credential"
_FORCED_PREFIX: Final = "mcp-test-"

# The header naming the target of a 2026-07-28 request (SEP-2243), by method.
_NAME_PARAM: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass(frozen=True)
class ForcedCredential:
    """A membership an ``MCPClient`` acts as, with the bearer secret it sends along."""

    membership_pk: Any
    secret: str = field(repr=False)


def _verify_forced(raw: str, request: HttpRequest) -> Credential | None:
    """The bearer verifier of forced credentials (registered on import of this module).

    ``None`` ("not mine") for every request that does not carry a ``ForcedCredential`` object
    in its environ, which is every request from outside the process.
    """
    forced = request.META.get(FORCED_CREDENTIAL)
    if not isinstance(forced, ForcedCredential):
        return None
    if not hmac.compare_digest(forced.secret, raw):
        raise AuthenticationFailedError()
    membership = with_user_and_tenant(memberships()).get(pk=forced.membership_pk)
    # The same liveness rule as every token: disabled member or suspended tenant → 401.
    ensure_live(membership, credential_epoch=membership.credential_epoch)
    return Credential(membership=membership)


register_bearer_verifier(_verify_forced)


class MCPProtocolError(Exception):
    """A JSON-RPC error answer (not a tool error): ``code``, ``message``, ``data``, ``status``."""

    def __init__(self, code: int, message: str, data: Any = None, *, status: int = 200) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data
        self.status = status


@dataclass(frozen=True)
class ToolResult:
    """A ``tools/call`` result as a client receives it (``raw``), with the parts tests read."""

    raw: dict[str, Any]

    @property
    def is_error(self) -> bool:
        return bool(self.raw.get("isError"))

    @property
    def structured(self) -> Any:
        """``structuredContent`` (``None`` on an error result or a text tool)."""
        return self.raw.get("structuredContent")

    @property
    def text(self) -> str:
        """The text blocks of ``content``, joined."""
        return "".join(
            block.get("text", "")
            for block in self.raw.get("content", [])
            if block.get("type") == "text"
        )

    @property
    def error(self) -> dict[str, Any] | None:
        """``{"code", "message", "data"?}`` of an ``isError`` result (its one text block)."""
        if not self.is_error:
            return None
        try:
            error = json.loads(self.text)["error"]
        except (ValueError, KeyError, TypeError):
            return {"code": None, "message": self.text}
        return dict(error)

    @property
    def error_code(self) -> str | None:
        error = self.error
        return None if error is None else error.get("code")

    @property
    def replayed(self) -> bool | None:
        """A write tool's ``replayed`` flag; ``None`` for a read or an error."""
        structured = self.structured
        if isinstance(structured, Mapping) and "replayed" in structured:
            return bool(structured["replayed"])
        return None


class MCPClient:
    """A client of ``/mcp`` that runs each request through the project in-process.

    Exactly one identity: ``user`` and ``tenant`` (act as that member; no token in the
    database unless ``mint_token``), ``membership``, or ``token`` (a raw bearer), or none
    (an anonymous client: every request is refused with -32014).

    Raises:
        ValueError: ``user`` is not a member of ``tenant``, or identities were mixed.
    """

    def __init__(
        self,
        *,
        user: Any = None,
        tenant: Any = None,
        membership: Any = None,
        token: str | None = None,
        mint_token: bool = False,
        era: str = MODERN,
        path: str = "/mcp",
        client_info: Mapping[str, str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        if era not in ERAS:
            raise ValueError(f"era must be one of {ERAS}, not {era!r}")
        if token is not None and (user is not None or tenant is not None or membership):
            raise ValueError("MCPClient: pass token=… or a member, not both")
        if (user is None) != (tenant is None):
            raise ValueError("MCPClient: user=… and tenant=… go together")
        if user is not None:
            if membership is not None:
                raise ValueError("MCPClient: pass membership=… or user=… and tenant=…")
            membership = memberships(user=user, tenant=tenant).first()
            if membership is None:
                raise ValueError(f"{user!r} is not a member of {tenant!r}")
        self.era = era
        self.path = path
        self.membership = membership
        self.client_info = dict(client_info or {"name": "mcp_tools.testing.client", "version": "0"})
        self.capabilities = dict(capabilities or {})
        self._client = Client(HTTP_HOST=_allowed_host())
        self._environ: dict[str, Any] = {}
        self._next_id = 0
        self.bearer: str | None = token
        if membership is not None and mint_token:
            _, self.bearer = issue_token(membership=membership, name="mcp_tools.testing.client")
        elif membership is not None:
            self.bearer = _FORCED_PREFIX + secrets.token_urlsafe(24)
            self._environ[FORCED_CREDENTIAL] = ForcedCredential(membership.pk, self.bearer)

    # --- the methods a test calls ---------------------------------------------------------

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool this caller sees (each page, in order)."""
        return self._pages("tools/list", "tools")

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> ToolResult:
        """Call ``name``; ``idempotency_key`` is added to the arguments as ``idempotencyKey``.

        Raises:
            MCPProtocolError: a JSON-RPC error (an unknown or hidden tool is -32602).
        """
        args = dict(arguments or {})
        if idempotency_key is not None:
            args["idempotencyKey"] = idempotency_key
        return ToolResult(self.request("tools/call", {"name": name, "arguments": args}))

    def list_resources(self) -> list[dict[str, Any]]:
        return self._pages("resources/list", "resources")

    def read_resource(self, uri: str) -> dict[str, Any]:
        """The ``resources/read`` result (``contents``).

        Raises:
            MCPProtocolError: e.g. -32602 with ``data.uri`` for a resource not found.
        """
        return self.request("resources/read", {"uri": uri})

    def list_prompts(self) -> list[dict[str, Any]]:
        return self._pages("prompts/list", "prompts")

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The ``prompts/get`` result (``messages``).

        Raises:
            MCPProtocolError: e.g. -32602 for an unknown prompt or invalid arguments.
        """
        return self.request("prompts/get", {"name": name, "arguments": dict(arguments or {})})

    # --- the wire ---------------------------------------------------------------------------

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send one JSON-RPC request in this client's era; its ``result``.

        Raises:
            MCPProtocolError: the answer was a JSON-RPC error.
        """
        status, answer = self.post(self.message(method, params), method=method)
        if "error" in answer:
            error = answer["error"]
            raise MCPProtocolError(
                int(error["code"]), str(error.get("message", "")), error.get("data"), status=status
            )
        result: dict[str, Any] = answer["result"]
        return result

    def message(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC request body this client sends for ``method``."""
        self._next_id += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        params = dict(params or {})
        if self.era == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": self.client_info,
                **params.get("_meta", {}),
            }
        if params:
            body["params"] = params
        return body

    def post(self, body: Mapping[str, Any], *, method: str | None = None) -> tuple[int, Any]:
        """POST ``body`` to ``/mcp`` with this client's headers; ``(status, parsed JSON)``."""
        headers = {"Accept": "application/json", "MCP-Protocol-Version": self.era}
        if self.bearer:
            headers["Authorization"] = f"Bearer {self.bearer}"
        if self.era == MODERN and method is not None:
            headers["Mcp-Method"] = method
            target = (body.get("params") or {}).get(_NAME_PARAM.get(method, ""))
            if isinstance(target, str):
                headers["Mcp-Name"] = target
        response = self._client.generic(
            "POST",
            self.path,
            json.dumps(body),
            content_type="application/json",
            headers=headers,
            **self._environ,
        )
        content = response.content
        return response.status_code, json.loads(content) if content else None

    def _pages(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = self.request(method, {"cursor": cursor} if cursor else None)
            items.extend(result.get(key, []))
            cursor = result.get("nextCursor")
            if not cursor:
                return items


def _allowed_host() -> str:
    """A host ``ALLOWED_HOSTS`` admits: pytest-django adds ``testserver``; a management
    command (``mcp_call``) runs under the project's own list."""
    hosts = [str(host) for host in settings.ALLOWED_HOSTS]
    if not hosts or "testserver" in hosts or "*" in hosts:
        return "testserver" if "testserver" in hosts or "*" in hosts else "localhost"
    return hosts[0].lstrip(".") or "localhost"


# --- what every project should pin ---------------------------------------------------------


def assert_tool_invisible(client: MCPClient, name: str) -> None:
    """``name`` is neither listed for ``client`` nor callable by it (-32602, as if unknown)."""
    listed = [tool["name"] for tool in client.list_tools()]
    assert name not in listed, f"{name} is listed for this caller: {listed}"
    try:
        result = client.call_tool(name, {})
    except MCPProtocolError as error:
        assert error.code == -32602, f"{name}: expected -32602 (unknown tool), got {error}"
    else:
        raise AssertionError(f"{name} answered this caller instead of -32602: {result.raw}")


def assert_tenant_isolated(
    client: MCPClient,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    foreign: Iterable[Any],
) -> ToolResult:
    """Calling ``name`` as ``client`` shows none of ``foreign`` (another tenant's row ids,
    names, …) anywhere in what the model reads: structured content or text."""
    result = client.call_tool(name, arguments)
    assert not result.is_error, f"{name} failed: {result.raw}"
    seen = _values(result.raw)
    leaked = [value for value in foreign if value in seen]
    assert not leaked, f"{name} shows another tenant's rows: {leaked}"
    return result


def assert_replays_once(
    client: MCPClient,
    name: str,
    arguments: Mapping[str, Any],
    *,
    idempotency_key: str = "mcp-tools-test-replay",
) -> ToolResult:
    """Calling the write tool ``name`` twice with one ``idempotencyKey`` runs it once: the
    first result is ``replayed: false``, the second is the stored one, ``replayed: true``."""
    first = client.call_tool(name, arguments, idempotency_key=idempotency_key)
    assert not first.is_error, f"{name} failed: {first.raw}"
    assert first.replayed is False, f"{name}: first call not executed: {first.raw}"
    second = client.call_tool(name, arguments, idempotency_key=idempotency_key)
    assert not second.is_error, f"{name}: the retry was not replayed: {second.raw}"
    assert second.replayed is True, f"{name}: the retry ran again: {second.raw}"
    assert _without_replayed(second.structured) == _without_replayed(first.structured), (
        f"{name}: the replay differs from the first result"
    )
    return second


def _without_replayed(structured: Any) -> Any:
    return {k: v for k, v in structured.items() if k != "replayed"}


def _values(node: Any) -> set[Any]:
    """Every scalar in ``node``, and every JSON value held in a text block."""
    found: set[Any] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            found.add(item)
            if isinstance(item, str) and item[:1] in "[{":
                try:
                    stack.append(json.loads(item))
                except ValueError:
                    pass
    return found
