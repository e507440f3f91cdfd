"""Django admin for the farm domain (operators; crosses tenants by design).

Admin uses each model's plain ``all_tenants`` default manager. Ledgers and anything a service
derives (entries, lots, movements, audit) are read-only here: changing them by hand would
bypass the rules and the audit trail that the services keep.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from cluck.caller import Caller
from cluck.models import (
    AuditEvent,
    BirdMovement,
    DailyEntry,
    DailyEntryGrade,
    EggGrade,
    EggLot,
    Farm,
    Flock,
    House,
    InventoryMovement,
    WorkerAssignment,
)
from cluck.services.farms import egg_grades_provision


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Farm)
class FarmAdmin(admin.ModelAdmin[Farm]):
    list_display = (
        "code",
        "name",
        "currency_code",
        "currency_minor_unit",
        "time_zone",
        "is_active",
    )
    list_filter = ("is_active", "currency_code")
    search_fields = ("code", "name")

    def save_model(self, request: HttpRequest, obj: Farm, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            # A farm made here gets the same default grade set as one made by farm_create.
            egg_grades_provision(caller=Caller.system(obj, label="admin:farm_add"))


@admin.register(House)
class HouseAdmin(admin.ModelAdmin[House]):
    list_display = ("name", "farm", "created_at")
    list_filter = ("farm",)
    search_fields = ("name",)


@admin.register(Flock)
class FlockAdmin(admin.ModelAdmin[Flock]):
    list_display = ("name", "id", "farm", "house", "status", "placement_date", "initial_count")
    list_filter = ("farm", "status")
    search_fields = ("name", "breed")
    readonly_fields = ("version",)


@admin.register(WorkerAssignment)
class WorkerAssignmentAdmin(admin.ModelAdmin[WorkerAssignment]):
    list_display = ("membership", "flock", "farm")
    list_filter = ("farm",)


@admin.register(EggGrade)
class EggGradeAdmin(admin.ModelAdmin[EggGrade]):
    list_display = ("name", "farm", "grade_type", "kind", "is_saleable", "is_active", "sort_order")
    list_filter = ("farm", "kind", "is_active")


class DailyEntryGradeInline(admin.TabularInline[DailyEntryGrade, DailyEntry]):
    model = DailyEntryGrade
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(DailyEntry)
class DailyEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "farm", "flock", "date", "status", "total_eggs", "mortality_count")
    list_filter = ("farm", "status")
    date_hierarchy = "date"
    inlines = [DailyEntryGradeInline]


@admin.register(EggLot)
class EggLotAdmin(ReadOnlyAdmin):
    list_display = (
        "id",
        "farm",
        "grade",
        "production_date",
        "quantity_produced",
        "quantity_available",
    )
    list_filter = ("farm", "grade")


@admin.register(InventoryMovement)
class InventoryMovementAdmin(ReadOnlyAdmin):
    list_display = ("id", "farm", "lot", "kind", "quantity", "created_at")
    list_filter = ("farm", "kind")


@admin.register(BirdMovement)
class BirdMovementAdmin(ReadOnlyAdmin):
    list_display = ("id", "farm", "flock", "date", "kind", "quantity")
    list_filter = ("farm", "kind")


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ("occurred_at", "farm", "actor_label", "channel", "action", "entity_type")
    list_filter = ("farm", "channel", "action")
    search_fields = ("actor_label", "entity_id")
