from __future__ import annotations

import datetime as dt

from django.db import models
from django.utils import timezone

from cluck.models.base import TenantOwned


class Flock(TenantOwned):
    class Status(models.TextChoices):
        ACTIVE = "Active"
        DEPLETED = "Depleted"
        ARCHIVED = "Archived"

    house = models.ForeignKey("cluck.House", on_delete=models.PROTECT, related_name="flocks")
    # Duplicate names are legal (a house gets a new flock with the same name); ids break ties.
    name = models.CharField(max_length=200)
    breed = models.CharField(max_length=100)
    placement_date = models.DateField()
    initial_count = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    depleted_on = models.DateField(null=True, blank=True)
    archived_on = models.DateField(null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        indexes = [models.Index(fields=["farm", "name", "id"], name="cluck_flock_name")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(initial_count__gt=0), name="cluck_flock_count_positive"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} #{self.pk}"

    def can_record_production_on(self, date: dt.date) -> bool:
        """Active → always; Depleted → only up to its depletion date; Archived → never."""
        if self.status == self.Status.ACTIVE:
            return True
        if self.status == self.Status.DEPLETED:
            return self.depleted_on is not None and date <= self.depleted_on
        return False


class BirdMovement(TenantOwned):
    """Ledger of birds leaving a flock (mortality, culls, adjustments). Alive = initial − Σ."""

    class Kind(models.TextChoices):
        MORTALITY = "Mortality"
        CULL = "Cull"
        ADJUSTMENT = "Adjustment"

    flock = models.ForeignKey("cluck.Flock", on_delete=models.CASCADE, related_name="movements")
    date = models.DateField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    quantity = models.IntegerField()
    daily_entry = models.ForeignKey(
        "cluck.DailyEntry", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
