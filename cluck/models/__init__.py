"""The farm domain's models. The tenant is the ``Farm``; every tenant-owned model has ``farm``.

``Model.objects`` fails closed (``tenancy.scoping``); ``Model.all_tenants`` is the plain default
manager Django's own machinery uses (admin, cascades, validation).
"""

from cluck.models.audit import AuditEvent
from cluck.models.commerce import Customer, LotAllocation, Payment, SalesOrder, SalesOrderLine
from cluck.models.farm import Farm, House, WorkerAssignment
from cluck.models.flocks import BirdMovement, Flock
from cluck.models.production import (
    DailyEntry,
    DailyEntryGrade,
    EggGrade,
    EggLot,
    InventoryMovement,
)

__all__ = [
    "AuditEvent",
    "BirdMovement",
    "Customer",
    "DailyEntry",
    "DailyEntryGrade",
    "EggGrade",
    "EggLot",
    "Farm",
    "Flock",
    "House",
    "InventoryMovement",
    "LotAllocation",
    "Payment",
    "SalesOrder",
    "SalesOrderLine",
    "WorkerAssignment",
]
