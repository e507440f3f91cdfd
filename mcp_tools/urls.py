"""Routes: ``/mcp`` exactly (no trailing slash; clients use it verbatim) and the OAuth probes."""

from django.urls import path, re_path

from mcp_tools.views import mcp_view, oauth_metadata_not_found

urlpatterns = [
    path("mcp", mcp_view, name="mcp"),
    re_path(
        r"^\.well-known/oauth-authorization-server(?:/.*)?$",
        oauth_metadata_not_found,
        name="mcp-oauth-authorization-server",
    ),
    re_path(
        r"^\.well-known/oauth-protected-resource(?:/.*)?$",
        oauth_metadata_not_found,
        name="mcp-oauth-protected-resource",
    ),
]
