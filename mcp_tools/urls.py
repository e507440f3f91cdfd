"""Routes: ``/mcp`` exactly (no trailing slash; clients use it verbatim), its server card and
the OAuth probes.

Every OAuth path an MCP client may try answers a JSON 404 here (see ``oauth_not_offered``)
instead of the project's HTML one. A project that offers OAuth (``tenancy.oauth``) includes its
routes first, so the documents it serves win and only the rest land here.
"""

from django.urls import path, re_path

from mcp_tools.serving.server_card import server_card_view
from mcp_tools.serving.views import mcp_view, oauth_not_offered, protected_resource_metadata

urlpatterns = [
    path("mcp", mcp_view, name="mcp"),
    # The server card (public, tenant-free): the draft's reserved location beside the
    # Streamable HTTP URL (SEP-2127), and SEP-1649's well-known path that crawlers probe.
    path("mcp/server-card", server_card_view, name="mcp-server-card"),
    path(".well-known/mcp/server-card.json", server_card_view, name="mcp-server-card-well-known"),
    # RFC 8414 (with the path of /mcp inserted after the well-known prefix, or not).
    re_path(
        r"^\.well-known/oauth-authorization-server(?:/.*)?$",
        oauth_not_offered,
        name="mcp-oauth-authorization-server",
    ),
    # RFC 9728: the external issuer's (TENANCY_EXTERNAL_JWT) when one is configured.
    re_path(
        r"^\.well-known/oauth-protected-resource(?:/.*)?$",
        protected_resource_metadata,
        name="mcp-oauth-protected-resource",
    ),
    # OpenID Connect discovery: path inserted (/.well-known/openid-configuration/mcp) and
    # appended (/mcp/.well-known/openid-configuration).
    re_path(
        r"^(?:mcp/)?\.well-known/openid-configuration(?:/.*)?$",
        oauth_not_offered,
        name="mcp-openid-configuration",
    ),
    # The default endpoint a client falls back to for dynamic client registration (RFC 7591)
    # when no metadata names one.
    path("register", oauth_not_offered, name="mcp-oauth-register"),
]
