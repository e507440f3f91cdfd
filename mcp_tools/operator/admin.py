"""The stored call audit in the admin: read-only, filterable by tenant, actor, tool, outcome."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponseBadRequest

from mcp_tools.models import CallAudit, TenantSwitches
from mcp_tools.rpc.jsonrpc import unstorable_strings

# ModelAdmin is generic only in the type stubs (see tenancy/admin.py).
if TYPE_CHECKING:
    CallAuditAdminBase = admin.ModelAdmin[CallAudit]
    TenantSwitchesAdminBase = admin.ModelAdmin[TenantSwitches]
else:
    CallAuditAdminBase = TenantSwitchesAdminBase = admin.ModelAdmin


@admin.register(CallAudit)
class CallAuditAdmin(CallAuditAdminBase):
    """An audit is evidence: nobody edits, adds or deletes a row here (the purge command
    applies the retention)."""

    list_display = (
        "at",
        "tenant_key",
        "actor_id",
        "tool",
        "protocol",
        "outcome",
        "error_code",
        "replayed",
        "duration_ms",
    )
    list_filter = ("outcome", "protocol", "replayed", "tool", "tenant_key", "actor_id")
    search_fields = ("tenant_key", "actor_id", "tool", "request_id", "error_code")
    date_hierarchy = "at"
    show_full_result_count = False

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        # A filter or search holding NUL (``?tool=%00``) would reach SQL and fail there: a 500.
        for name, values in request.GET.lists():
            if unstorable_strings([name, *values]):
                return HttpResponseBadRequest(
                    "Bad request: a filter holds NUL or unpaired surrogate characters.",
                    content_type="text/plain",
                )
        return super().changelist_view(request, extra_context)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [field.name for field in CallAudit._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TenantSwitches)
class TenantSwitchesAdmin(TenantSwitchesAdminBase):
    list_display = ("tenant_key", "read_only", "disabled_tools", "updated_at")
    list_filter = ("read_only",)
    search_fields = ("tenant_key",)
