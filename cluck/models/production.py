from __future__ import annotations

from django.db import models
from django.utils import timezone

from cluck.models.base import TenantOwned


class EggGrade(TenantOwned):
    class GradeType(models.TextChoices):
        SIZE = "Size"
        QUALITY = "Quality"
        CUSTOM = "Custom"

    class Kind(models.TextChoices):
        """How a daily entry feeds the grade: graded lines (Manual) or a counter."""

        MANUAL = "Manual"
        CRACKED = "Cracked"
        DIRTY = "Dirty"

    name = models.CharField(max_length=50)
    grade_type = models.CharField(max_length=16, choices=GradeType.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MANUAL)
    sort_order = models.PositiveSmallIntegerField(default=0)
    is_saleable = models.BooleanField(default=True)
    is_active = models.BooleanField(default=True)
    # Default list price per egg, in the farm's minor units.
    unit_price_minor = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        constraints = [
            models.UniqueConstraint(fields=["farm", "name"], name="cluck_grade_name_unique"),
            models.UniqueConstraint(
                fields=["farm", "kind"],
                condition=~models.Q(kind="Manual"),
                name="cluck_grade_one_counter_kind",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class DailyEntry(TenantOwned):
    class Status(models.TextChoices):
        DRAFT = "Draft"
        SUBMITTED = "Submitted"
        LOCKED = "Locked"
        MANAGER_ADJUSTED = "ManagerAdjusted"
        VOIDED = "Voided"

    house = models.ForeignKey("cluck.House", on_delete=models.PROTECT, related_name="+")
    flock = models.ForeignKey("cluck.Flock", on_delete=models.PROTECT, related_name="entries")
    date = models.DateField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    total_eggs = models.BigIntegerField(default=0)
    cracked_eggs = models.BigIntegerField(default=0)
    dirty_eggs = models.BigIntegerField(default=0)
    discarded_eggs = models.BigIntegerField(default=0)
    mortality_count = models.BigIntegerField(default=0)
    cracked_grade = models.ForeignKey(
        "cluck.EggGrade", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    dirty_grade = models.ForeignKey(
        "cluck.EggGrade", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta(TenantOwned.Meta):
        constraints = [
            # One live entry per flock/house per day; a voided entry vacates the key.
            models.UniqueConstraint(
                fields=["farm", "house", "flock", "date"],
                condition=~models.Q(status="Voided"),
                name="cluck_daily_entry_natural_key",
            )
        ]
        indexes = [models.Index(fields=["farm", "date", "id"], name="cluck_entry_date")]

    def __str__(self) -> str:
        return f"{self.flock_id}@{self.date} ({self.status})"

    @property
    def sellable_eggs(self) -> int:
        return self.total_eggs - self.cracked_eggs - self.dirty_eggs - self.discarded_eggs


class DailyEntryGrade(models.Model):
    entry = models.ForeignKey("cluck.DailyEntry", on_delete=models.CASCADE, related_name="lines")
    grade = models.ForeignKey("cluck.EggGrade", on_delete=models.PROTECT, related_name="+")
    quantity = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["entry", "grade"], name="cluck_entry_grade_unique"),
            models.CheckConstraint(
                condition=models.Q(quantity__gt=0), name="cluck_entry_grade_positive"
            ),
        ]


class EggLot(TenantOwned):
    """Stock: created on submit, one per grade line (and per counter that resolved to a grade)."""

    flock = models.ForeignKey("cluck.Flock", on_delete=models.PROTECT, related_name="lots")
    daily_entry = models.ForeignKey(
        "cluck.DailyEntry", on_delete=models.PROTECT, related_name="lots"
    )
    grade = models.ForeignKey("cluck.EggGrade", on_delete=models.PROTECT, related_name="lots")
    production_date = models.DateField()
    quantity_produced = models.BigIntegerField()
    quantity_available = models.BigIntegerField()
    restricted_until = models.DateField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(quantity_available__gte=0)
                & models.Q(quantity_available__lte=models.F("quantity_produced")),
                name="cluck_lot_available_in_range",
            )
        ]
        indexes = [
            models.Index(fields=["farm", "grade", "production_date", "id"], name="cluck_lot_fifo")
        ]


class InventoryMovement(TenantOwned):
    """Every change to a lot's availability; cached available always equals Σ movements."""

    class Kind(models.TextChoices):
        PRODUCTION = "Production"
        SALE = "Sale"
        ADJUSTMENT = "Adjustment"

    lot = models.ForeignKey("cluck.EggLot", on_delete=models.CASCADE, related_name="movements")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    quantity = models.BigIntegerField()
    sales_order = models.ForeignKey(
        "cluck.SalesOrder", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
