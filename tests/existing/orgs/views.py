from typing import Any

from django.db.models import QuerySet
from rest_framework import viewsets

from orgs.models import Membership, Organization
from orgs.serializers import OrganizationSerializer


class OrganizationViewSet(viewsets.ReadOnlyModelViewSet):
    """The organizations the signed-in user belongs to, with their role in each."""

    serializer_class = OrganizationSerializer
    lookup_field = "slug"

    def get_queryset(self) -> QuerySet[Organization]:
        return Organization.objects.for_user(self.request.user).order_by("name")

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        memberships = Membership.objects.filter(user=self.request.user)
        context["roles"] = dict(memberships.values_list("organization_id", "role"))
        return context
