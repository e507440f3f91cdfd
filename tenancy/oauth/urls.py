"""``path("", include("tenancy.oauth.urls"))`` at the root, before ``mcp_tools.urls``.

The namespace is django-oauth-toolkit's own (``oauth2_provider``): its metadata view reverses
``oauth2_provider:authorize``, ``…:token`` and friends to publish the endpoints, and derives
the RFC 9207 ``iss`` from ``…:oauth-server-metadata``. The issuer is the origin, so the RFC 8414
document is at ``/.well-known/oauth-authorization-server``; the RFC 9728 document of the MCP
endpoint is at ``/.well-known/oauth-protected-resource/mcp`` (and at the root form).
"""

from django.urls import path

from tenancy.oauth import views

app_name = "oauth2_provider"

urlpatterns = [
    path(
        ".well-known/oauth-authorization-server",
        views.AuthorizationServerMetadataView.as_view(),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        views.ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        views.ProtectedResourceMetadataView.as_view(),
        name="oauth-resource-metadata-path",
    ),
    path("oauth/authorize/", views.ConsentView.as_view(), name="authorize"),
    path("oauth/token/", views.TokenView.as_view(), name="token"),
    path("oauth/revoke/", views.RevokeTokenView.as_view(), name="revoke-token"),
    path("oauth/register/", views.RegistrationView.as_view(), name="dcr-register"),
    path(
        "oauth/register/<str:client_id>/",
        views.RegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    path("oauth/sign-in/", views.SignInView.as_view(), name="sign-in"),
    path("oauth/sign-out/", views.sign_out, name="sign-out"),
    path("oauth/clients/", views.ClientsView.as_view(), name="clients"),
    path(
        "oauth/clients/<int:authorization_id>/revoke/",
        views.revoke_client,
        name="client-revoke",
    ),
]
