"""A careless REST view: its queryset forgets the store (published by ``mcp.py`` with
``drf_tool``)."""

from rest_framework import serializers, viewsets
from tenancy.drf_authentication import TenancyAuthentication
from tenancy.permissions import IsTenantMember

from catalog.models import Product


class CarelessProductSerializer(serializers.ModelSerializer):
    class Meta:
        model = Product
        fields = ["id", "store", "name", "price"]


class CarelessProducts(viewsets.ModelViewSet):
    """Every store's products, and a product for any store."""

    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantMember]
    serializer_class = CarelessProductSerializer
    queryset = Product.all_tenants.order_by("pk")
