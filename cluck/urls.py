"""URL configuration. Route names are interfaces (MCP parity checks key on them)."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from idempotency import never_replay
from tenancy import api as tenancy_api

auth_patterns = [
    path(
        "auth/login/",
        never_replay("returns a live bearer token")(tenancy_api.LoginApi.as_view()),
        name="auth-login",
    ),
    path(
        "auth/logout/",
        never_replay("a pure side effect: a replay would fake a logout")(
            tenancy_api.LogoutApi.as_view()
        ),
        name="auth-logout",
    ),
    path("me/", tenancy_api.MeApi.as_view(), name="me"),
    path(
        "me/tokens/",
        never_replay("token creation returns the live secret once")(
            tenancy_api.TokenListCreateApi.as_view()
        ),
        name="me-token-list",
    ),
    path("me/tokens/<int:token_id>/", tenancy_api.TokenRevokeApi.as_view(), name="me-token-revoke"),
]

urlpatterns = [
    path("", include("mcp_tools.urls")),  # POST /mcp (exactly; no slash) + OAuth probe 404s
    path("admin/", admin.site.urls),
    path("api/v1/", include(auth_patterns)),
    path("api/v1/", include("cluck.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]

urlpatterns += [path("", include(module)) for module in settings.CLUCK_EXTRA_URLCONFS]

handler404 = "cluck.api.errors.not_found_view"
