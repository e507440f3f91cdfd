from django.contrib import admin

from tenancy.models import AccessToken, Membership


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin[Membership]):
    list_display = ("user", "tenant", "roles", "credential_epoch", "disabled_at")
    list_filter = ("tenant",)
    search_fields = ("user__email",)
    readonly_fields = ("credential_epoch",)


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin[AccessToken]):
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
