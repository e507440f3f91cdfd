"""URL configuration. Route names are interfaces (MCP parity checks key on them)."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

urlpatterns = [
    path("", include("mcp_tools.urls")),  # POST /mcp (exactly; no slash) + OAuth probe 404s
    path("", include("a2a_tools.urls")),  # POST /a2a + /.well-known/agent-card.json
    path("admin/", admin.site.urls),
    path("api/v1/", include("tenancy.urls")),
    path("api/v1/", include("cluck.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]

urlpatterns += [path("", include(module)) for module in settings.CLUCK_EXTRA_URLCONFS]

handler404 = "cluck.api.errors.not_found_view"
