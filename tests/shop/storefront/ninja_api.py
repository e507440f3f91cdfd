"""The shop's product API again, in django-ninja: the same models, auth and rules as api.py.

Every member reads the catalogue (filtered, paged); only EditCatalog roles add products. Auth is
the toolkit's bearer, as the DRF API's: ``TenancyAuth`` reads what TenancyMiddleware resolved.
"""

from decimal import Decimal
from typing import Annotated, Any

from django.shortcuts import get_object_or_404
from mcp_tools.ninja import TenancyAuth
from ninja import Field, FilterLookup, FilterSchema, NinjaAPI, Query, Schema
from ninja.errors import ValidationError
from ninja.pagination import PageNumberPagination, paginate
from ninja.responses import Status

from catalog.mcp import EDIT_CATALOG
from catalog.models import Product

api = NinjaAPI(urls_namespace="shop-ninja", auth=TenancyAuth())
STAFF_ONLY = TenancyAuth(EDIT_CATALOG, message="Only the store's staff may change its catalogue.")


class ProductOut(Schema):
    id: int
    name: str
    price: Decimal


class ProductIn(Schema):
    name: str = Field(min_length=1, max_length=100, pattern=r"\S")
    price: Decimal = Field(ge=Decimal("0.01"), max_digits=10, decimal_places=2)


class ProductFilter(FilterSchema):
    name: Annotated[str | None, FilterLookup("name__icontains")] = None
    min_price: Annotated[Decimal | None, FilterLookup("price__gte")] = None
    max_price: Annotated[Decimal | None, FilterLookup("price__lte")] = None


class ProductPages(PageNumberPagination):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(page_size=2, max_page_size=50, **kwargs)


@api.get("/products", response=list[ProductOut], operation_id="list_products")
@paginate(ProductPages)
def list_products(request: Any, filters: Query[ProductFilter]) -> Any:
    """The products of this store, filtered by name and price, two to a page by default."""
    return filters.filter(Product.objects.for_tenant(request.tenant)).order_by("name")


@api.get("/products/{product_id}", response=ProductOut, operation_id="get_product")
def get_product(request: Any, product_id: int) -> Any:
    """One product of this store."""
    return get_object_or_404(Product.objects.for_tenant(request.tenant), pk=product_id)


@api.post(
    "/products",
    response={201: ProductOut},
    auth=STAFF_ONLY,
    operation_id="create_product",
)
def create_product(request: Any, payload: ProductIn) -> Any:
    """Add a product to this store. Staff only."""
    tenant = request.tenant
    if Product.objects.for_tenant(tenant).filter(name=payload.name).exists():
        taken = {"loc": ("body", "payload", "name"), "msg": "This store already sells it."}
        raise ValidationError([{**taken, "type": "taken"}])
    product = Product.all_tenants.create(store=tenant.instance, **payload.model_dump())
    return Status(201, product)
