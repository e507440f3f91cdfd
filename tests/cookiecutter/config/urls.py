from django.conf import settings
from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

urlpatterns: list[URLPattern | URLResolver] = [
    # Django Admin, use {% url 'admin:index' %}
    # (The repository's type checker reads the farm's settings, which have no ADMIN_URL.)
    path(settings.ADMIN_URL, admin.site.urls),  # type: ignore[misc]
    # User management
    path("accounts/", include("allauth.urls")),
    # Your stuff: custom urls includes go here
    # Cluck: OAuth sign-in for MCP clients (before mcp_tools.urls), POST /mcp, personal tokens.
    path("", include("tenancy.oauth.urls")),
    path("", include("mcp_tools.urls")),
    path("api/cluck/", include("tenancy.urls")),
]

# API URLS
urlpatterns += [
    # API base url
    path("api/", include("config.api_router")),
    # DRF auth token
    path("api/auth-token/", obtain_auth_token, name="obtain_auth_token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        SpectacularSwaggerView.as_view(url_name="api-schema"),
        name="api-docs",
    ),
]

if "debug_toolbar" in settings.INSTALLED_APPS:
    import debug_toolbar

    urlpatterns = [path("__debug__/", include(debug_toolbar.urls)), *urlpatterns]
