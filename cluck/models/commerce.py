from __future__ import annotations

from django.db import models
from django.utils import timezone

from cluck.models.base import TenantOwned


class Customer(TenantOwned):
    name = models.CharField(max_length=200)
    phone = models.CharField(max_length=50)
    email = models.EmailField(max_length=254, null=True, blank=True)
    address = models.CharField(max_length=500, null=True, blank=True)
    note = models.CharField(max_length=1000, null=True, blank=True)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        indexes = [models.Index(fields=["farm", "name", "id"], name="cluck_customer_name")]

    def __str__(self) -> str:
        return self.name


class SalesOrder(TenantOwned):
    class Status(models.TextChoices):
        DRAFT = "Draft"
        CONFIRMED = "Confirmed"
        SHIPPED = "Shipped"
        INVOICED = "Invoiced"
        CANCELLED = "Cancelled"
        VOIDED = "Voided"

    customer = models.ForeignKey("cluck.Customer", on_delete=models.PROTECT, related_name="orders")
    reference_number = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    order_date = models.DateField()
    # Snapshot of the farm currency at creation, including its minor unit.
    total_minor = models.BigIntegerField(default=0)
    currency_code = models.CharField(max_length=3)
    currency_minor_unit = models.PositiveSmallIntegerField()
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    confirmed_at = models.DateTimeField(null=True, blank=True)

    class Meta(TenantOwned.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["farm", "reference_number"], name="cluck_order_reference_unique"
            )
        ]
        indexes = [models.Index(fields=["farm", "-order_date", "-id"], name="cluck_order_recent")]

    def __str__(self) -> str:
        return self.reference_number


class SalesOrderLine(models.Model):
    order = models.ForeignKey("cluck.SalesOrder", on_delete=models.CASCADE, related_name="lines")
    grade = models.ForeignKey("cluck.EggGrade", on_delete=models.PROTECT, related_name="+")
    quantity = models.BigIntegerField()
    unit_price_minor = models.BigIntegerField()
    line_total_minor = models.BigIntegerField()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(quantity__gt=0), name="cluck_order_line_qty_positive"
            ),
            models.CheckConstraint(
                condition=models.Q(unit_price_minor__gte=0), name="cluck_order_line_price"
            ),
        ]


class LotAllocation(models.Model):
    line = models.ForeignKey(
        "cluck.SalesOrderLine", on_delete=models.CASCADE, related_name="allocations"
    )
    lot = models.ForeignKey("cluck.EggLot", on_delete=models.PROTECT, related_name="allocations")
    quantity = models.BigIntegerField()


class Payment(TenantOwned):
    class Method(models.TextChoices):
        CASH = "Cash"
        CHECK = "Check"
        CARD = "Card"
        BANK_TRANSFER = "BankTransfer"
        MOBILE_PAYMENT = "MobilePayment"
        OTHER = "Other"

    sales_order = models.ForeignKey(
        "cluck.SalesOrder", on_delete=models.PROTECT, related_name="payments"
    )
    customer = models.ForeignKey(
        "cluck.Customer", on_delete=models.PROTECT, related_name="payments"
    )
    payment_date = models.DateField()
    amount_minor = models.BigIntegerField()
    currency_code = models.CharField(max_length=3)
    currency_minor_unit = models.PositiveSmallIntegerField()
    method = models.CharField(max_length=16, choices=Method.choices)
    reference_number = models.CharField(max_length=50, null=True, blank=True)
    note = models.CharField(max_length=500, null=True, blank=True)
    voided = models.BooleanField(default=False)
    void_reason = models.CharField(max_length=500, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(TenantOwned.Meta):
        constraints = [
            models.CheckConstraint(
                condition=models.Q(amount_minor__gt=0), name="cluck_payment_positive"
            )
        ]
        indexes = [models.Index(fields=["farm", "customer"], name="cluck_payment_customer")]
