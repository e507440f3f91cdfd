"""A careless REST view: its queryset forgets the tenant (published as a ``drf_tool``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from cluck.models import Customer
from tenancy.permissions import IsTenantMember


class CarelessCustomersSerializer(serializers.Serializer[Any]):
    farms = serializers.ListField(child=serializers.IntegerField())
    count = serializers.IntegerField()


class CarelessCustomersApi(APIView):
    permission_classes: list[type[BasePermission]] = [IsTenantMember]

    @extend_schema(exclude=True)  # a test-only route: not in the farm's API schema
    def get(self, request: Request) -> Response:
        customers = Customer.all_tenants.all()  # the tenant forgotten
        farms = sorted({customer.farm_id for customer in customers})
        return Response(
            CarelessCustomersSerializer({"farms": farms, "count": customers.count()}).data
        )
