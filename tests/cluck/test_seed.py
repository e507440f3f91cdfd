"""``manage.py seed_demo`` creates what issue 2 lists, and a second run changes nothing."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from cluck.models import (
    AuditEvent,
    BirdMovement,
    DailyEntry,
    EggGrade,
    EggLot,
    Farm,
    Flock,
    House,
    InventoryMovement,
    Payment,
    SalesOrder,
    WorkerAssignment,
)
from cluck.selectors.stock import stock_summary
from tenancy.models import Membership
from tests.mutations import mutation

pytestmark = pytest.mark.django_db

TABLES = (
    Farm.objects,
    House.all_tenants,
    Flock.all_tenants,
    EggGrade.all_tenants,
    DailyEntry.all_tenants,
    EggLot.all_tenants,
    InventoryMovement.all_tenants,
    BirdMovement.all_tenants,
    AuditEvent.all_tenants,
    WorkerAssignment.all_tenants,
    Membership.objects,
    SalesOrder.all_tenants,
    Payment.all_tenants,
)


def snapshot() -> dict[str, Any]:
    return {
        manager.model.__name__: sorted(manager.values_list("pk", flat=True)) for manager in TABLES
    } | {"User": sorted(get_user_model().objects.values_list("pk", "password"))}


@pytest.fixture
def cheap_passwords(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@mutation(
    "cluck/demo/production.py",
    find="        if day not in submitted:\n            _seed_day(",
    replace="        if True:\n            _seed_day(",
)
@mutation(
    "cluck/demo/production.py",
    find=".filter(house=house, name=plan.name, status=plan.status)",
    replace=".filter(name=plan.name)",
)
def test_seed_demo_creates_the_demo_farms_and_a_second_run_changes_nothing(
    cheap_passwords: None,
) -> None:
    """Mutation: drop the "already submitted" skip in ``_seed_entries`` → red (the second run
    hits ``DailyEntry.Immutable``); key flocks by name only → red (the depleted namesake is
    never created)."""
    out = StringIO()
    call_command("seed_demo", stdout=out)
    first = snapshot()
    call_command("seed_demo", stdout=StringIO())

    assert snapshot() == first
    assert "cluck-demo-password" in out.getvalue()

    sunrise = Farm.objects.get(code="sunrise")
    assert (sunrise.name, sunrise.currency_code, sunrise.currency_minor_unit) == (
        "Sunrise Layers",
        "PHP",
        2,
    )
    assert sunrise.time_zone == "Asia/Manila"
    flocks = sorted(Flock.all_tenants.filter(farm=sunrise).values_list("name", "status"), key=str)
    assert flocks == sorted(
        [
            ("House 1 White", "Active"),
            ("House 2 Brown", "Active"),
            ("House 2 Brown", "Depleted"),
            ("House 3 Lohmann Trial", "Archived"),
        ],
        key=str,
    )
    depleted = Flock.all_tenants.get(farm=sunrise, status="Depleted")
    assert depleted.depleted_on is not None and (sunrise.today() - depleted.depleted_on).days >= 21
    assert set(EggGrade.all_tenants.filter(farm=sunrise).values_list("name", flat=True)) >= {
        "Small",
        "Medium",
        "Large",
        "Jumbo",
        "Seconds",
        "Cracked",
        "Dirty",
        "Soft Shell",
        "Discarded",
        "Internal Use",
    }
    for name in ("House 1 White", "House 2 Brown"):
        flock = Flock.all_tenants.get(farm=sunrise, name=name, status="Active")
        days = DailyEntry.all_tenants.filter(flock=flock, status="Submitted")
        assert days.count() == 14, name
    assert not DailyEntry.all_tenants.filter(farm=sunrise).exclude(status="Submitted").exists()

    roles = {
        m.user.email: m.roles
        for m in Membership.objects.filter(tenant=sunrise).select_related("user")
    }
    assert roles == {
        "owner@sunrise.example": ["Admin"],
        "manager@sunrise.example": ["Manager"],
        "sales@sunrise.example": ["Sales"],
        "worker@sunrise.example": [],
        "readonly@sunrise.example": ["ReadOnly"],
    }
    worker = Membership.objects.get(tenant=sunrise, user__email="worker@sunrise.example")
    assigned = WorkerAssignment.all_tenants.filter(membership=worker)
    assert [(a.flock.name, a.flock.status) for a in assigned] == [("House 1 White", "Active")]
    owner = get_user_model().objects.get(username="owner@sunrise.example")
    assert owner.check_password("cluck-demo-password")

    from cluck.caller import Caller

    stock = stock_summary(caller=Caller.system(sunrise, label="test"))
    assert sum(line.available for line in stock.lines) > 0
    assert SalesOrder.all_tenants.filter(farm=sunrise, status="Confirmed").exists()
    assert set(AuditEvent.all_tenants.values_list("channel", flat=True)) == {"cli"}

    hillside = Farm.objects.get(code="hillside")
    assert (hillside.currency_code, hillside.currency_minor_unit, hillside.time_zone) == (
        "JPY",
        0,
        "Asia/Tokyo",
    )
    assert list(Flock.all_tenants.filter(farm=hillside).values_list("name", flat=True)) == [
        "Hill A"
    ]
    assert list(Membership.objects.filter(tenant=hillside).values_list("user__email", "roles")) == [
        ("owner@hillside.example", ["Admin"])
    ]
