"""Shared builders (factory-boy). Tenant-owned rows go through ``all_tenants`` on purpose."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import factory
from django.contrib.auth import get_user_model

from cluck.models import (
    Customer,
    DailyEntry,
    EggGrade,
    EggLot,
    Farm,
    Flock,
    House,
    InventoryMovement,
)
from tenancy.models import Membership
from tenancy.tokens import issue_token

DEFAULT_PASSWORD = "correct horse battery staple"


class FarmFactory(factory.django.DjangoModelFactory[Farm]):
    class Meta:
        model = Farm

    name = factory.Sequence(lambda n: f"Farm {n}")
    code = factory.Sequence(lambda n: f"farm-{n}")
    currency_code = "PHP"
    currency_minor_unit = 2
    time_zone = "Asia/Manila"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()

    email = factory.Sequence(lambda n: f"user{n}@example.test")
    username = factory.LazyAttribute(lambda o: o.email)
    password = factory.PostGenerationMethodCall("set_password", DEFAULT_PASSWORD)

    @classmethod
    def _after_postgeneration(cls, instance: Any, create: bool, results: Any = None) -> None:
        if create and results:
            instance.save(update_fields=["password"])


class MembershipFactory(factory.django.DjangoModelFactory[Membership]):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    tenant = factory.SubFactory(FarmFactory)
    roles = factory.LazyFunction(lambda: ["Admin"])


class HouseFactory(factory.django.DjangoModelFactory[House]):
    class Meta:
        model = House

    farm = factory.SubFactory(FarmFactory)
    name = factory.Sequence(lambda n: f"House {n}")


class FlockFactory(factory.django.DjangoModelFactory[Flock]):
    class Meta:
        model = Flock

    farm = factory.SubFactory(FarmFactory)
    house = factory.LazyAttribute(lambda o: HouseFactory(farm=o.farm))
    name = factory.Sequence(lambda n: f"Flock {n}")
    breed = "Hy-Line Brown"
    placement_date = factory.LazyFunction(lambda: dt.date(2026, 1, 5))
    initial_count = 1000


def bearer_for(membership: Membership, name: str = "test") -> str:
    """A raw personal access token for ``membership``."""
    _, raw = issue_token(membership=membership, name=name)
    return raw


# --- commerce (customers, orders, stock for selling) -------------------------------------------


class CustomerFactory(factory.django.DjangoModelFactory[Customer]):
    class Meta:
        model = Customer

    farm = factory.SubFactory(FarmFactory)
    name = factory.Sequence(lambda n: f"Customer {n:04d}")
    phone = factory.Sequence(lambda n: f"+63 917 {n:07d}")


class SaleGradeFactory(factory.django.DjangoModelFactory[EggGrade]):
    """A saleable Manual grade; names never collide with a farm's provisioned defaults."""

    class Meta:
        model = EggGrade

    farm = factory.SubFactory(FarmFactory)
    name = factory.Sequence(lambda n: f"Sale grade {n}")
    grade_type = EggGrade.GradeType.SIZE
    kind = EggGrade.Kind.MANUAL
    unit_price_minor = 850


def sellable_lot(
    *,
    grade: EggGrade,
    quantity: int,
    production_date: dt.date,
    restricted_until: dt.date | None = None,
    flock: Flock | None = None,
) -> EggLot:
    """A submitted day's lot of ``grade`` with its ``Production`` movement (stock to sell)."""
    farm = grade.farm
    flock = flock or FlockFactory.create(farm=farm)
    entry, _ = DailyEntry.all_tenants.get_or_create(
        farm=farm,
        house=flock.house,
        flock=flock,
        date=production_date,
        defaults={"status": DailyEntry.Status.SUBMITTED, "total_eggs": quantity},
    )
    lot = EggLot.all_tenants.create(
        farm=farm,
        flock=flock,
        daily_entry=entry,
        grade=grade,
        production_date=production_date,
        quantity_produced=quantity,
        quantity_available=quantity,
        restricted_until=restricted_until,
    )
    InventoryMovement.all_tenants.create(
        farm=farm, lot=lot, kind=InventoryMovement.Kind.PRODUCTION, quantity=quantity
    )
    return lot


def write_headers() -> dict[str, str]:
    """Headers for a REST write: a fresh ``Idempotency-Key`` (writes without one are refused)."""
    return {"HTTP_IDEMPOTENCY_KEY": str(uuid.uuid4())}


def token_client(*, farm: Farm, roles: list[str]) -> Any:
    """An ``APIClient`` with a bearer token of a new member of ``farm`` holding ``roles``.

    The user gets no usable password: hashing one costs ~0.5 s here and bearer tests never log in.
    """
    from rest_framework.test import APIClient

    membership = MembershipFactory.create(tenant=farm, roles=roles, user__password=None)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(membership)}")
    return client
