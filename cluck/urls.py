"""URL configuration. Route names are interfaces (MCP parity checks key on them)."""

from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from cluck.schema_view import CachedSchemaView

urlpatterns = [
    # OAuth 2.1 for MCP clients: discovery, sign-in, consent, token, registration. Before
    # mcp_tools.urls, whose JSON 404s answer the discovery paths nothing here serves.
    path("", include("tenancy.oauth.urls")),
    path("", include("mcp_tools.urls")),  # POST /mcp (exactly; no slash) + OAuth probe 404s
    # /healthz, /readyz, and /metrics (a 404 unless MCP_TOOLS_METRICS_* guard it): operating.md
    path("", include("mcp_tools.observability.urls")),
    path("", include("a2a_tools.urls")),  # POST /a2a + /.well-known/agent-card.json
    path("admin/", admin.site.urls),
    path("api/v1/", include("tenancy.urls")),
    path("api/v1/", include("cluck.api.urls")),
    # A tenant admin's MCP audit and switches (docs/operating.md)
    path("api/v1/mcp/", include("mcp_tools.operator.urls")),
    # Generated once per process, not per request (anyone may ask): cluck/schema_view.py
    path("api/schema/", CachedSchemaView.as_view(), name="api-schema"),
    # Swagger UI's initialiser as a file of its own (?script), not inline: the farm's CSP has no
    # 'unsafe-inline' scripts.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema"),
        name="api-docs",
    ),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
]

urlpatterns += [path("", include(module)) for module in settings.CLUCK_EXTRA_URLCONFS]

# Static files (the API docs' Swagger UI and Redoc, the admin's CSS) straight from the apps'
# static folders, so ./scripts/serve needs no collectstatic and no CDN. A deployment behind
# a web server or WhiteNoise turns this off (CLUCK_SERVE_STATIC=0) and serves STATIC_ROOT.
if settings.CLUCK_SERVE_STATIC:
    urlpatterns += [
        re_path(
            rf"^{settings.STATIC_URL.lstrip('/')}(?P<path>.*)$",
            serve_static,
            {"insecure": True},
        )
    ]

# Error pages in each endpoint's shape: JSON-RPC on /mcp, problem JSON under /api/.
handler400 = "cluck.api.errors.bad_request_view"
handler403 = "cluck.api.errors.permission_denied_view"
handler404 = "cluck.api.errors.not_found_view"
handler500 = "cluck.api.errors.server_error_view"
