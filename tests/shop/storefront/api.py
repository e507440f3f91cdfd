"""The shop's product API: tenant-scoped, searchable, paged; only staff may add products."""

from decimal import Decimal
from typing import Any

from rest_framework import filters, pagination, permissions, serializers, viewsets
from tenancy import evaluate
from tenancy.drf_authentication import TenancyAuthentication
from tenancy.permissions import IsTenantMember

from catalog.mcp import EDIT_CATALOG
from catalog.models import Product


class ProductSerializer(serializers.ModelSerializer):
    price = serializers.DecimalField(max_digits=10, decimal_places=2, min_value=Decimal("0.01"))

    class Meta:
        model = Product
        fields = ["id", "name", "price"]

    def validate_name(self, value: str) -> str:
        tenant = self.context["request"]._request.tenant
        if Product.objects.for_tenant(tenant).filter(name=value).exists():
            raise serializers.ValidationError("This store already sells it.", code="taken")
        return value


class CatalogStaff(permissions.BasePermission):
    """Every member reads the catalogue; only EditCatalog roles change it."""

    message = "Only the store's staff may change its catalogue."

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return evaluate(EDIT_CATALOG, request._request.actor)


class ProductPages(pagination.PageNumberPagination):
    page_size = 2
    page_size_query_param = "page_size"
    max_page_size = 50


class ProductViewSet(viewsets.ModelViewSet):
    """The products of this store."""

    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantMember, CatalogStaff]
    serializer_class = ProductSerializer
    pagination_class = ProductPages
    filter_backends = [filters.SearchFilter, filters.OrderingFilter]
    search_fields = ["name"]
    ordering_fields = ["name", "price"]
    ordering = ["name"]

    def get_queryset(self) -> Any:
        return Product.objects.for_tenant(self.request._request.tenant)  # type: ignore[attr-defined]

    def perform_create(self, serializer: Any) -> None:
        tenant: Any = self.request._request.tenant  # type: ignore[attr-defined]
        serializer.save(store=tenant.instance)
