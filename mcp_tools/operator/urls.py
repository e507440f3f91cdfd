"""Routes of the operator REST views (``mcp_tools.operator.api``); include under your API
prefix, e.g. ``path("api/v1/mcp/", include("mcp_tools.operator.urls"))``."""

from django.urls import path

from mcp_tools.operator.api import CallAuditListApi, TenantSwitchesApi

urlpatterns = [
    path("audit/", CallAuditListApi.as_view(), name="mcp-audit-list"),
    path("switches/", TenantSwitchesApi.as_view(), name="mcp-tenant-switches"),
]
