from django.contrib import admin
from django.urls import include, path
from rest_framework.routers import DefaultRouter
from rest_framework_simplejwt.views import TokenObtainPairView, TokenRefreshView

from orgs.views import OrganizationViewSet
from projects.views import ProjectViewSet, home

router = DefaultRouter()
router.register("organizations", OrganizationViewSet, basename="organization")
router.register("projects", ProjectViewSet, basename="project")

urlpatterns = [
    path("", home, name="home"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/token/", TokenObtainPairView.as_view(), name="token_obtain_pair"),
    path("api/token/refresh/", TokenRefreshView.as_view(), name="token_refresh"),
    path("api/", include(router.urls)),
    # Cluck: OAuth sign-in for MCP clients (before mcp_tools.urls), POST /mcp, personal tokens.
    path("", include("tenancy.oauth.urls")),
    path("", include("mcp_tools.urls")),
    path("api/cluck/", include("tenancy.urls")),
]
