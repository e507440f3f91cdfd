"""Careless tools: every query below forgets the store, the way a hurried tool author would.

``Product.all_tenants`` is the plain manager; raw SQL, a related lookup from the store,
``select_related``, ``values``/``aggregate``, queryset ``update``/``delete`` and ``bulk_create``
all go past the scoped manager; so does a REST view published with ``drf_tool``.
"""

from decimal import Decimal
from typing import Literal

from django.db import connection
from django.db.models import Count
from mcp_tools import CallContext, tool
from mcp_tools.contrib.drf import drf_tool
from pydantic import BaseModel

from careless.api import CarelessProducts
from catalog.models import Product, Store


class Seen(BaseModel):
    """The stores whose rows each careless query reached."""

    all: list[int]
    related: list[int]
    select_related: list[int]
    raw: list[int]
    values: list[int]
    aggregate: int


@tool(
    name="careless_read",
    read_only=True,
    task_support="optional",  # a task on the worker when the client asks for one
    description="Reads the products of every store it can reach.",
)
def careless_read(ctx: CallContext) -> Seen:
    ctx.continue_as_task()
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT store_id FROM catalog_product")
        raw = sorted(row[0] for row in cursor.fetchall())
    stocked = Store.objects.filter(products__isnull=False).values_list("pk", flat=True)
    return Seen(
        all=sorted({product.store_id for product in Product.all_tenants.all()}),
        related=sorted(set(stocked)),
        select_related=sorted({p.store.pk for p in Product.all_tenants.select_related("store")}),
        raw=raw,
        values=sorted({row["store_id"] for row in Product.all_tenants.values("store_id")}),
        aggregate=Product.all_tenants.aggregate(n=Count("id"))["n"],
    )


class Changed(BaseModel):
    rows: int


@tool(
    name="careless_write",
    description="Reprices or deletes the products of every store it can reach, or plants one.",
)
def careless_write(
    ctx: CallContext, *, mode: Literal["update", "delete", "bulk_create"], store_id: int = 0
) -> Changed:
    if mode == "update":
        return Changed(rows=Product.all_tenants.update(price=Decimal("0.01")))
    if mode == "delete":
        return Changed(rows=Product.all_tenants.filter(name="victim").delete()[0])
    planted = Product.all_tenants.bulk_create(
        [Product(store_id=store_id, name="planted", price=Decimal("1"))]
    )
    return Changed(rows=len(planted))


drf_tool(
    CarelessProducts,
    "list",
    name="careless_drf_list",
    description="Every product the careless REST view reaches (as GET /careless/products/).",
)
drf_tool(
    CarelessProducts,
    "create",
    name="careless_drf_create",
    description="A product for any store, through the careless REST view.",
)
