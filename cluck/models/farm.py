from __future__ import annotations

import datetime as dt

from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models
from django.utils import timezone

from cluck.models.base import TenantOwned

FARM_CODE_VALIDATOR = RegexValidator(
    r"^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$",
    "A farm code is 1–40 lower-case letters, digits or inner hyphens.",
)


class Farm(models.Model):
    """The tenant."""

    name = models.CharField(max_length=120)
    code = models.CharField(max_length=40, unique=True, validators=[FARM_CODE_VALIDATOR])
    currency_code = models.CharField(max_length=3, default="USD")
    currency_minor_unit = models.PositiveSmallIntegerField(
        default=2, validators=[MaxValueValidator(4)]
    )
    time_zone = models.CharField(max_length=64, default="UTC")
    # The farm's grace for late entry: a production day, an order or a payment may be dated
    # at most this many days before the farm's today (never after it).
    late_entry_days = models.PositiveSmallIntegerField(
        default=366,
        validators=[MaxValueValidator(3660)],
        help_text="How many days back a production day, an order or a payment may be dated.",
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.name} ({self.code})"

    def today(self) -> dt.date:
        """The farm-local calendar date now (no UTC slack)."""
        from zoneinfo import ZoneInfo

        return timezone.now().astimezone(ZoneInfo(self.time_zone)).date()

    def earliest_entry_date(self, today: dt.date) -> dt.date:
        """The oldest business date the farm still accepts on ``today`` (its late-entry
        grace); production days, order dates and payment dates lie in [this, today]."""
        return today - dt.timedelta(days=self.late_entry_days)


class House(TenantOwned):
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        constraints = [
            models.UniqueConstraint(fields=["farm", "name"], name="cluck_house_name_unique")
        ]

    def __str__(self) -> str:
        return self.name


class WorkerAssignment(TenantOwned):
    """A Worker's flock assignment; ``flock`` null means farm-wide."""

    membership = models.ForeignKey(
        "tenancy.Membership", on_delete=models.CASCADE, related_name="flock_assignments"
    )
    flock = models.ForeignKey(
        "cluck.Flock", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(TenantOwned.Meta):
        constraints = [
            models.UniqueConstraint(fields=["membership", "flock"], name="cluck_assignment_unique")
        ]
