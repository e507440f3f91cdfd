from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("mcp_tools.urls")),  # POST /mcp
    path("api/v1/", include("tenancy.urls")),  # login, logout, me, personal access tokens
]
