"""The shop's MCP tools, discovered at start-up like admin.py."""

from decimal import Decimal
from typing import Annotated

from mcp_tools import CallContext, ToolError, tool
from pydantic import BaseModel, Field
from tenancy import Policy

from catalog.models import Product

# Who may change the catalogue: the default roles are ReadOnly < Member < Admin.
EDIT_CATALOG = Policy("EditCatalog", {"Member", "Admin"})


class ProductOut(BaseModel):
    id: int
    name: str
    price: str = Field(description='Decimal string, e.g. "4.50".')


class ProductList(BaseModel):
    products: list[ProductOut]


class ProductAdded(BaseModel):
    product: ProductOut


def _out(product: Product) -> ProductOut:
    return ProductOut(id=product.pk, name=product.name, price=str(product.price))


@tool(
    name="shop_list_products",
    read_only=True,
    description="The products of this store, by name (at most 200).",
)
def list_products(ctx: CallContext) -> ProductList:
    products = Product.objects.for_tenant(ctx.tenant).order_by("name")[:200]
    return ProductList(products=[_out(product) for product in products])


@tool(
    name="shop_add_product",
    policy=EDIT_CATALOG,
    description="Add a product to this store. Reuse an idempotencyKey only to retry a call.",
)
def add_product(
    ctx: CallContext,
    *,
    name: Annotated[str, Field(min_length=1, max_length=100)],
    price: Annotated[Decimal, Field(gt=0, max_digits=10, decimal_places=2)],
) -> ProductAdded:
    if Product.objects.for_tenant(ctx.tenant).filter(name=name).exists():
        raise ToolError("Product.NameTaken", f"This store already sells {name!r}.")
    product = Product.objects.create(store=ctx.tenant.instance, name=name, price=price)
    return ProductAdded(product=_out(product))
