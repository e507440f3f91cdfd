"""Registry metadata: the MCP Registry's ``server.json`` and the public server card.

Both describe the one remote, ``/mcp`` over Streamable HTTP, and nothing a caller could not
learn without credentials: no tenant, no member, no tool list (a card "does not enumerate
primitives": clients list them once connected, and what they see depends on who they are).

- ``server_json(url=…)``: the document ``manage.py mcp_server_json`` writes, schema
  ``SERVER_JSON_SCHEMA`` (2025-12-11). A URL holding ``{variables}`` — a deployment per
  tenant at ``https://{tenant}.example.com/mcp`` — declares each as a remote variable.
- ``server_card_view``: the card (draft SEP-2127, which supersedes SEP-1649) at the draft's
  reserved location ``<streamable-http-url>/server-card`` (``/mcp/server-card``) and at
  SEP-1649's well-known path ``/.well-known/mcp/server-card.json``. Public: any bearer sent
  along is not read, so a revoked one cannot turn it into a 401.

The toolkit's own ``/mcp`` carries no tenant: the bearer decides it. So a single deployment's
remote has no tenant variable; a project that serves each tenant on its own host sets
``MCP_TOOLS_PUBLIC_URL = "https://{tenant}.example.com/mcp"``.
"""

from __future__ import annotations

import re
from typing import Any, Final

from django.apps import apps
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe
from mcp_types.version import SUPPORTED_PROTOCOL_VERSIONS

from mcp_tools import conf
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy import conf as tenancy_conf
from tenancy import handles_own_transactions, ignores_ambient_credentials

SERVER_JSON_SCHEMA: Final = (
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
)
SERVER_CARD_SCHEMA: Final = (
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
)
SERVER_CARD_MEDIA_TYPE: Final = "application/mcp-server-card+json"
MAX_DESCRIPTION: Final = 100
_VARIABLE = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")


def registry_name(default_namespace: str = "local") -> str:
    """``MCP_TOOLS_REGISTRY_NAME``, else ``<default_namespace>/<server name>``."""
    configured = conf.get("REGISTRY_NAME")
    if configured:
        return str(configured)
    name, _ = conf.server_info()
    return f"{default_namespace}/{re.sub(r'[^a-zA-Z0-9._-]', '-', name)}"


def description() -> str:
    """``MCP_TOOLS_SERVER_DESCRIPTION``, else one naming the server (at most 100 characters)."""
    text = (
        conf.get("SERVER_DESCRIPTION") or f"{conf.server_info()[0]}: MCP tools over Streamable HTTP"
    )
    return str(text)[:MAX_DESCRIPTION]


def remote(url: str) -> dict[str, Any]:
    """The Streamable HTTP remote at ``url``: its variables and the credential it needs."""
    entry: dict[str, Any] = {"type": "streamable-http", "url": url}
    variables = {name: _variable(name) for name in _VARIABLE.findall(url)}
    if variables:
        entry["variables"] = variables
    if not apps.is_installed("tenancy.oauth"):
        # Without OAuth sign-in a client must be given a token; with it, the client finds the
        # authorization server from the 401 (RFC 9728) and needs nothing here.
        entry["headers"] = [
            {
                "name": "Authorization",
                "description": "A personal access token of your membership, as 'Bearer <token>'.",
                "isRequired": True,
                "isSecret": True,
                "value": "Bearer {token}",
                "variables": {
                    "token": {
                        "description": "Your personal access token.",
                        "isRequired": True,
                        "isSecret": True,
                    }
                },
            }
        ]
    return entry


def _variable(name: str) -> dict[str, Any]:
    if name == "tenant":
        noun = str(tenancy_conf.get("TENANT_NOUN"))
        return {"description": f"Your {noun}'s code.", "isRequired": True}
    return {"description": f"The deployment's {name}.", "isRequired": True}


def _identity() -> dict[str, Any]:
    _, version = conf.server_info()
    document: dict[str, Any] = {"name": registry_name(), "version": version}
    title = conf.get("SERVER_TITLE")
    if title:
        document["title"] = str(title)[:MAX_DESCRIPTION]
    document["description"] = description()
    return document


def server_json(*, url: str, name: str | None = None, version: str | None = None) -> dict[str, Any]:
    """The ``server.json`` of this server for the MCP Registry, its remote at ``url``."""
    document = {"$schema": SERVER_JSON_SCHEMA, **_identity(), "remotes": [remote(url)]}
    if name:
        document["name"] = name
    if version:
        document["version"] = version
    return document


def server_card(*, url: str) -> dict[str, Any]:
    """The server card: identity and the one remote, with the protocol versions it serves."""
    entry = remote(url)
    entry["supportedProtocolVersions"] = list(SUPPORTED_PROTOCOL_VERSIONS)
    return {"$schema": SERVER_CARD_SCHEMA, **_identity(), "remotes": [entry]}


def public_url(request: HttpRequest) -> str:
    """``MCP_TOOLS_PUBLIC_URL``, else ``/mcp`` on the host the request came to."""
    configured = conf.get("PUBLIC_URL")
    return str(configured) if configured else request.build_absolute_uri("/mcp")


@login_not_required
@handles_own_transactions
@csrf_exempt
@ignores_ambient_credentials
@require_safe
def server_card_view(request: HttpRequest) -> HttpResponse:
    """``GET`` the server card: public, the same for every caller."""
    response = HttpResponse(
        _jsonrpc.dumps(server_card(url=public_url(request))),
        content_type=SERVER_CARD_MEDIA_TYPE,
    )
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "public, max-age=3600"
    return response
