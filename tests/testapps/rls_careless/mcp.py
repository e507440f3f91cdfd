"""Careless tools: every query below forgets the tenant, the way a hurried tool author would.

``Customer.all_tenants`` is the farm's plain manager (the one an existing project keeps as
``objects``); raw SQL, related lookups, ``select_related``, ``values``/``aggregate``, queryset
``update``/``delete`` and ``bulk_create`` all go past any Python-side scope.
"""

from __future__ import annotations

from typing import Literal

from django.db import connection
from django.db.models import Count
from pydantic import BaseModel

from cluck.models import Customer, Flock, SalesOrder
from mcp_tools import CallContext, tool
from mcp_tools.contrib.drf import drf_tool
from tests.testapps.rls_careless.views import CarelessCustomersApi, CarelessCustomersSerializer

CARELESS = "deliberately careless tool for the row-level security guards (test app only)"


class Seen(BaseModel):
    """The farms whose rows each careless query reached."""

    all: list[int]
    related: list[int]
    select_related: list[int]
    raw: list[int]
    values: list[int]
    aggregate: int


def careless_read() -> Seen:
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT farm_id FROM cluck_customer")
        raw = sorted(row[0] for row in cursor.fetchall())
    return Seen(
        all=sorted({c.farm_id for c in Customer.all_tenants.all()}),
        # A related lookup through the house: no scope on either side.
        related=sorted(
            set(
                Flock.all_tenants.filter(house__isnull=False).values_list(
                    "house__farm_id", flat=True
                )
            )
        ),
        select_related=sorted(
            {o.customer.farm_id for o in SalesOrder.all_tenants.select_related("customer")}
        ),
        raw=raw,
        values=sorted({row["farm_id"] for row in Customer.all_tenants.values("farm_id")}),
        aggregate=Customer.all_tenants.aggregate(n=Count("id"))["n"],
    )


@tool(
    name="rls_careless_read",
    read_only=True,
    mirrors_no_route=CARELESS,
    description="Reads customers, flocks and orders of every farm it can reach.",
)
def read(ctx: CallContext) -> Seen:
    return careless_read()


class Changed(BaseModel):
    rows: int


@tool(
    name="rls_careless_write",
    mirrors_no_route=CARELESS,
    description="Changes customers of every farm it can reach, or plants one in another farm.",
)
def write(
    ctx: CallContext, *, mode: Literal["update", "delete", "bulk_create"], farm_id: int = 0
) -> Changed:
    if mode == "update":
        return Changed(rows=Customer.all_tenants.update(note="careless"))
    if mode == "delete":
        return Changed(rows=Customer.all_tenants.filter(name="rls-victim").delete()[0])
    planted = Customer.all_tenants.bulk_create(
        [Customer(farm_id=farm_id, name="rls-planted", phone="0")]
    )
    return Changed(rows=len(planted))


@tool(
    name="rls_careless_task_read",
    read_only=True,
    mirrors_no_route=CARELESS,
    task_support="required",
    description="The careless read, run as a task by the engine's worker.",
)
def task_read(ctx: CallContext) -> Seen:
    ctx.continue_as_task()
    ctx.report_progress(1, 2, "halfway")  # the task store, written from a read-only transaction
    return careless_read()


drf_tool(
    CarelessCustomersApi,
    "get",
    name="rls_careless_drf_read",
    description="A REST view whose queryset reads the customers of every farm it can reach.",
    output_serializer=CarelessCustomersSerializer,
)
