from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from tenancy.models import AccessToken, Membership

# ModelAdmin is generic only in the type stubs: subscripting it at runtime needs
# django_stubs_ext.monkeypatch(), which the toolkit never asks of a project.
if TYPE_CHECKING:
    MembershipAdminBase = admin.ModelAdmin[Membership]
    AccessTokenAdminBase = admin.ModelAdmin[AccessToken]
else:
    MembershipAdminBase = AccessTokenAdminBase = admin.ModelAdmin


@admin.register(Membership)
class MembershipAdmin(MembershipAdminBase):
    list_display = ("user", "tenant", "roles", "credential_epoch", "disabled_at")
    list_filter = ("tenant",)
    search_fields = ("user__email",)
    readonly_fields = ("credential_epoch",)


@admin.register(AccessToken)
class AccessTokenAdmin(AccessTokenAdminBase):
    list_display = (
        "name",
        "prefix",
        "kind",
        "membership",
        "created_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("kind",)
    readonly_fields = ("digest", "prefix", "credential_epoch", "last_used_at")
