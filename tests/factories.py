"""Shared builders (factory-boy). Tenant-owned rows go through ``all_tenants`` on purpose."""

from __future__ import annotations

import datetime as dt
from typing import Any

import factory
from django.contrib.auth import get_user_model

from cluck.models import Farm, Flock, House
from tenancy.models import Membership
from tenancy.tokens import issue_token

DEFAULT_PASSWORD = "correct horse battery staple"


class FarmFactory(factory.django.DjangoModelFactory):
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


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    tenant = factory.SubFactory(FarmFactory)
    roles = factory.LazyFunction(lambda: ["Admin"])


class HouseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = House

    farm = factory.SubFactory(FarmFactory)
    name = factory.Sequence(lambda n: f"House {n}")


class FlockFactory(factory.django.DjangoModelFactory):
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
