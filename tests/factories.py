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


# --- production (farms with default grades, person callers) ------------------------------------


def provisioned_farm(**overrides: Any) -> Farm:
    """A farm made by the real ``farm_create`` service: it has the default grade set."""
    from cluck.services.farms import farm_create

    n = next(_provisioned_numbers)
    fields: dict[str, Any] = {
        "code": f"prov-{n}",
        "name": f"Provisioned farm {n}",
        "currency_code": "PHP",
        "currency_minor_unit": 2,
        "time_zone": "Asia/Manila",
        "label": "test:provisioned_farm",
    }
    fields.update(overrides)
    return farm_create(**fields)


_provisioned_numbers = iter(range(1, 10**9))


def grade_named(farm: Farm, name: str) -> EggGrade:
    grade: EggGrade = EggGrade.objects.for_tenant(farm).get(name=name)
    return grade


def person_caller(
    *, farm: Farm, roles: list[str], assigned_flocks: list[Flock] | None = None
) -> Any:
    """A ``Caller`` for a new member of ``farm``, resolved exactly as the middleware does:
    effective role from ``roles``, flock scope from the real resolver and assignment rows."""
    from cluck.caller import Caller
    from cluck.models import WorkerAssignment
    from cluck.scope import resolve_flock_scope
    from tenancy import ActorContext, RowScope, TenantContext, effective_role

    membership = MembershipFactory.create(tenant=farm, roles=roles, user__password=None)
    for flock in assigned_flocks or []:
        WorkerAssignment.all_tenants.create(farm=farm, membership=membership, flock=flock)
    tenant = TenantContext()
    tenant.resolve(farm)
    actor = ActorContext()
    actor.resolve(
        user=membership.user,
        membership_id=membership.pk,
        roles=tuple(roles),
        role=effective_role(roles),
    )
    unrestricted, flock_ids = resolve_flock_scope(tenant=tenant, actor=actor)
    scope = RowScope()
    scope.resolve(unrestricted=unrestricted, row_ids=flock_ids)
    return Caller(tenant=tenant, actor=actor, scope=scope, channel="http")


def token_client_for(membership: Membership) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_for(membership)}")
    return client
